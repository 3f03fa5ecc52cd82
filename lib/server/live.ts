import { EventEmitter } from 'node:events'
import pg from 'pg'
import { sql } from '@/lib/server/db'

/**
 * Live updates across processes through PostgreSQL LISTEN/NOTIFY. Whoever changes a session or an
 * experiment (a web request, a job worker on another machine) publishes a small event on the
 * `parley_live` channel; every web process holds one LISTEN connection and fans events out to its
 * server-sent-event streams by topic (`session:<id>`, `experiment:<id>`). Events carry ids and
 * kinds, plus streamed text deltas (capped well under NOTIFY's 8,000-byte payload limit); pages
 * re-read what they show from the database, so a missed event costs a refresh, never data.
 */
export const LIVE_CHANNEL = 'parley_live'
const MAX_PAYLOAD = 7000

export type LiveEvent =
  | { type: 'message'; seq: number }
  | { type: 'status'; status: string }
  | { type: 'delta'; seq: number; text: string; seat?: string }
  | { type: 'progress' }

/** Publish an event; never throws (live updates are best effort, the data is already committed). */
export async function publish(topic: string, event: LiveEvent): Promise<void> {
  let payload = JSON.stringify({ topic, ...event })
  if (payload.length > MAX_PAYLOAD && event.type === 'delta') {
    // Keep the tail: the page shows the latest text and the final message replaces it anyway.
    payload = JSON.stringify({ topic, ...event, text: event.text.slice(-(MAX_PAYLOAD - 500)) })
  }
  try {
    await sql().query('SELECT pg_notify($1, $2)', [LIVE_CHANNEL, payload])
  } catch (err) {
    console.warn('[parley] live update not sent:', (err as Error).message)
  }
}

/** The usual pair: a session changed, and so did its experiment's progress. */
export async function publishSession(sessionId: string, experimentId: string | null, event: LiveEvent) {
  const a = JSON.stringify({ topic: `session:${sessionId}`, ...event })
  if (!experimentId || a.length > MAX_PAYLOAD) {
    await publish(`session:${sessionId}`, event)
    if (experimentId) await publish(`experiment:${experimentId}`, { type: 'progress' })
    return
  }
  const b = JSON.stringify({ topic: `experiment:${experimentId}`, type: 'progress' })
  try {
    await sql().query('SELECT pg_notify($1, $2), pg_notify($1, $3)', [LIVE_CHANNEL, a, b])
  } catch (err) {
    console.warn('[parley] live update not sent:', (err as Error).message)
  }
}

const g = globalThis as unknown as { parleyLive?: { bus: EventEmitter; ready: Promise<void> } }

function listener() {
  if (g.parleyLive) return g.parleyLive
  const bus = new EventEmitter()
  bus.setMaxListeners(0)
  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL, application_name: 'parley-live' })
    client.on('notification', (n) => {
      if (n.channel !== LIVE_CHANNEL || !n.payload) return
      try {
        const e = JSON.parse(n.payload) as { topic: string } & LiveEvent
        bus.emit(e.topic, e)
      } catch {}
    })
    client.on('error', (err) => {
      console.warn('[parley] live listener lost its connection, reconnecting:', err.message)
      client.end().catch(() => {})
      setTimeout(() => connect().catch(() => {}), 1000)
    })
    await client.connect()
    await client.query(`LISTEN ${LIVE_CHANNEL}`)
  }
  g.parleyLive = { bus, ready: connect() }
  g.parleyLive.ready.catch(() => {
    g.parleyLive = undefined
  })
  return g.parleyLive
}

/** Subscribe to a topic in this process; resolves once the LISTEN is in place. Returns the unsubscribe. */
export async function subscribe(topic: string, fn: (e: LiveEvent) => void): Promise<() => void> {
  const l = listener()
  await l.ready
  l.bus.on(topic, fn)
  return () => l.bus.off(topic, fn)
}
