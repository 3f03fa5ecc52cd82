import { describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { type LabellingMessage, RELEVANCE_0_2, RELEVANCE_0_2_ASPECTS, YES_NO_UNSURE } from '@/protocols/labelling/core'
import { labellingDataset } from '@/protocols/labelling/fixture'
import { labellingSetupFromForm } from '@/protocols/labelling/server/setup'
import {
  labellingDemo,
  readSchemaAnswers,
  relevancePromptApplies,
  schemaPrompt,
} from '@/protocols/labelling/server/llm-labeller'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()

async function world(n: number) {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher, [])
  const conn = await fakeConnection(study.id, fake())
  const datasetId = await labellingDataset(study.id, n)
  return { researcher, studyId: study.id, connectionId: conn.id, datasetId }
}
type World = Awaited<ReturnType<typeof world>>

async function llmRun(w: World, config: Record<string, unknown>) {
  const r = await execute(createRun, w.researcher, {
    studyId: w.studyId,
    protocol: 'labelling',
    name: 'LLM labeller',
    datasetId: w.datasetId,
    config,
    seats: { annotator: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } } },
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  return r.data.id as string
}

/** Each session's one message (in item order), with the session's status. */
async function outcomes(runId: string) {
  const sessions = await db.protocolSession.findMany({
    where: { runId },
    include: { messages: true },
    orderBy: { position: 'asc' },
  })
  return sessions.map((s) => ({
    status: s.status,
    item: (s.instance as { id: string }).id,
    message: s.messages[0]?.body as unknown as LabellingMessage | undefined,
  }))
}

const completions = () =>
  fake()
    .requests.filter((r) => r.path.endsWith('/chat/completions'))
    .map(
      (r) =>
        r.body as {
          messages: Array<{ content: string }>
          temperature?: number
          top_p?: number
          frequency_penalty?: number
          presence_penalty?: number
          stop?: unknown
        },
    )

describe('the LLM labeller (Thomas et al.) in the annotator seat', () => {
  it('labels with the paper prompt and decoding; a reply it cannot read is dropped and counted, never a label', async () => {
    const w = await world(3)
    // Item 1 (bees / nectar) gets a clean label, item 2 (honey cake) a reply that is prose, item 3 a grade 2.
    fake().setScript([
      { match: { model: 'gen', contains: 'Forager bees' }, replies: [{ text: '"O": 2}]' }] },
      { match: { model: 'gen', contains: 'honey cake' }, replies: [{ text: 'I think this page is fine.' }] },
      { match: { model: 'gen' }, replies: [{ text: '"O": 1}]' }] },
    ] as FakeRule[])
    fake().reset()
    const runId = await llmRun(w, { preset: 'relevance-0-2', labeller: { variant: '-DNA-' } })
    expect(await runHeadless(runId)).toMatchObject({ done: 3, stalled: 0 })
    const out = await outcomes(runId)
    expect(out.map((o) => o.status)).toEqual(['done', 'done', 'done'])
    expect(out[0]?.message).toMatchObject({ kind: 'label', answers: { O: 2 } })
    expect(out[1]?.message).toMatchObject({ kind: 'unparseable' })
    expect(out[2]?.message).toMatchObject({ kind: 'label', answers: { O: 1 } })
    // The paper's decoding and prompt: it ends with the open "[{", the item's description is in it (D).
    const sent = completions()
    expect(sent).toHaveLength(3)
    for (const b of sent) {
      expect(b).toMatchObject({ temperature: 0, top_p: 1, frequency_penalty: 0.5, presence_penalty: 0 })
      expect(b.stop).toBeUndefined()
      expect(b.messages.at(-1)?.content.trimEnd().endsWith('[{')).toBe(true)
    }
    // Sessions run concurrently: find the bees item's request by its page.
    const bees = sent.find((b) => b.messages[0]?.content.includes('Forager bees'))?.messages[0]?.content
    expect(bees).toContain('They were looking for: How nectar becomes honey in a hive.')
    expect(bees).toContain('(M).')
    expect(bees).not.toContain('You are a search quality rater')
  })

  it('with five judges (M) and aspects (A) the label is the judges’ mean; aspects count only where the schema asks', async () => {
    const w = await world(1)
    const judges =
      '"M": 2, "T": 1, "O": 2}, {"M": 1, "T": 1, "O": 1}, {"M": 2, "T": 0, "O": 2}, {"M": 2, "T": 1, "O": 1}, {"M": 2, "T": 1, "O": 2}]'
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: judges }] }] as FakeRule[])
    fake().reset()
    const plain = await llmRun(w, { schema: RELEVANCE_0_2, labeller: { variant: 'R--AM' } })
    expect(await runHeadless(plain)).toMatchObject({ done: 1 })
    const [a] = await outcomes(plain)
    // Only O under a schema without aspects: mean of 2,1,2,1,2 = 1.6.
    expect(a?.message).toMatchObject({ kind: 'label', answers: { O: 1.6 } })
    const label = a?.message as { answers: object; judges?: unknown[] }
    expect(Object.keys(label.answers)).toEqual(['O'])
    expect(label.judges).toHaveLength(5)
    expect(completions()[0]?.messages[0]?.content).toContain('You are a search quality rater')
    expect(completions()[0]?.messages[0]?.content).toContain('five search engine raters')

    const withAspects = await llmRun(w, { schema: RELEVANCE_0_2_ASPECTS, labeller: { variant: '---AM' } })
    expect(await runHeadless(withAspects)).toMatchObject({ done: 1 })
    const [b] = await outcomes(withAspects)
    expect(b?.message).toMatchObject({ kind: 'label', answers: { M: 1.8, T: 0.8, O: 1.6 } })
  })

  it('a reply that reads but breaks the schema is refused by apply: the session stalls with nothing stored', async () => {
    const w = await world(1)
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: '"O": 2}]' }] }] as FakeRule[])
    fake().reset()
    // A schema whose overall question is nominal: the schema prompt, answered with a value it does not offer.
    const runId = await llmRun(w, { schema: YES_NO_UNSURE })
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: '{"answer": "perhaps"}' }] }] as FakeRule[])
    const r = await runHeadless(runId)
    expect(r).toMatchObject({ done: 0, stalled: 1 })
    const [o] = await outcomes(runId)
    expect(o?.status).toBe('stalled')
    expect(o?.message).toBeUndefined()
  })

  it('a variant code that is not one is refused at set-up with the reason', async () => {
    const w = await world(1)
    const r = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'labelling',
      name: 'bad',
      datasetId: w.datasetId,
      config: { preset: 'relevance-0-2', labeller: { variant: 'DNA' } },
      seats: { annotator: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } } },
    })
    expect(r.ok).toBe(false)
    if (!r.ok) expect(JSON.stringify(r.fieldErrors ?? r.error)).toMatch(/five characters/)
  })
})

