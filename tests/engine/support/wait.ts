/** Polls `fn` until `ok` holds (every `pollMs`), or fails after `ms` naming what it waited for and the last value. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 60_000,
  pollMs = 100,
): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (ok(v)) return v
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`)
    await new Promise((r) => setTimeout(r, pollMs))
  }
}
