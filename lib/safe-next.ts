/** Stands in for the app's origin: only whether parsing changes the origin matters. */
const BASE = 'http://parley.invalid'

/** Tabs, newlines and other control characters (browsers drop some while parsing URLs), and backslashes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f\\]/

/**
 * Where to go after sign-in: a same-origin path, never another site (no open redirects). The value
 * is parsed with the URL API against the app's origin and followed only when the origin stays the
 * same, as pathname + search + hash. Control characters and backslashes are refused outright, also
 * percent-encoded (they are what turns `/\t/evil.host` into `//evil.host`), and so is a result that a
 * browser would read as protocol-relative (`//host`). Anything refused gives `/`.
 */
export function safeNext(next: string | undefined | null): string {
  if (!next?.startsWith('/')) return '/'
  let decoded: string
  try {
    decoded = decodeURIComponent(next)
  } catch {
    return '/'
  }
  if (UNSAFE.test(next) || UNSAFE.test(decoded)) return '/'
  let url: URL
  try {
    url = new URL(next, BASE)
  } catch {
    return '/'
  }
  if (url.origin !== BASE) return '/'
  const path = url.pathname + url.search + url.hash
  return path.startsWith('//') ? '/' : path
}
