import { EventEmitter } from 'node:events'
import pg from 'pg'
import { sql } from '@/lib/server/db'
import { log } from '@/lib/server/log'

/**
 * Live updates across processes through PostgreSQL LISTEN/NOTIFY. Whoever changes a session or an
 * experiment (a web request, a job worker on another machine) publishes a small event on the
 * `parley_live` channel; every web process holds one LISTEN connection and fans events out to its
 * server-sent-event streams by topic (`session:<id>`, `run:<id>`). Events carry ids and
 * kinds, plus streamed text deltas (capped well under NOTIFY's 8,000-byte payload limit); pages
 * re-read what they show from the database, so a missed event costs a refresh, never data.
 *
 * The LISTEN connection recovers: when it fails (the database restarted, the backend was
 * terminated, a keepalive query found it dead) every subscriber is told `down` (pages poll
 * meanwhile) and the listener reconnects with exponential backoff and jitter (0.25 s doubling to
 * 10 s) until it works, forever; once listening again every subscriber gets a `resync` event (pages
 * re-read, so whatever was published while nobody listened is caught up). A keepalive query every
 * 30 s (and TCP keepalive) finds a connection that died silently. NOTIFY needs a session: behind
 * PgBouncer in transaction mode, point `DATABASE_URL` of the web process at a session-mode pool.
 */
export const LIVE_CHANNEL = 'parley_live'
const MAX_PAYLOAD = 7000
const KEEPALIVE_MS = 30_000
const BACKOFF_MIN_MS = 250
const BACKOFF_MAX_MS = 10_000

export type LiveEvent =
  | { type: 'message'; seq: number }
  | { type: 'status'; status: string }
  | { type: 'delta'; seq: number; text: string; seat?: string }
  | { type: 'progress' }
  /** The listener reconnected: events may have been missed, re-read everything. */
  | { type: 'resync' }
  /** The listener lost its connection: poll until the next `resync`. */
  | { type: 'down' }

/**
 * The notices waiting for the statement in flight. A process sends one NOTIFY statement at a time:
 * the first notice goes out at once, and whatever is published while it is on its way goes in the next
 * statement, together (in order, one `pg_notify` per notice; PostgreSQL drops a repeated identical
 * payload within one transaction, which only ever was a second "progress" of the same run). A busy
 * process (16 workers appending, 50 people submitting) thus pays a few statements instead of one per
 * notice, at no delay for a quiet one. Each notice is still its own statement's transaction, never
 * the append's: a NOTIFY inside a write would serialise every commit on PostgreSQL's notify queue lock.
 */
interface Outbox {
  /** Each notice, and for the last of a publish call, what resolves that call. */
  queued: Array<{ payload: string; sent?: () => void }>
  flushing: boolean
  /** Statements sent (`notifyStatements`). */
  statements: number
}
const MAX_BATCH = 100
const outbox = (): Outbox => {
  const h = globalThis as unknown as { parleyLiveOutbox?: Outbox }
  h.parleyLiveOutbox ??= { queued: [], flushing: false, statements: 0 }
  return h.parleyLiveOutbox
}

async function flush(o: Outbox): Promise<void> {
  o.flushing = true
  try {
    while (o.queued.length) {
      const batch = o.queued.splice(0, MAX_BATCH)
      try {
        o.statements++
        // unnest's rows come in array order, so the notices go out in the order they were published.
        await sql().query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [
          LIVE_CHANNEL,
          batch.map((q) => q.payload),
        ])
      } catch (err) {
        log().warn({ err, notices: batch.length }, 'live update not sent')
      }
      for (const q of batch) q.sent?.()
    }
  } finally {
    o.flushing = false
  }
}

/**
 * Queue notices (those payloadOf refused, null, are left out) for the next NOTIFY statement; resolves
 * once it ran (or failed: best effort).
 */
