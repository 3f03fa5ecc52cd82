import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closeLive, type LiveEvent, listenerPid, liveStats, publish, subscribe } from '@/lib/server/live'
import { db } from '@/lib/server/db'
import { ROOT, waitFor } from '../support/processes'

/**
 * The live listener recovers (lib/server/live.ts): its backend terminated with pg_terminate_backend,
 * and the database stopped and started again. This file runs on its own embedded PostgreSQL (port
 * 3409), which it may restart; LISTEN/NOTIFY needs no tables.
 */
let stop: () => Promise<void> = async () => {}
let url = ''
const PORT = 3409
const DATA = path.join(ROOT, '.data', 'test-live-pg')

async function startDb() {
  const { startEmbedded } = await import('../../scripts/embedded-db.mjs')
  const e = await startEmbedded({ dataDir: DATA, port: PORT, database: 'postgres', log: () => {} })
  stop = e.stop
  url = e.url
}

beforeAll(async () => {
  await db.$disconnect()
  await startDb()
  process.env.DATABASE_URL = url
}, 120_000)

afterAll(async () => {
  await closeLive()
  await db.$disconnect()
  await stop()
})

function watch(topic: string) {
  const got: LiveEvent[] = []
  const off = subscribe(topic, (e) => got.push(e))
  return { got, off }
}

describe('live updates recover', () => {
  it('after pg_terminate_backend of the listener: down, then resync, then the next event arrives', async () => {
    const w = watch('session:recover')
    await w.off
    await publish('session:recover', { type: 'message', seq: 1 })
    await waitFor(
      'the first event',
      async () => w.got.length,
      (n) => n === 1,
      10_000,
    )
    const pid = await listenerPid()
    expect(pid).toBeGreaterThan(0)
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query('SELECT pg_terminate_backend($1)', [pid])
    await admin.end()
    await waitFor(
      'resync',
      async () => w.got.map((e) => e.type),
      (t) => t.includes('resync'),
      15_000,
    )
    expect(w.got.map((e) => e.type)).toEqual(['message', 'down', 'resync'])
    expect(await listenerPid()).not.toBe(pid)
    await publish('session:recover', { type: 'message', seq: 2 })
    await waitFor(
      'the next event',
      async () => w.got.at(-1),
      (e) => e?.type === 'message' && e.seq === 2,
      10_000,
    )
    expect(liveStats()).toMatchObject({ up: true, reconnects: 1, subscribers: 1 })
    ;(await w.off)()
  })

  it('after the database restarts: the listener retries with backoff until it is back, then resyncs', async () => {
    const w = watch('session:restart')
    await w.off
    await stop()
    await waitFor(
      'down',
      async () => w.got.map((e) => e.type),
      (t) => t.includes('down'),
      40_000,
    )
    // Down for a few seconds: several reconnect attempts fail meanwhile.
    await new Promise((r) => setTimeout(r, 3000))
    await startDb()
    await waitFor(
      'resync',
      async () => w.got.map((e) => e.type),
      (t) => t.includes('resync'),
      30_000,
    )
    await publish('session:restart', { type: 'status', status: 'done' })
    await waitFor(
      'the next event',
      async () => w.got.at(-1),
      (e) => e?.type === 'status',
      10_000,
    )
    expect(w.got.map((e) => e.type)).toEqual(['down', 'resync', 'status'])
    ;(await w.off)()
  }, 120_000)
})
