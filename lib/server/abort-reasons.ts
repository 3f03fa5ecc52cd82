const INSTALLED = Symbol.for('parley.abortReasons')
const g = globalThis as unknown as { [INSTALLED]?: boolean }

/**
 * Every Error given to `AbortController#abort` has its stack formatted there and then, so that it
 * holds text instead of the frames it was thrown in. Idempotent.
 *
 * Why: V8 keeps a new error's stack as frame records until `.stack` is first read, and each record
 * holds its frame's receiver. React's server renderer (inside Next) ends every render that completes
 * by aborting the render's cache signal with `new Error("This render completed successfully…")`, a
 * reason nobody reads, made in a `setImmediate` callback whose receiver is Node's Immediate; and
 * Node leaves a run Immediate linked to the ones queued after it. So: a long-lived handle opened
 * during a render (a connection the database pool opened under load) keeps that render's request,
 * whose reason keeps its Immediate, which keeps the Immediates queued after it, which keep the later
 * renders that queued them, whose reasons keep theirs… While the load lasted, every render was kept.
 * Under bench:load's page load a web process grew from 260 to 600 MB in two minutes and served a
 * third of its pages per second, its collector working on a full heap (README "Load"). Reading
 * `.stack` replaces the frame records with text and costs microseconds; nothing else about `abort`
 * changes. React's own fix (no stack for that reason) is react#37289, not released.
 */
export function formatAbortReasons(): void {
  if (g[INSTALLED]) return
  const abort = AbortController.prototype.abort
  AbortController.prototype.abort = function abortWithFormattedReason(this: AbortController, reason?: unknown) {
    if (reason instanceof Error) void reason.stack
    return abort.call(this, reason)
  }
  g[INSTALLED] = true
}