function send(notices: Array<string | null>): Promise<void> {
  const payloads = notices.filter((p): p is string => p !== null)
  if (!payloads.length) return Promise.resolve()
  const o = outbox()
  const sent = new Promise<void>((resolve) => {
    payloads.forEach((payload, i) => {
      o.queued.push(i === payloads.length - 1 ? { payload, sent: resolve } : { payload })
    })
  })
  if (!o.flushing) void flush(o)
  return sent
}

/** NOTIFY statements this process sent (each carries one or more notices). */
export function notifyStatements(): number {
  return outbox().statements
}

/**
 * The notice as NOTIFY takes it: under its 8,000-byte limit, counted in UTF-8 bytes (a text of 6,500
 * characters in a non-Latin script is 13–20 KB). A streamed text keeps its tail; any other notice that
 * large is dropped (logged), since one payload over the limit fails the whole statement and with it
 * every notice batched beside it.
 */
function payloadOf(topic: string, event: LiveEvent): string | null {
  let payload = JSON.stringify({ topic, ...event })
  if (event.type === 'delta') {
    // Keep the tail: the page shows the latest text and the final message replaces it anyway.
    // A character is at least a byte: start from the last MAX_PAYLOAD characters, then shrink.
    let keep = Math.min(event.text.length, MAX_PAYLOAD)
    const cut = () => JSON.stringify({ topic, ...event, text: keep ? event.text.slice(-keep) : '' })
    if (keep < event.text.length) payload = cut()
    while (Buffer.byteLength(payload) > MAX_PAYLOAD && keep > 0) {
      keep = Math.floor(keep * 0.8)
      payload = cut()
    }
  }
  if (Buffer.byteLength(payload) > MAX_PAYLOAD) {
    log().warn({ topic, type: event.type, bytes: Buffer.byteLength(payload) }, 'live update too large; not sent')
    return null
  }
  return payload
}

/** Publish an event; never throws (live updates are best effort, the data is already committed). */
export function publish(topic: string, event: LiveEvent): Promise<void> {
  return send([payloadOf(topic, event)])
}

/** The usual pair: a session changed, and so did its experiment's progress. */
export function publishSession(sessionId: string, runId: string | null, event: LiveEvent): Promise<void> {
  return send([
    payloadOf(`session:${sessionId}`, event),
    runId ? payloadOf(`run:${runId}`, { type: 'progress' }) : null,
  ])
}

/** Every subscriber, whatever its topic (for `down`, `resync` and closing on shutdown). */
const ALL = Symbol('all')

interface Listener {
  bus: EventEmitter
  client?: pg.Client
  /** Resolves when listening (again); replaced on every loss. */
  connected: Promise<void>
  isUp: boolean
  stopped: boolean
  reconnects: number
  subscribers: number
  closers: Set<() => void>
}

const g = globalThis as unknown as { parleyLive?: Listener }

