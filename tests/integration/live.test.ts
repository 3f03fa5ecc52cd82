import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { type LiveEvent, notifyStatements, publish, publishSession, subscribe } from '@/lib/server/live'
import { stepSession } from '@/lib/server/engine/runner'
import { makeSession, makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

const fake = useFakeLlm()

describe('live updates through LISTEN/NOTIFY', () => {
  it('delivers a published event to subscribers of its topic only', async () => {
    const got: LiveEvent[] = []
    const other: LiveEvent[] = []
    const off = await subscribe('session:a', (e) => got.push(e))
    const off2 = await subscribe('session:b', (e) => other.push(e))
    await publish('session:a', { type: 'message', seq: 3 })
    await expect.poll(() => got).toEqual([expect.objectContaining({ type: 'message', seq: 3 })])
    expect(other).toEqual([])
    off()
    await publish('session:a', { type: 'message', seq: 4 })
    await new Promise((r) => setTimeout(r, 200))
    expect(got).toHaveLength(1)
    off2()
  })

  it('sends the notices published while one is on its way in one statement, in order, none lost', async () => {
    const got: LiveEvent[] = []
    const progress: LiveEvent[] = []
    const off = await subscribe('session:burst', (e) => got.push(e))
    const off2 = await subscribe('run:burst-run', (e) => progress.push(e))
    const before = notifyStatements()
    // 60 appends finishing at once (a busy worker process): one notice each, plus the run's progress.
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => publishSession('burst', 'burst-run', { type: 'message', seq: i + 1 })),
    )
    const statements = notifyStatements() - before
    await expect.poll(() => got.length).toBe(60)
    expect(got.map((e) => (e.type === 'message' ? e.seq : null))).toEqual(Array.from({ length: 60 }, (_, i) => i + 1))
    // The first pair goes out alone; the other 59 pairs (118 notices) wait for it and go together, at
    // most 100 notices a statement: 1 + 2 statements instead of 60.
    expect(statements).toBe(3)
    // Identical payloads within one statement are one notice (PostgreSQL's rule): the run heard of it.
    await expect.poll(() => progress.length).toBeGreaterThanOrEqual(1)
    expect(progress.every((e) => e.type === 'progress')).toBe(true)
    // A notice published when nothing is on its way goes out at once, alone.
    const quiet = notifyStatements()
    await publish('session:burst', { type: 'message', seq: 61 })
    expect(notifyStatements() - quiet).toBe(1)
    await expect.poll(() => got.length).toBe(61)
    off()
    off2()
  })

  it('keeps a streamed text under NOTIFY’s byte limit, so a long non-Latin answer loses none of the notices beside it', async () => {
    const got: LiveEvent[] = []
    const off = await subscribe('session:wide', (e) => got.push(e))
    // 7,000 characters of Japanese are 21,000 bytes: over NOTIFY's 8,000, which fails the whole
    // statement, and with it every notice batched in it.
    const text = `${'言'.repeat(6999)}終`
    await Promise.all([
      publish('session:wide', { type: 'message', seq: 1 }),
      publish('session:wide', { type: 'message', seq: 2 }),
      publish('session:wide', { type: 'delta', seq: 3, text }),
      publish('session:wide', { type: 'message', seq: 4 }),
    ])
    await expect.poll(() => got.length).toBe(4)
    expect(got.map((e) => e.type)).toEqual(['message', 'message', 'delta', 'message'])
    const delta = got[2] as Extract<LiveEvent, { type: 'delta' }>
    // Its tail, as long as fits.
    expect(text.endsWith(delta.text)).toBe(true)
    expect(delta.text.length).toBeGreaterThan(1000)
    expect(Buffer.byteLength(delta.text)).toBeLessThan(8000)
    off()
  })

  it('streams the machine’s answer to a watching expert before the message is stored', async () => {
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const conn = await fakeConnection(study.id, fake())
    const reply =
      'Prediction: CCO.CC(=O)O\nPathway: Fischer esterification of acetic acid with ethanol, acid catalysed.'
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: reply, chunkDelayMs: 40 }] }])
    const s = await makeSession(study.id, {
      protocol: 'pxp',
      config: { n: 10, k: 3 },
      task: 'drug',
      instance: { input: { smiles: 'CCOC(C)=O' }, prediction: 'x', explanation: 'y' },
      seats: {
        m: {
          kind: 'llm',
          model: { connectionId: conn.id, model: 'gen' },
          helpers: { checker: { connectionId: conn.id, model: 'judge' } },
        },
        h: { kind: 'human', userId: expert.userId },
      },
    })
    const events: LiveEvent[] = []
    const off = await subscribe(`session:${s.id}`, (e) => events.push(e))
    expect(await stepSession(s.id)).toMatchObject({ kind: 'appended', seq: 1 })
    await expect.poll(() => events.some((e) => e.type === 'message')).toBe(true)
    off()
    const firstMessage = events.findIndex((e) => e.type === 'message')
    const deltas = events.filter((e): e is Extract<LiveEvent, { type: 'delta' }> => e.type === 'delta')
    expect(events.slice(0, firstMessage).some((e) => e.type === 'delta')).toBe(true)
    for (const d of deltas) {
      expect(d.seq).toBe(1)
      expect(reply.startsWith(d.text)).toBe(true)
    }
    const stored = await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 1 } } })
    expect((stored.payload as { raw: string }).raw).toBe(reply)
  })
})
