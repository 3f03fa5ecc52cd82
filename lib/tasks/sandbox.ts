import type { Worker } from 'node:worker_threads'
import { crossCopy } from '../cross-copy'

/**
 * Native and CPU-heavy work (RDKit's WebAssembly, regex MATCH) off the event loop: one worker thread
 * per kind and process, one call at a time, each with a time limit. A call that runs out of time, or
 * that breaks the worker (a WebAssembly trap such as RDKit's "memory access out of bounds" on a
 * SMILES of a thousand atoms, an uncaught error, the thread dying), is answered with a
 * {@link SandboxError} and the worker is terminated and started again at once, so no input can leave
 * a process with a corrupted instance or a spinning thread. While a worker cannot be started, calls
 * are refused (`unavailable`) and {@link sandboxProblems} names it, which readiness reports.
 *
 * A worker is a plain JavaScript module (`*-worker.mjs` beside its user) created by the user's own
 * `new Worker(new URL('./x-worker.mjs', import.meta.url))`, the form Next's bundler follows. It
 * answers the messages `{ id, op, args }` with `{ id, ok: true, value }` or
 * `{ id, ok: false, error, fatal }` (`fatal`: its state may be damaged, so it is replaced) and
 * posts `{ ready: true }` once it is set up; a setup that throws makes the worker fail to start.
 *
 * The sandboxes live on globalThis: Next bundles a module once per server layer, and each layer
 * must use the process's one worker per kind (docs/ARCHITECTURE.md "Processes").
 */

export type SandboxErrorKind = 'timeout' | 'crashed' | 'unavailable' | 'busy'

export class SandboxError extends Error {
  constructor(
    readonly kind: SandboxErrorKind,
    readonly sandbox: string,
    message: string,
  ) {
    super(message)
    this.name = 'SandboxError'
  }
}
crossCopy(SandboxError, 'SandboxError')

/** True for the errors that say nothing about the input: the worker could not start, or had no room. */
export const isSandboxUnavailable = (err: unknown): err is SandboxError =>
  err instanceof SandboxError && (err.kind === 'unavailable' || err.kind === 'busy')

export interface SandboxOptions {
  /** Names the sandbox in errors and readiness ("RDKit", "regex MATCH"). */
  label: string
  /** Creates the worker thread (the caller's `new Worker(new URL(…), …)`). */
  create: () => Worker
  /** The time limit of one call, from when the worker starts it. */
  timeoutMs: number
  /** How long the worker may take to post `{ ready: true }`. */
  startTimeoutMs: number
  /** Calls waiting for the worker beyond this are refused (`busy`) rather than queued. */
  maxQueue: number
  /** After a failed start, calls are refused for this long before the next attempt. */
  retryAfterMs: number
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string; fatal?: boolean }
type Pending = { op: string; args: unknown[]; resolve: (v: unknown) => void; reject: (e: Error) => void }

export class Sandbox {
  private worker: Worker | null = null
  private starting: Promise<Worker> | null = null
  private queue: Pending[] = []
  private running: (Pending & { id: number; timer: NodeJS.Timeout }) | null = null
  private nextId = 1
  private failure: { reason: string; at: number } | null = null
  /** Workers started (the first one included) and calls that ended the worker they ran on. */
  readonly stats = { starts: 0, restarts: 0 }

  constructor(
    readonly name: string,
    private options: SandboxOptions,
  ) {}

  /** Change the options (tests: a shorter time limit, a worker that cannot start). Applies to the next worker. */
  configure(options: Partial<SandboxOptions>): void {
    this.options = { ...this.options, ...options }
  }

  get settings(): Readonly<SandboxOptions> {
    return this.options
  }

  /** Why this sandbox cannot work now (its worker could not be started), or null. */
  get problem(): string | null {
    return this.failure?.reason ?? null
  }

