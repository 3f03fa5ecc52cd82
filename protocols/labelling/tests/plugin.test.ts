import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db, sql } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { exportRun, exportRunFile } from '@/lib/server/services/run-export'
import { createRun } from '@/lib/server/services/runs'
import { claimSeat, getSession, myQueue, submitTurn } from '@/lib/server/services/sessions'
import { RELEVANCE_0_2_ASPECTS, YES_NO_UNSURE } from '@/protocols/labelling/core'
import { labellingTurnFromForm } from '@/protocols/labelling/server/plugin'
import { FIXTURE_ITEMS, labellingDataset } from '@/protocols/labelling/fixture'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

/**
 * A labelling project on the engine: N = 3 slots on 20 items (60 sessions), three annotators claim and
 * label from the queue, one person never holds two slots of an item, a lapsed claim's label is a 409
 * with nothing written, the rules refuse a bad label with a field error, the labels export has one row
 * per label, the qrels file grades the pairs, and no gold label reaches an annotator's page.
 */
let researcher: Actor
let a: Actor
let b: Actor
let c: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  a = await makeUser('expert')
  b = await makeUser('expert')
  c = await makeUser('expert')
  studyId = (await makeStudy(researcher, [a, b, c])).id
})
afterEach(() => {
  delete process.env.PARLEY_SEAT_LEASE_SECONDS
})
afterAll(async () => {
  await stopBoss()
})

