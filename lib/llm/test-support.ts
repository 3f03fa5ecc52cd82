/** Helpers for the lib/llm tests (not used by production code). */

/** Poll `cond` every 10 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(cond: () => boolean, timeoutMs = 2000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

let counter = 0
/** A fresh connection id, so each test gets its own limiter in the shared registry. */
export function uniqueId(prefix = 'test'): string {
  return `${prefix}-${process.pid}-${++counter}`
}

/** Capture a rejection (fails the test if the promise resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('Expected the promise to reject, but it resolved')
}
