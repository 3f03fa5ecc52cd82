import {
  type AddressGuard,
  type AllowList,
  parseAllowList,
  refusalForUrl,
  restrictedGuard,
} from '@/lib/llm/address-policy'
import { createNodeFetch, createProxiedFetch, type FetchLike, proxyConfigured } from '@/lib/llm/transport'

/**
 * Connections whose address a non-admin chose (`restrictedHosts`) reach public addresses only,
 * unless PARLEY_ALLOWED_LLM_HOSTS names the host, address or CIDR range (comma-separated). Admins'
 * connections (global or of a study) and the built-in demo model are not restricted, so a local
 * vLLM or Ollama stays one admin away. The setting is read from the environment at each check.
 */
export const ALLOWED_HOSTS_SETTING = 'PARLEY_ALLOWED_LLM_HOSTS'

let parsed: { value: string | undefined; list: AllowList } | undefined
function allowList(): AllowList {
  const value = process.env[ALLOWED_HOSTS_SETTING]
  if (!parsed || parsed.value !== value) parsed = { value, list: parseAllowList(value) }
  return parsed.list
}

/** The guard restricted connections run under (the current allow-list). */
export const restrictedAddressGuard: AddressGuard = (hostname, address) =>
  restrictedGuard(allowList())(hostname, address)

/** Why a restricted connection may not use this base URL (resolving its name now), or undefined. */
export function refusalForRestrictedUrl(url: string): Promise<string | undefined> {
  return refusalForUrl(url, restrictedAddressGuard)
}

const g = globalThis as unknown as { parleyRestrictedFetch?: FetchLike }

/**
 * The process-wide transport of restricted connections: checks every address it connects to.
 * Behind an outbound proxy (HTTPS_PROXY / HTTP_PROXY) the proxy connects, so the host is resolved
 * and checked before each request instead.
 */
export function restrictedTransport(): FetchLike {
  g.parleyRestrictedFetch ??= proxyConfigured()
    ? createProxiedFetch({ before: (url) => refusalForRestrictedUrl(url.href) })
    : createNodeFetch({ guard: restrictedAddressGuard })
  return g.parleyRestrictedFetch
}
