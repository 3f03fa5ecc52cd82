/**
 * Per-connection admission control for LLM calls: a concurrency semaphore plus token-bucket rate
 * limits (requests per minute and tokens per minute). One {@link ConnectionLimiter} exists per
 * connection id in the process (see {@link getConnectionLimiter}), so every caller that talks to the
 * same provider account shares the same budget.
 *
 * Waiting is FIFO and abort-aware: a caller whose signal aborts leaves the queue at once and its
 * promise rejects with the signal's reason.
 */

/** Limits of one connection. Omitted rate limits mean "unlimited". */
export type LimiterConfig = {
  /** Maximum number of calls in flight at once (>= 1). */
  maxConcurrency: number
  /** Sustained request rate. */
  requestsPerMinute?: number
  /** Sustained token rate (prompt + completion tokens, estimated before the call, reconciled after). */
  tokensPerMinute?: number
  /**
   * How many seconds' worth of budget may be spent in one burst (default 1). Providers often
   * enforce per-minute limits over shorter windows, so a small burst avoids 429s; 60 allows a whole
   * minute's budget at once.
   */
  burstSeconds?: number
}

/** What {@link ConnectionLimiter.acquire} hands back; call {@link Permit.release} exactly once. */
export type Permit = {
  /** Milliseconds spent waiting for the slot and the rate budget. */
  waitedMs: number
  /** Correct the token estimate once the real usage is known (positive = more tokens were used). */
  adjustTokens(delta: number): void
  /** Give the concurrency slot back. Idempotent. */
  release(): void
}

/** A continuously refilling token bucket. `tokens` may go negative after a reconciliation. */
export class TokenBucket {
  private tokens: number
  private last: number

  /**
   * @param capacity the burst size
   * @param perMs refill rate in tokens per millisecond
   */
  constructor(
    public capacity: number,
    public perMs: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.tokens = capacity
    this.last = now()
  }

  private refill(): void {
    const t = this.now()
    if (t > this.last) {
      this.tokens = Math.min(this.capacity, this.tokens + (t - this.last) * this.perMs)
      this.last = t
    }
  }

  /** Current (refilled) number of tokens. */
  available(): number {
    this.refill()
    return this.tokens
  }

  /**
   * Milliseconds until `n` tokens can be taken (0 = now). A request larger than the capacity is
   * admitted once the bucket is full, and drives the balance negative.
   */
  waitMs(n: number): number {
    this.refill()
    const need = Math.min(n, this.capacity)
    if (this.tokens >= need) return 0
    return (need - this.tokens) / this.perMs
  }

  /** Take `n` tokens unconditionally (callers check {@link waitMs} first). */
  take(n: number): void {
    this.refill()
    this.tokens -= n
  }

  /** Add (or with a negative value remove) tokens, capped at the capacity. */
  adjust(delta: number): void {
    this.refill()
    this.tokens = Math.min(this.capacity, this.tokens + delta)
  }
}

type Waiter = {
  tokens: number
  resolve: () => void
  reject: (reason: unknown) => void
  signal?: AbortSignal
  onAbort?: () => void
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}

/**
 * Concurrency semaphore + request and token buckets for one connection. Acquisition order: first a
 * concurrency slot, then the rate budget, so a call is sent right after it is admitted by the rate
 * limiter and bursts never exceed what the buckets allow.
 */
export class ConnectionLimiter {
  private config: LimiterConfig
  private active = 0
  private slotQueue: Waiter[] = []
  private rateQueue: Waiter[] = []
  private requests?: TokenBucket
  private tokens?: TokenBucket
  private timer: ReturnType<typeof setTimeout> | undefined
  private pausedUntil = 0
  /** Highest number of slots held at once since creation (for tests and dashboards). */
  maxActive = 0

  constructor(
    config: LimiterConfig,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.config = { ...config }
    this.configure(config)
  }

  /** Apply new limits (e.g. the connection was edited). Waiting callers are re-evaluated. */
  configure(config: LimiterConfig): void {
    if (!(config.maxConcurrency >= 1)) throw new RangeError('maxConcurrency must be >= 1')
    const burst = config.burstSeconds ?? 1
    const bucket = (perMinute: number | undefined, old: TokenBucket | undefined) => {
      if (perMinute === undefined || perMinute <= 0 || !Number.isFinite(perMinute)) return undefined
      const perMs = perMinute / 60_000
      const capacity = Math.max(1, (perMinute / 60) * burst)
      if (old) {
        old.capacity = capacity
        old.perMs = perMs
        return old
      }
      return new TokenBucket(capacity, perMs, this.now)
    }
    this.requests = bucket(config.requestsPerMinute, this.requests)
    this.tokens = bucket(config.tokensPerMinute, this.tokens)
    this.config = { ...config }
    this.pumpSlots()
    this.pumpRate()
  }

  /** The limits in force. */
  get limits(): Readonly<LimiterConfig> {
    return this.config
  }

  /** Calls currently holding a slot. */
  get inFlight(): number {
    return this.active
  }

  /** Callers waiting for a slot or for rate budget. */
  get waiting(): number {
    return this.slotQueue.length + this.rateQueue.length
  }