describe('the labeller’s pure parts', () => {
  const item = {
    kind: 'query-doc' as const,
    id: 'x',
    topicId: 't',
    query: 'tidal power stations',
    docId: 'd',
    document: 'The Rance tidal power station uses a barrage.',
  }
  it('the set-up form’s variant becomes the labeller’s; a schema typed as JSON keeps it', () => {
    const base = { name: 'x', datasetId: 'd', slots: '1', 'seat.annotator.way': 'claimable' }
    expect(labellingSetupFromForm({ ...base, variant: 'R---M' }).config).toEqual({
      preset: 'relevance-0-2',
      labeller: { variant: 'R---M' },
    })
    const own = labellingSetupFromForm({ ...base, variant: '-D---', schemaJson: JSON.stringify(RELEVANCE_0_2) })
    expect(own.config).toEqual({ schema: RELEVANCE_0_2, labeller: { variant: '-D---' } })
  })

  it('the paper prompt applies only to query–document items under a 0–2 overall scale', () => {
    expect(relevancePromptApplies(RELEVANCE_0_2, item)).toBe(true)
    expect(relevancePromptApplies(YES_NO_UNSURE, item)).toBe(false)
    expect(relevancePromptApplies(RELEVANCE_0_2, { kind: 'text', id: 'x', text: 'hello', format: 'plain' })).toBe(false)
  })

  it('reads a schema reply as the options it names, and says why when it cannot', () => {
    expect(readSchemaAnswers(YES_NO_UNSURE, '```json\n{"answer": "yes"}\n```')).toEqual({
      ok: true,
      value: { answer: 'yes' },
    })
    expect(readSchemaAnswers(RELEVANCE_0_2, '{"O": "2", "extra": 1}')).toEqual({ ok: true, value: { O: 2 } })
    expect(readSchemaAnswers(RELEVANCE_0_2, 'no json here')).toMatchObject({ ok: false })
    expect(readSchemaAnswers(RELEVANCE_0_2, '{"O": 2')).toMatchObject({ ok: false })
    expect(readSchemaAnswers(RELEVANCE_0_2, '[1, 2]')).toMatchObject({ ok: false })
  })

  it('the demo model answers the paper prompt by word overlap, deterministically, and answers its schema prompt', () => {
    const ask = (document: string) => ({
      messages: [
        {
          role: 'user',
          content: `# Query\nA person has typed tidal power stations into a search engine.\n\n# Result\n---BEGIN WEB PAGE CONTENT---\n${document}\n---END WEB PAGE CONTENT---\n\n# Results\n[{`,
        },
      ],
    })
    expect(labellingDemo(ask('The Rance tidal power station uses a barrage.'))).toBe('"O": 2}]')
    expect(labellingDemo(ask('A recipe for soup.'))).toBe('"O": 0}]')
    expect(labellingDemo(ask('Tides and stations.'))).toBe(labellingDemo(ask('Tides and stations.')))
    const prompt = schemaPrompt(YES_NO_UNSURE, { kind: 'text', id: 'x', text: 'Is water wet?', format: 'plain' })
    const reply = labellingDemo({ messages: [{ role: 'user', content: prompt }] })
    expect(readSchemaAnswers(YES_NO_UNSURE, reply ?? '')).toMatchObject({ ok: true })
    expect(labellingDemo({ messages: [{ role: 'user', content: 'What is 2 + 2?' }] })).toBeUndefined()
  })
})