  /** Runs `op` in the worker: its answer, or a SandboxError (time limit, crash, unavailable, busy). */
  call<T>(op: string, args: unknown[]): Promise<T> {
    if (this.queue.length >= this.options.maxQueue)
      return Promise.reject(
        new SandboxError('busy', this.name, `${this.options.label} has too much work queued; try again in a moment.`),
      )
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, args, resolve: resolve as (v: unknown) => void, reject })
      void this.pump()
    })
  }

  /**
   * Starts the worker if there is none (or tries again after a failed start, once `retryAfterMs`
   * has passed, or at once with `force`). Resolves when it is ready; the problem stays recorded
   * when it cannot start.
   */
  async ensureStarted(force = false): Promise<boolean> {
    try {
      await this.start(force)
      return true
    } catch {
      return false
    }
  }

  /** Terminates the worker (a new one starts with the next call). */
  async stop(): Promise<void> {
    const w = this.worker
    this.worker = null
    this.failure = null
    if (w) await w.terminate()
  }

  private start(force = false): Promise<Worker> {
    if (this.worker) return Promise.resolve(this.worker)
    if (this.starting) return this.starting
    const failed = this.failure
    if (failed && !force && Date.now() - failed.at < this.options.retryAfterMs)
      return Promise.reject(new SandboxError('unavailable', this.name, failed.reason))
    const starting = new Promise<Worker>((resolve, reject) => {
      let w: Worker
      try {
        w = this.options.create()
      } catch (err) {
        reject(err)
        return
      }
      this.stats.starts++
      const timer = setTimeout(
        () => fail(new Error(`it did not start within ${this.options.startTimeoutMs} ms`)),
        this.options.startTimeoutMs,
      )
      const cleanup = () => {
        clearTimeout(timer)
        w.off('message', onMessage)
        w.off('error', fail)
        w.off('exit', onExit)
      }
      const onMessage = (m: unknown) => {
        if ((m as { ready?: unknown })?.ready !== true) return
        cleanup()
        resolve(w)
      }
      const fail = (err: Error) => {
        cleanup()
        void w.terminate()
        reject(err)
      }
      const onExit = (code: number) => fail(new Error(`its thread exited with code ${code} while starting`))
      w.on('message', onMessage)
      w.once('error', fail)
      w.once('exit', onExit)
    })
    this.starting = starting.then(
      (w) => {
        this.starting = null
        this.failure = null
        this.adopt(w)
        return w
      },
      (err: unknown) => {
        this.starting = null
        const detail = err instanceof Error ? err.message : String(err)
        this.failure = { reason: `${this.options.label} cannot start: ${detail}`, at: Date.now() }
        throw new SandboxError('unavailable', this.name, this.failure.reason)
      },
    )
    return this.starting
  }

  /** The worker is ready: answers go to the running call; a worker that dies fails it. */
  private adopt(w: Worker): void {
    this.worker = w
    w.unref()
    w.on('message', (m: Reply) => {
      const call = this.running
      if (!call || m?.id !== call.id) return
      this.finish()
      if (m.ok) call.resolve(m.value)
      else if (m.fatal) {
        call.reject(new SandboxError('crashed', this.name, `${this.options.label} failed on this input (${m.error}).`))
        this.replace(w)
      } else call.reject(new Error(m.error))
      void this.pump()
    })
    w.on('error', (err) => this.lost(w, err.message))
    w.on('exit', (code) => this.lost(w, `its thread exited with code ${code}`))
  }

  /** The worker died (an uncaught error, an exit): fail the running call, start a new one. */
  private lost(w: Worker, why: string): void {
    if (this.worker !== w) return
    const call = this.running
    this.worker = null
    if (call) {
      this.finish()
      call.reject(new SandboxError('crashed', this.name, `${this.options.label} failed on this input (${why}).`))
    }
    void this.restart()
    void this.pump()
  }

  /** Terminate `w` (damaged or stuck) and start its successor at once, so readiness knows if it cannot. */
  private replace(w: Worker): void {
    if (this.worker === w) this.worker = null
    void w.terminate()
    void this.restart()
  }

  private async restart(): Promise<void> {
    this.stats.restarts++
    await this.ensureStarted(true)
  }

  private finish(): void {
    const call = this.running
    if (!call) return
    clearTimeout(call.timer)
    this.running = null
    if (!this.queue.length) this.worker?.unref()
  }

  private async pump(): Promise<void> {
    if (this.running || !this.queue.length) return
    let w: Worker
    try {
      w = await this.start()
    } catch (err) {
      // Nothing can run: everything waiting is refused with the reason.
      const e =
        err instanceof SandboxError
          ? err
          : new SandboxError('unavailable', this.name, `${this.options.label} cannot start.`)
      for (const p of this.queue.splice(0)) p.reject(e)
      return
    }
    if (this.running || !this.queue.length) return
    const next = this.queue.shift() as Pending
    const id = this.nextId++
    const timer = setTimeout(() => {
      if (this.running?.id !== id) return
      this.finish()
      next.reject(
        new SandboxError(
          'timeout',
          this.name,
          `${this.options.label} took longer than ${this.options.timeoutMs} ms on this input.`,
        ),
      )
      this.replace(w)
      void this.pump()
    }, this.options.timeoutMs)
    this.running = { ...next, id, timer }
    w.ref()
    w.postMessage({ id, op: next.op, args: next.args })
  }
}

const shared = globalThis as unknown as { parleySandboxes?: Map<string, Sandbox> }
shared.parleySandboxes ??= new Map()

/** The process's sandbox of this name, made with `options` the first time it is asked for. */
export function sandbox(name: string, options: SandboxOptions): Sandbox {
  const all = shared.parleySandboxes as Map<string, Sandbox>
  let s = all.get(name)
  if (!s) {
    s = new Sandbox(name, options)
    all.set(name, s)
  }
  return s
}

/**
 * What keeps this process's sandboxes from working: one line per sandbox whose worker could not be
 * started. A sandbox whose last start failed is tried again first (at most every `retryAfterMs`),
 * so readiness recovers by itself once the worker starts. Sandboxes never used are not started.
 */
export async function sandboxProblems(): Promise<string[]> {
  const out: string[] = []
  for (const s of (shared.parleySandboxes as Map<string, Sandbox>).values()) {
    if (s.problem) await s.ensureStarted()
    if (s.problem) out.push(s.problem)
  }
  return out
}