function listener(): Listener {
  if (g.parleyLive) return g.parleyLive
  const bus = new EventEmitter()
  bus.setMaxListeners(0)
  let markUp: () => void = () => {}
  const l: Listener = {
    bus,
    connected: new Promise((r) => (markUp = r)),
    isUp: false,
    stopped: false,
    reconnects: 0,
    subscribers: 0,
    closers: new Set(),
  }
  g.parleyLive = l
  let attempt = 0
  let everUp = false

  const lost = (client: pg.Client, why: string) => {
    if (l.client !== client) return // already handled
    l.client = undefined
    client.removeAllListeners('notification')
    client.end().catch(() => {})
    if (l.stopped) return
    if (l.isUp) {
      l.isUp = false
      l.connected = new Promise((r) => (markUp = r))
      log().warn({ why }, 'live listener lost its connection; reconnecting')
      bus.emit(ALL, { type: 'down' } satisfies LiveEvent)
    }
    schedule()
  }

  const schedule = () => {
    if (l.stopped) return
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** attempt)
    attempt++
    setTimeout(() => void connect(), ceiling / 2 + Math.random() * (ceiling / 2)).unref()
  }

  const connect = async (): Promise<void> => {
    if (l.stopped) return
    const client = new pg.Client({
      connectionString: process.env.DATABASE_URL,
      application_name: 'parley-live',
      keepAlive: true,
      connectionTimeoutMillis: 5000,
    })
    l.client = client
    client.on('notification', (n) => {
      if (n.channel !== LIVE_CHANNEL || !n.payload) return
      try {
        const e = JSON.parse(n.payload) as { topic: string } & LiveEvent
        bus.emit(e.topic, e)
      } catch {}
    })
    client.on('error', (err) => lost(client, err.message))
    client.on('end', () => lost(client, 'connection ended'))
    try {
      await client.connect()
      await client.query(`LISTEN ${LIVE_CHANNEL}`)
    } catch (err) {
      if (l.client !== client) return // lost() saw it first and scheduled the next attempt
      l.client = undefined
      client.end().catch(() => {})
      if (attempt === 0 || attempt % 10 === 0) log().warn({ err, attempt }, 'live listener cannot connect yet')
      schedule()
      return
    }
    if (l.stopped) {
      client.end().catch(() => {})
      return
    }
    const recovered = everUp || attempt > 0
    attempt = 0
    l.isUp = true
    markUp()
    if (recovered) {
      l.reconnects++
      log().info({ reconnects: l.reconnects }, 'live listener reconnected; subscribers resync')
      bus.emit(ALL, { type: 'resync' } satisfies LiveEvent)
    }
    everUp = true
    // Keepalive: a query on the idle connection finds one that died without a word.
    const beat = setInterval(() => {
      if (l.client !== client) return clearInterval(beat)
      const timeout = setTimeout(() => lost(client, 'keepalive timed out'), 10_000)
      client
        .query('SELECT 1')
        .catch((err: Error) => lost(client, err.message))
        .finally(() => clearTimeout(timeout))
    }, KEEPALIVE_MS)
    beat.unref()
  }
  void connect()
  return l
}

/**
 * Subscribe to a topic in this process. Waits (up to 5 s) for the LISTEN to be in place; when the
 * database is down it subscribes anyway and the subscriber gets `resync` once it listens. Returns
 * the unsubscribe.
 */
export async function subscribe(
  topic: string,
  fn: (e: LiveEvent) => void,
  opts: { onClose?: () => void } = {},
): Promise<() => void> {
  const l = listener()
  let t: NodeJS.Timeout | undefined
  await Promise.race([l.connected, new Promise<void>((r) => (t = setTimeout(r, 5000)))])
  clearTimeout(t)
  l.bus.on(topic, fn)
  l.bus.on(ALL, fn)
  l.subscribers++
  const close = opts.onClose
  if (close) l.closers.add(close)
  let done = false
  return () => {
    if (done) return
    done = true
    l.bus.off(topic, fn)
    l.bus.off(ALL, fn)
    l.subscribers--
    if (close) l.closers.delete(close)
  }
}

/** How many live subscriptions this process serves, and whether its listener is up (metrics, readiness). */
export function liveStats(): { subscribers: number; up: boolean; reconnects: number } {
  const l = g.parleyLive
  return { subscribers: l?.subscribers ?? 0, up: l?.isUp ?? false, reconnects: l?.reconnects ?? 0 }
}

/** On shutdown: close every live stream (browsers reconnect to another instance) and stop listening. */
export async function closeLive(): Promise<void> {
  const l = g.parleyLive
  if (!l) return
  l.stopped = true
  for (const close of [...l.closers]) close()
  const c = l.client
  l.client = undefined
  g.parleyLive = undefined
  await c?.end().catch(() => {})
}

/** Test hook: the listener's backend pid (to terminate it). */
export async function listenerPid(): Promise<number | undefined> {
  const l = listener()
  await l.connected
  return (l.client as unknown as { processID?: number } | undefined)?.processID
}
