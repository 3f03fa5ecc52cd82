/** Only same-site paths are followed after sign-in (no open redirects). */
export function safeNext(next: string | undefined | null): string {
  return next?.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/'
}