async function project(items: number, slots: number, config: Record<string, unknown> = { preset: 'relevance-0-2' }) {
  const datasetId = await labellingDataset(studyId, items, `items ${Math.random()}`)
  const r = await execute(createRun, researcher, {
    studyId,
    protocol: 'labelling',
    name: 'relevance',
    datasetId,
    config,
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: slots,
    distinctClaimants: true,
    fillFirst: slots,
    start: true,
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const rows = await db.protocolSession.findMany({
    where: { runId: r.data.id },
    orderBy: [{ position: 'asc' }, { repetition: 'asc' }],
    select: { id: true, position: true, repetition: true },
  })
  return { runId: r.data.id, rows }
}

const claim = (who: Actor, sessionId: string) => execute(claimSeat, who, { sessionId, seat: 'annotator' })
const label = (who: Actor, sessionId: string, answers: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  execute(submitTurn, who, { sessionId, seq: 1, answers, ...more })
async function offered(who: Actor, runId: string) {
  const q = await execute(myQueue, who, { filter: 'claimable', pageSize: 100 })
  if (!q.ok) throw new Error(q.error)
  return q.data.items.filter((i) => i.runId === runId)
}
async function rows(runId: string, table: string) {
  const r = await execute(exportRun, researcher, { runId, table, format: 'jsonl' })
  if (!r.ok) throw new Error(r.error)
  const out: Record<string, unknown>[] = []
  for await (const l of r.data.lines()) out.push(JSON.parse(String(l)))
  return out
}

describe('a labelling project: 20 items × 3 slots', () => {
  it('three annotators label through the queue; nobody takes two slots of an item; the export has every label', async () => {
    const { runId, rows: sessions } = await project(20, 3)
    expect(sessions).toHaveLength(60)
    // Each annotator works through the queue: claim the first offered slot, label it with a grade.
    const grade: Record<string, number> = { [a.userId]: 2, [b.userId]: 1, [c.userId]: 0 }
    for (let round = 0; round < 20; round++)
      for (const who of [a, b, c]) {
        const next = (await offered(who, runId))[0]
        if (!next) throw new Error('nothing offered')
        expect((await claim(who, next.id)).ok).toBe(true)
        const sent = await label(who, next.id, { O: String(grade[who.userId]) }, { elapsedMs: '1500' })
        expect(sent.ok, JSON.stringify(sent)).toBe(true)
      }
    expect(await db.protocolSession.count({ where: { runId, status: 'done' } })).toBe(60)
    // Every item has three labels by three different people.
    const written = await db.protocolMessage.findMany({
      where: { session: { runId } },
      select: { authorUserId: true, session: { select: { position: true } } },
    })
    const byItem = new Map<number, Set<string>>()
    for (const m of written)
      byItem.set(m.session.position, (byItem.get(m.session.position) ?? new Set()).add(m.authorUserId ?? ''))
    expect([...byItem.values()].map((s) => s.size)).toEqual(Array(20).fill(3))

    const labels = await rows(runId, 'labels')
    expect(labels).toHaveLength(60)
    const first = labels[0] as Record<string, unknown>
    expect(Object.keys(first)).toEqual([
      'item',
      'session',
      'slot',
      'annotator',
      'person',
      'kind',
      'schemaVersion',
      'answer_O',
      'rationale',
      'reason',
      'judges',
      'elapsedMs',
      'createdAt',
    ])
    expect(first).toMatchObject({ kind: 'label', schemaVersion: 1, elapsedMs: 1500, rationale: null })
    expect(
      labels
        .filter((l) => l.person === a.userId)
        .every((l) => l.answer_O === 2 && l.annotator === `person:${a.userId}`),
    ).toBe(true)
    expect(new Set(labels.map((l) => l.item)).size).toBe(20)

    // qrels: each (topic, doc) has the mean of 2, 1, 0 = 1 → graded 1, binary (≥ 1) 1. Twenty items cycle
    // over five fixture pairs (ids made unique per index, the topic and doc ids repeat): five lines.
    const file = await execute(exportRunFile, researcher, { runId, file: 'qrels' })
    if (!file.ok) throw new Error(file.error)
    const text = new TextDecoder().decode(file.data.bytes)
    const pairs = [...new Set(FIXTURE_ITEMS.map((i) => (i.kind === 'query-doc' ? `${i.topicId} 0 ${i.docId}` : '')))]
    expect(text).toBe(
      `${pairs
        .sort()
        .map((p) => `${p} 1`)
        .join('\n')}\n`,
    )
  })

  it('one person cannot hold two slots of one item', async () => {
    const { rows: sessions } = await project(2, 3)
    const item0 = sessions.filter((s) => s.position === 0).map((s) => s.id)
    expect((await claim(a, item0[0] as string)).ok).toBe(true)
    const second = await claim(a, item0[1] as string)
    expect(second).toMatchObject({ ok: false, status: 409 })
    expect((await claim(b, item0[1] as string)).ok).toBe(true)
    // Labelled, the slot still counts: a cannot take the third slot either.
    expect((await label(a, item0[0] as string, { O: 2 })).ok).toBe(true)
    expect(await claim(a, item0[2] as string)).toMatchObject({ ok: false, status: 409 })
  })

  it('a claim that lapsed is refused on submit: 409, nothing written', async () => {
    process.env.PARLEY_SEAT_LEASE_SECONDS = '60'
    const { rows: sessions } = await project(1, 1)
    const s = sessions[0]?.id as string
    expect((await claim(a, s)).ok).toBe(true)
    await sql().query(`UPDATE "SessionSeat" SET "leaseUntil" = now() - interval '1 second' WHERE "sessionId" = $1`, [s])
    const late = await label(a, s, { O: 2 })
    expect(late).toMatchObject({ ok: false, status: 409 })
    expect(await db.protocolMessage.count({ where: { sessionId: s } })).toBe(0)
    expect(await db.auditLog.count({ where: { action: 'session.turn', resourceId: s } })).toBe(0)
  })

  it('refuses a label the schema does not allow, naming the field; nothing written', async () => {
    const { rows: sessions } = await project(1, 1, { schema: { ...RELEVANCE_0_2_ASPECTS, rationale: 'required' } })
    const s = sessions[0]?.id as string
    expect((await claim(a, s)).ok).toBe(true)
    const missing = await label(a, s, { M: 2, O: 1 }, { rationale: 'on topic' })
    expect(missing).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { 'answer.T': [expect.stringMatching(/T is required/)] },
    })
    const invalid = await label(a, s, { M: 2, T: 5, O: 1 }, { rationale: 'on topic' })
    expect(invalid).toMatchObject({ ok: false, status: 400, fieldErrors: { 'answer.T': [expect.any(String)] } })
    const noWhy = await label(a, s, { M: 2, T: 1, O: 1 }, { rationale: '   ' })
    expect(noWhy).toMatchObject({ ok: false, status: 400, fieldErrors: { rationale: [expect.any(String)] } })
    expect(await db.protocolMessage.count({ where: { sessionId: s } })).toBe(0)
    expect((await label(a, s, { M: '2', T: '1', O: '1' }, { rationale: 'on topic' })).ok).toBe(true)
    const body = (await db.protocolMessage.findFirstOrThrow({ where: { sessionId: s } })).body
    // The form's text values are stored as the options they name.
    expect(body).toMatchObject({ answers: { M: 2, T: 1, O: 1 }, rationale: 'on topic', schemaVersion: 1 })
  })

  it('an annotator’s page holds neither the gold label nor another annotator’s label', async () => {
    const { rows: sessions } = await project(1, 2)
    const [s1, s2] = sessions.map((s) => s.id) as [string, string]
    const gold = (await db.instance.findFirstOrThrow({ where: { dataset: { studyId }, index: 0 } })).prediction
    expect(gold).toBe('2')
    expect((await claim(a, s1)).ok).toBe(true)
    expect((await label(a, s1, { O: 0 }, { rationale: undefined })).ok).toBe(true)
    expect((await claim(b, s2)).ok).toBe(true)
    const page = await execute(getSession, b, { sessionId: s2 })
    if (!page.ok) throw new Error(page.error)
    expect(page.data.yourTurn).toBe(true)
    const text = JSON.stringify(page.data)
    expect(text).not.toContain('gold')
    expect(text).not.toContain('"prediction"')
    // a's label (O = 0) is in a's session only: b's page has no message and no label.
    expect(page.data.messages).toEqual([])
    expect((page.data.view as { label: unknown }).label).toBeNull()
    expect((page.data.view as { item: unknown }).item).toEqual(
      (({ gold: _g, ...item }) => item)(FIXTURE_ITEMS[0] as (typeof FIXTURE_ITEMS)[number]),
    )
    // b cannot open a's session at all.
    expect(await execute(getSession, b, { sessionId: s1 })).toMatchObject({ ok: false, status: 404 })
    expect((page.data.view as { progress: unknown }).progress).toEqual({ done: 1, remaining: 1, total: 2 })
  })

  it('a transcript with per-turn labels: the form’s fields, the message, the turn-labels export', async () => {
    const ds = await db.dataset.create({
      data: {
        studyId,
        name: 'transcripts',
        kind: 'labelling-items',
        source: 'inline',
        instances: {
          create: [
            {
              index: 0,
              input: {
                kind: 'transcript',
                id: 'tr1',
                sessionId: 'old-session',
                protocol: 'evince',
                title: 'A short debate',
                turns: [
                  { index: 0, who: 'moderator', text: 'Which diagnosis?' },
                  { index: 1, who: 'agent A', text: 'Influenza.' },
                ],
              },
              prediction: '"yes"',
              explanation: '',
              meta: {},
            },
          ],
        },
      },
    })
    const r = await execute(createRun, researcher, {
      studyId,
      protocol: 'labelling',
      name: 'per turn',
      datasetId: ds.id,
      config: { schema: { ...YES_NO_UNSURE, perTurn: true } },
      seats: { annotator: { kind: 'human', userId: c.userId } },
      start: true,
    })
    if (!r.ok) throw new Error(r.error)
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id } })
    const input = labellingTurnFromForm({
      'answer.answer': 'yes',
      'turn.0.answer': 'unsure',
      'turn.1.answer': 'no',
      rationale: 'turn 1 is a guess',
      elapsedMs: '900',
    })
    expect(input).toEqual({
      answers: { answer: 'yes' },
      turns: { 0: { answer: 'unsure' }, 1: { answer: 'no' } },
      rationale: 'turn 1 is a guess',
      elapsedMs: '900',
    })
    const bad = await execute(submitTurn, c, {
      sessionId: s.id,
      seq: 1,
      answers: { answer: 'yes' },
      turns: { 7: { answer: 'no' } },
    })
    expect(bad).toMatchObject({ ok: false, status: 400, fieldErrors: { turns: [expect.stringMatching(/no turn 7/)] } })
    expect((await execute(submitTurn, c, { sessionId: s.id, seq: 1, ...(input as object) })).ok).toBe(true)
    expect(await rows(r.data.id, 'turn-labels')).toEqual([
      { item: 'tr1', session: s.id, annotator: `person:${c.userId}`, turn: 0, question: 'answer', value: 'unsure' },
      { item: 'tr1', session: s.id, annotator: `person:${c.userId}`, turn: 1, question: 'answer', value: 'no' },
    ])
    const [row] = await rows(r.data.id, 'labels')
    expect(row).toMatchObject({ item: 'tr1', answer_answer: 'yes', rationale: 'turn 1 is a guess', elapsedMs: 900 })
  })
})
