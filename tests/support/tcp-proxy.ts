import net from 'node:net'

/**
 * A TCP proxy in front of a server (PostgreSQL) that a test can take down and bring back: `down()`
 * cuts every open connection and stops listening, so new connections are refused as if the server
 * were restarting; `up()` listens on the same port again.
 */
export interface TcpProxy {
  port: number
  down(): Promise<void>
  up(): Promise<void>
  close(): Promise<void>
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream).pipe(client)
  })
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve((server.address() as net.AddressInfo).port)
      })
    })
  const port = await listen(0)
  const down = async () => {
    const closed = new Promise<void>((r) => server.close(() => r()))
    for (const s of sockets) s.destroy()
    await closed
  }
  return {
    port,
    down,
    up: async () => {
      await listen(port)
    },
    close: async () => {
      if (server.listening) await down()
    },
  }
}
