import diagnostics from 'node:diagnostics_channel'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import ipaddr from 'ipaddr.js'
import proxyaddr from 'proxy-addr'
import { log } from '@/lib/server/log'

/**
 * Where a request came from, for the sign-in limits.
 *
 * Next's route handlers and server actions see headers only, never the socket. Next itself fills
 * `X-Forwarded-For` with the socket address, but only when the client sent none (`??=`), so a client
 * that sends its own header hides its address. Parley therefore records the socket address itself:
 * {@link installPeerCapture} (called from instrumentation.ts in the Node server) subscribes to Node's
 * `http.server.request.start` diagnostics channel, which fires for every request before any handler
 * runs, and writes `socket.remoteAddress` into the {@link PEER_HEADER} request header, overwriting
 * whatever a client put there.
 *
 * Forwarded headers count only when that peer is a configured proxy (`PARLEY_TRUSTED_PROXIES`):
 * then the address is the rightmost `X-Forwarded-For` entry that is not itself a trusted proxy, or
 * `X-Real-IP` when the forwarded chain holds trusted proxies only. Trusting none (the default) means
 * the socket address is the client.
 */
export const PEER_HEADER = 'x-parley-peer'

const CAPTURE = Symbol.for('parley.peerCapture')
const g = globalThis as unknown as { [CAPTURE]?: boolean }

/** Records every HTTP request's socket address in {@link PEER_HEADER}. Idempotent. */
export function installPeerCapture(): void {
  if (g[CAPTURE]) return
  diagnostics.subscribe('http.server.request.start', (message) => {
    const { request, socket } = message as { request: IncomingMessage; socket: Socket }
    request.headers[PEER_HEADER] = socket.remoteAddress ?? ''
  })
  g[CAPTURE] = true
}

/** `PARLEY_TRUSTED_PROXIES`: comma- or space-separated IPs and CIDRs (or proxy-addr's `loopback`, `uniquelocal`, `linklocal`). */
export function trustedProxies(raw = process.env.PARLEY_TRUSTED_PROXIES ?? ''): string[] {
  return raw
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean)
}

const compiled = new Map<string, (addr: string, i: number) => boolean>()
function trustFn(list: string[]): (addr: string, i: number) => boolean {
  const key = list.join(',')
  let fn = compiled.get(key)
  if (!fn) {
    try {
      fn = list.length ? proxyaddr.compile(list) : () => false
    } catch (err) {
      log().error({ err }, 'PARLEY_TRUSTED_PROXIES is invalid; trusting no proxy')
      fn = () => false
    }
    compiled.set(key, fn)
  }
  return fn
}

/** IPv4-mapped IPv6 becomes IPv4; anything unparsable is kept as written. */
function normalize(addr: string): string {
  const a = addr.trim()
  return ipaddr.isValid(a) ? ipaddr.process(a).toString() : a
}

/** The rightmost address of a comma-separated forwarded list. */
function lastHop(value: string | null): string | null {
  const hops = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  return hops.at(-1) ?? null
}

/**
 * The client's address for these request headers (see the module comment). Outside an HTTP request
 * recorded by {@link installPeerCapture} (a call with hand-made headers), the rightmost
 * `X-Forwarded-For` entry stands in for the socket, which is what Next writes there itself.
 */
export function clientAddress(headers: Headers, proxies: string[] = trustedProxies()): string {
  const recorded = g[CAPTURE] ? headers.get(PEER_HEADER) : null
  const peer = normalize(recorded || lastHop(headers.get('x-forwarded-for')) || 'unknown')
  const trust = trustFn(proxies)
  if (!ipaddr.isValid(peer) || !trust(peer, 0)) return peer
  const forwarded = headers.get('x-forwarded-for')
  const viaForwarded = forwarded
    ? proxyaddr({ socket: { remoteAddress: peer }, headers: { 'x-forwarded-for': forwarded } } as never, trust)
    : peer
  const address = normalize(viaForwarded)
  const realIp = headers.get('x-real-ip')?.trim()
  // Only trusted proxies in the chain (e.g. a proxy that sends X-Real-IP and no X-Forwarded-For, which
  // Next then fills with the proxy's own address): take the proxy's X-Real-IP.
  if (realIp && ipaddr.isValid(realIp) && ipaddr.isValid(address) && trust(address, 1)) return normalize(realIp)
  return address
}

/**
 * The key a client's attempts are counted under: the address itself for IPv4, its /64 network for
 * IPv6 (one machine commonly holds a whole /64, so single IPv6 addresses would be free to rotate).
 */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address
  const parsed = ipaddr.process(address)
  if (parsed.kind() === 'ipv4') return parsed.toString()
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4)
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`
}

/** The request header better-auth reads the client address from (see auth.ts). */
export const CLIENT_ADDRESS_HEADER = 'x-parley-client-address'

/** A copy of these headers with {@link CLIENT_ADDRESS_HEADER} set by Parley, whatever the client sent in it. */
export function withClientAddress(headers: Headers): Headers {
  const out = new Headers(headers)
  out.set(CLIENT_ADDRESS_HEADER, clientAddress(headers))
  return out
}
