import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ServedRoute {
  url: string
  close(): Promise<void>
}

/**
 * Serves a Next route handler (`(req: Request) => Response`) over real HTTP on 127.0.0.1, the way
 * `next start` hands it requests: the Node request's headers become the Request's headers (including
 * whatever a diagnostics-channel subscriber wrote into them), and `X-Forwarded-For` is filled with
 * the socket address only when the client sent none, as Next's base server does (`??=`).
 */
export async function serveRoute(handler: (req: Request) => Promise<Response>): Promise<ServedRoute> {
  const server = http.createServer(async (req, res) => {
    req.headers['x-forwarded-for'] ??= req.socket.remoteAddress
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v)
    }
    const body = chunks.length && req.method !== 'GET' && req.method !== 'HEAD' ? Buffer.concat(chunks) : undefined
    try {
      const out = await handler(
        new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body }),
      )
      res.writeHead(out.status, Object.fromEntries(out.headers))
      res.end(Buffer.from(await out.arrayBuffer()))
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(String(err))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
