/**
 * Which network addresses a *restricted* connection (one whose address a non-admin chose) may reach:
 * public unicast addresses only, so nobody can use Parley to probe or call services inside its
 * network (loopback, RFC 1918, carrier-grade NAT, link-local and cloud metadata, unique local,
 * unspecified, multicast, reserved …). Addresses are classified with ipaddr.js after the WHATWG URL
 * parser has normalised the host (`http://2130706433/` and `http://0x7f.1/` are 127.0.0.1), and
 * IPv4-mapped IPv6 (`::ffff:127.0.0.1`) counts as the IPv4 address it carries. An allow-list names
 * hosts (exact names), addresses or CIDR ranges that are reachable anyway.
 *
 * The check runs twice: when the URL is saved (a clear error at once) and in the HTTP transport on
 * the address actually connected to (see `guardedLookup`), so a name that resolves to something
 * else later (DNS rebinding) is refused too.
 */
import dns from 'node:dns'
import net from 'node:net'
import ipaddr from 'ipaddr.js'
import { crossCopy } from '../cross-copy'

/** A connection to an address the policy refuses. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError'
}
crossCopy(BlockedAddressError, 'BlockedAddressError')

/** Returns why `address` (reached for `hostname`) is refused, or undefined when it may be reached. */
export type AddressGuard = (hostname: string, address: string) => string | undefined

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address (RFC 1918)',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  linkLocal: 'a link-local address (169.254.0.0/16, fe80::/10; cloud metadata lives there)',
  uniqueLocal: 'a unique local address (fc00::/7)',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number]

export type AllowList = { hosts: Set<string>; ranges: Range[] }

/** A host name as compared: lower case, without IPv6 brackets or a trailing dot. */
export function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
}

/**
 * The allow-list from its setting: entries separated by commas or spaces, each a host name
 * (`vllm.lab.internal`), an address (`10.0.0.5`, `::1`) or a CIDR range (`10.1.0.0/16`).
 */
export function parseAllowList(value: string | undefined): AllowList {
  const list: AllowList = { hosts: new Set(), ranges: [] }
  for (const raw of (value ?? '').split(/[\s,]+/)) {
    const entry = normalHost(raw)
    if (!entry) continue
    if (ipaddr.isValidCIDR(entry)) {
      const [ip, bits] = ipaddr.parseCIDR(entry)
      list.ranges.push([ip, bits])
    } else if (ipaddr.isValid(entry)) {
      const ip = ipaddr.process(entry)
      list.ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128])
    } else list.hosts.add(entry)
  }
  return list
}

/** Why an address is not public unicast (the range's name), or undefined when it is. */
export function nonPublicRange(address: string): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6
  try {
    ip = ipaddr.process(normalHost(address)) // IPv4-mapped IPv6 becomes the IPv4 address
  } catch {
    return 'invalid'
  }
  const range = ip.range()
  return range === 'unicast' ? undefined : range
}

/** The guard for restricted connections under an allow-list. */
export function restrictedGuard(allow: AllowList): AddressGuard {
  return (hostname, address) => {
    if (allow.hosts.has(normalHost(hostname))) return undefined
    const range = nonPublicRange(address)
    if (range === undefined) return undefined
    if (range !== 'invalid') {
      const ip = ipaddr.process(normalHost(address))
      if (allow.ranges.some(([r, bits]) => r.kind() === ip.kind() && ip.match(r, bits))) return undefined
    }
    const what = RANGE_WORDS[range] ?? `a reserved address (${range})`
    const shown = normalHost(hostname) === normalHost(address) ? address : `${hostname} (${address})`
    return `${shown} is ${what}; only admins' connections may reach internal addresses.`
  }
}

/** The host of a URL as the WHATWG parser normalised it, and whether it is an IP literal. */
export function urlHost(url: string | URL): { host: string; literal: boolean } {
  const host = normalHost(new URL(url).hostname)
  return { host, literal: net.isIP(host) !== 0 }
}

/**
 * Check a URL before it is saved: an IP literal directly, a name by resolving it now (every address
 * it resolves to must pass). A name that does not resolve at the moment passes here; the transport
 * checks the address it really connects to.
 */
export async function refusalForUrl(url: string, guard: AddressGuard): Promise<string | undefined> {
  const { host, literal } = urlHost(url)
  if (literal) return guard(host, host)
  let addresses: dns.LookupAddress[]
  try {
    addresses = await dns.promises.lookup(host, { all: true })
  } catch {
    return undefined
  }
  for (const a of addresses) {
    const why = guard(host, a.address)
    if (why) return why
  }
  return undefined
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void

/**
 * A `lookup` for http.Agent / net.connect that resolves as usual and refuses the connection when
 * any resolved address fails the guard. Hosts given as IP literals skip `lookup` in Node, so the
 * transport checks those itself.
 */
export function guardedLookup(guard: AddressGuard): net.LookupFunction {
  const lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, { ...options }, ((
      err: NodeJS.ErrnoException | null,
      address: string | dns.LookupAddress[],
      family?: number,
    ) => {
      if (err) return callback(err, '')
      const list = Array.isArray(address) ? address : [{ address, family: family ?? 4 }]
      for (const a of list) {
        const why = guard(hostname, a.address)
        if (why) return callback(Object.assign(new BlockedAddressError(why), { code: 'EPARLEYBLOCKED' }), '')
      }
      callback(null, address, family)
    }) as never)
  }
  return lookup as unknown as net.LookupFunction
}