  /**
   * Hold all new admissions for `ms` (e.g. the provider answered 429 with Retry-After), so every
   * caller of the connection backs off, not only the one that saw the 429.
   */
  pause(ms: number): void {
    if (!(ms > 0)) return
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms)
    this.pumpRate()
  }

  /**
   * Wait for a concurrency slot and for rate budget for one request of about `estimatedTokens`
   * tokens. Rejects with the signal's reason if `signal` aborts while waiting.
   */
  async acquire(estimatedTokens: number, signal?: AbortSignal): Promise<Permit> {
    if (signal?.aborted) throw abortReason(signal)
    const started = this.now()
    const tokens = Math.max(0, estimatedTokens)
    if (this.active < this.config.maxConcurrency && this.slotQueue.length === 0) {
      this.active++
    } else {
      await this.enqueue(this.slotQueue, tokens, signal, () => this.pumpSlots())
    }
    if (this.active > this.maxActive) this.maxActive = this.active
    let released = false
    const release = () => {
      if (released) return
      released = true
      this.active--
      this.pumpSlots()
    }
    try {
      if (this.requests || this.tokens || this.pausedUntil > started) {
        if (this.rateQueue.length === 0 && this.rateWaitMs(tokens) === 0) this.takeRate(tokens)
        else await this.enqueue(this.rateQueue, tokens, signal, () => this.pumpRate())
      }
    } catch (e) {
      release()
      throw e
    }
    return {
      waitedMs: this.now() - started,
      adjustTokens: (delta: number) => {
        if (this.tokens && delta !== 0) {
          this.tokens.adjust(-delta)
          if (delta < 0) this.pumpRate()
        }
      },
      release,
    }
  }

  private enqueue(queue: Waiter[], tokens: number, signal: AbortSignal | undefined, pump: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { tokens, resolve, reject, signal }
      if (signal) {
        waiter.onAbort = () => {
          const i = queue.indexOf(waiter)
          if (i >= 0) queue.splice(i, 1)
          reject(abortReason(signal))
          // The head may have changed: let the next waiter try.
          pump()
        }
        signal.addEventListener('abort', waiter.onAbort, { once: true })
      }
      queue.push(waiter)
      pump()
    })
  }

  private settle(waiter: Waiter): void {
    if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort)
    waiter.resolve()
  }

  private pumpSlots(): void {
    while (this.active < this.config.maxConcurrency && this.slotQueue.length > 0) {
      const w = this.slotQueue.shift()!
      this.active++
      this.settle(w)
    }
  }

  private rateWaitMs(tokens: number): number {
    const t = this.now()
    let wait = this.pausedUntil > t ? this.pausedUntil - t : 0
    if (this.requests) wait = Math.max(wait, this.requests.waitMs(1))
    if (this.tokens && tokens > 0) wait = Math.max(wait, this.tokens.waitMs(tokens))
    return wait
  }

  private takeRate(tokens: number): void {
    this.requests?.take(1)
    if (tokens > 0) this.tokens?.take(tokens)
  }

  private pumpRate(): void {
    if (this.timer) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    while (this.rateQueue.length > 0) {
      const head = this.rateQueue[0]!
      const wait = this.rateWaitMs(head.tokens)
      if (wait > 0) {
        // Wake up when the head can go; ceil so we never wake a hair too early and spin.
        this.timer = setTimeout(() => this.pumpRate(), Math.ceil(wait))
        return
      }
      this.rateQueue.shift()
      this.takeRate(head.tokens)
      this.settle(head)
    }
  }
}

const registry = new Map<string, ConnectionLimiter>()

/**
 * The process-wide limiter of connection `id`, created on first use. Later calls with different
 * limits reconfigure the shared limiter (the latest configuration wins).
 */
export function getConnectionLimiter(id: string, config: LimiterConfig): ConnectionLimiter {
  const existing = registry.get(id)
  if (!existing) {
    const limiter = new ConnectionLimiter(config)
    registry.set(id, limiter)
    return limiter
  }
  const l = existing.limits
  if (
    l.maxConcurrency !== config.maxConcurrency ||
    l.requestsPerMinute !== config.requestsPerMinute ||
    l.tokensPerMinute !== config.tokensPerMinute ||
    l.burstSeconds !== config.burstSeconds
  ) {
    existing.configure(config)
  }
  return existing
}

/**
 * Limits that hold across processes (Parley keeps them in PostgreSQL: lib/server/llm/global-limits.ts).
 * The client asks it after the process's own {@link ConnectionLimiter} admitted a call (which keeps
 * the local queue FIFO and cheap), so a call holds a local slot while it waits for a global one.
 */
export interface GlobalLimiter {
  /** Wait for a global concurrency lease and rate budget for one request of about `estimatedTokens`. */
  acquire(estimatedTokens: number, signal?: AbortSignal): Promise<GlobalPermit>
  /** Hold every process's new calls of this connection for `ms` (a 429). */
  pause(ms: number): Promise<void>
}

export interface GlobalPermit {
  /** Milliseconds spent waiting. */
  waitedMs: number
  /** Give the lease back, correcting the token estimate by `tokenDelta` (real − estimated). Never throws. */
  release(tokenDelta?: number): Promise<void>
}
