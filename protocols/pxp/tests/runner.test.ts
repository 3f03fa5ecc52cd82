import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { runSession, stepSession } from '@/lib/server/engine/runner'
import { makeSession, makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()

const TRUTH = { y: 'Atelectasis', e: 'Volume loss of the left lower lobe with shift of the fissure.' }

async function session(
  studyId: string,
  connectionId: string,
  h: Record<string, unknown> = { kind: 'proxy', helpers: { checker: { connectionId, model: 'judge' } } },
) {
  return makeSession(studyId, {
    protocol: 'pxp',
    config: { n: 10, k: 3 },
    task: 'rad',
    instance: { input: { image: 'x.png' }, prediction: TRUTH.y, explanation: TRUTH.e },
    seats: {
      m: { kind: 'llm', model: { connectionId, model: 'gen' }, helpers: { checker: { connectionId, model: 'judge' } } },
      h,
    },
  })
}

async function setup() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const conn = await fakeConnection(study.id, fake())
  return { study, conn }
}

describe('the PXP runner (machine LLM vs. ground-truth proxy, checker LLM for AGREE)', () => {
  it('runs INIT, REFUTE, REVISE, RATIFY, RATIFY and stops on mutual ratification', async () => {
    const { study, conn } = await setup()
    fake().setScript([
      // The generator: a wrong first read, then the right one.
      {
        match: { model: 'gen' },
        replies: [
          { text: 'Prediction: Pneumonia\nExplanation: Patchy consolidation.' },
          { text: `Prediction: Atelectasis\nExplanation: Volume loss on the left.` },
        ],
      },
      // The checker: the first explanation disagrees with the truth, the revised one agrees.
      { match: { model: 'judge', contains: 'Patchy consolidation' }, replies: [{ text: 'No' }] },
      { match: { model: 'judge', contains: 'Volume loss on the left' }, replies: [{ text: 'Yes' }] },
    ])
    const s = await session(study.id, conn.id)
    const end = await runSession(s.id)
    expect(end).toEqual({ kind: 'done', reason: 'mutual-ratify' })
    const messages = await db.protocolMessage.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } })
    expect(messages.map((m) => [m.seq, m.sender, m.label])).toEqual([
      [1, 'm', 'INIT'],
      [2, 'h', 'REFUTE'],
      [3, 'm', 'REVISE'],
      [4, 'h', 'RATIFY'],
      [5, 'm', 'RATIFY'],
    ])
    expect(messages[2]?.payload).toMatchObject({ category: 'D', changed: true })
    expect(await db.contextSnapshot.count({ where: { sessionId: s.id } })).toBe(5)
    // The machine's third prompt carried the tester's refutation as a user turn.
    const c3 = await db.contextSnapshot.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 3 } } })
    expect(JSON.stringify(c3.context)).toContain('I think you made a mistake. I refute your diagnosis.')
    expect(await db.protocolSession.findUniqueOrThrow({ where: { id: s.id } })).toMatchObject({
      status: 'done',
      stopReason: 'mutual-ratify',
    })
    // Every LLM call of the session is in the call log, pointing at it.
    expect(await db.llmCall.count({ where: { sessionRef: s.id } })).toBeGreaterThanOrEqual(4)
  })

  it('waits for a human seat, and two racing steps append one message', async () => {
    const { study, conn } = await setup()
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: 'Prediction: Pneumonia\nExplanation: x', latencyMs: 50 }] },
    ])
    const expert = await makeUser('expert')
    const s = await session(study.id, conn.id, { kind: 'human', userId: expert.userId })
    const [a, b] = await Promise.all([stepSession(s.id), stepSession(s.id)])
    expect([a.kind, b.kind].sort()).toEqual(['appended', 'conflict'])
    expect(await db.protocolMessage.count({ where: { sessionId: s.id } })).toBe(1)
    expect(await stepSession(s.id)).toEqual({ kind: 'awaiting', seat: 'h' })
  })

  it('a failing model stalls the session with the error; after the fault it resumes where it stopped', async () => {
    const { study, conn } = await setup()
    fake().setScript([{ match: { model: 'gen' }, replies: [{ fault: '500' }] }])
    const s = await session(study.id, conn.id)
    const r = await stepSession(s.id)
    expect(r).toMatchObject({ kind: 'stalled', error: expect.stringContaining('server') })
    expect(await db.protocolSession.findUniqueOrThrow({ where: { id: s.id } })).toMatchObject({ status: 'stalled' })
    expect(await db.protocolMessage.count({ where: { sessionId: s.id } })).toBe(0)
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: `Prediction: Atelectasis\nExplanation: ${TRUTH.e}` }] },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ])
    expect(await runSession(s.id)).toEqual({ kind: 'done', reason: 'mutual-ratify' })
    const tags = (await db.protocolMessage.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } })).map(
      (m) => m.label,
    )
    expect(tags).toEqual(['INIT', 'RATIFY', 'RATIFY'])
  })

  it('sends the X-ray from the dataset to a vision generator, and not to a text-only one', async () => {
    const { study, conn } = await setup()
    const ds = await db.dataset.create({
      data: {
        studyId: study.id,
        name: 'rad',
        kind: 'rad',
        source: 'x.csv',
        assets: { create: { name: 'x.png', mime: 'image/png', bytes: Buffer.from([137, 80, 78, 71]) } },
      },
    })
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: `Prediction: Atelectasis\nExplanation: ${TRUTH.e}` }] },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ])
    const parts = async (vision: boolean) => {
      const s = await makeSession(study.id, {
        protocol: 'pxp',
        config: { n: 10, k: 3 },
        task: 'rad',
        instance: { input: { image: 'x.png' }, prediction: TRUTH.y, explanation: TRUTH.e, datasetId: ds.id },
        seats: {
          m: {
            kind: 'llm',
            model: { connectionId: conn.id, model: 'gen', vision },
            helpers: { checker: { connectionId: conn.id, model: 'judge' } },
          },
          h: { kind: 'proxy', helpers: { checker: { connectionId: conn.id, model: 'judge' } } },
        },
      })
      const before = fake().requests.length
      expect(await stepSession(s.id)).toMatchObject({ kind: 'appended', seq: 1 })
      expect((await db.protocolMessage.findFirstOrThrow({ where: { sessionId: s.id } })).label).toBe('INIT')
      const body = fake()
        .requests.slice(before)
        .find((r) => r.model === 'gen')?.body as {
        messages: Array<{ content: unknown }>
      }
      return JSON.stringify(body.messages.at(-1)?.content)
    }
    expect(await parts(true)).toContain('data:image/png;base64,iVBORw==')
    expect(await parts(false)).not.toContain('image_url')
    // The context snapshot and the call log name the image by reference: no base64 is stored.
    const sessions = await db.protocolSession.findMany({
      where: { studyId: study.id, instance: { path: ['datasetId'], equals: ds.id } },
    })
    const stored = JSON.stringify(
      await db.contextSnapshot.findMany({ where: { sessionId: { in: sessions.map((x) => x.id) } } }),
    )
    expect(stored).toContain('asset:x.png')
    expect(stored).not.toContain('base64')
    const calls = JSON.stringify(
      await db.llmCall.findMany({ where: { sessionRef: { in: sessions.map((x) => x.id) } } }),
    )
    expect(calls).toMatch(/asset:x\.png#sha256=[0-9a-f]{64}/)
    expect(calls).not.toContain('base64')
  })

  it('a reply with NUL characters does not stall the session: every attempt is in the call log, NUL escaped', async () => {
    const { study, conn } = await setup()
    // PostgreSQL refuses U+0000 in text and jsonb; a model can still send it (here: JSON "\u0000").
    fake().setScript([
      {
        match: { model: 'gen' },
        replies: [{ text: `Prediction: Atelec\u0000tasis\nExplanation: Volume loss\u0000 on the left.` }],
      },
      { match: { model: 'judge' }, replies: [{ text: 'Yes\u0000' }] },
    ])
    const s = await session(study.id, conn.id)
    const end = await runSession(s.id)
    expect(end).toEqual({ kind: 'done', reason: 'mutual-ratify' })
    const messages = await db.protocolMessage.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } })
    expect(messages.map((m) => m.label)).toEqual(['INIT', 'RATIFY', 'RATIFY'])
    // The parsed answer is without NUL (so it MATCHes the ground truth); the raw reply keeps it, escaped.
    expect(messages[0]).toMatchObject({ value: 'Atelectasis', detail: 'Volume loss on the left.' })
    expect((messages[0]?.payload as { raw?: string } | undefined)?.raw).toBe(
      'Prediction: Atelec\\u0000tasis\nExplanation: Volume loss\\u0000 on the left.',
    )
    expect(await db.contextSnapshot.count({ where: { sessionId: s.id } })).toBe(3)
    // Every attempt is recorded: the generator's reply and the checker's, NUL as the text \u0000.
    const calls = await db.llmCall.findMany({ where: { sessionRef: s.id }, orderBy: { createdAt: 'asc' } })
    const replies = calls.map(
      (c) => (c.response as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content,
    )
    expect(calls.every((c) => c.status === 'ok')).toBe(true)
    expect(replies).toContain('Prediction: Atelec\\u0000tasis\nExplanation: Volume loss\\u0000 on the left.')
    expect(replies).toContain('Yes\\u0000')
    expect(messages[0]?.llmCallId).toBe(calls.find((c) => c.purpose === 'pxp-generate')?.id)
  })
})
