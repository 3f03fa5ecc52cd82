import { afterAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { runSession } from '@/lib/server/engine/runner'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import type { EvinceCompareView } from '@/protocols/evince/server/plugin'
import { mergeDebateLabels } from '@/protocols/evince/server/operations'
import type { PxpCompare } from '@/protocols/pxp/server/dashboard'
import { compareChoices, compareRuns, createRun } from '@/lib/server/services/runs'
import { debateRules, loadDebateFixture } from '../../protocols/evince/tests/support'
import { makeStudy, makeUser } from '../support/fixtures'
import { importAndWait, useBulkWorkers } from '../support/imports'
import { fakeConnection, useFakeLlm } from '../support/llm'

const fake = useFakeLlm()
useBulkWorkers()
afterAll(async () => {
  await stopBoss()
})

/** A finished PXP run whose sessions hold exactly these tag sequences (message j from m when odd). */
async function pxpRun(
  studyId: string,
  name: string,
  sessions: string[][],
  task = 'drug',
  config: Record<string, unknown> = { n: 10, k: 3 },
) {
  const e = await db.run.create({
    data: {
      studyId,
      name,
      protocol: 'pxp',
      task,
      datasetId: 'none',
      config: config as object,
      seats: {},
      repetitions: 1,
      status: 'done',
    },
  })
  for (const [position, tags] of sessions.entries()) {
    const s = await db.protocolSession.create({
      data: {
        studyId,
        runId: e.id,
        protocol: 'pxp',
        protocolVersion: '1',
        config: { n: 10, k: 3 },
        task: 'drug',
        instance: {},
        seats: {},
        repetition: 1,
        position,
        status: 'done',
      },
    })
    await db.protocolMessage.createMany({
      data: tags.map((tag, i) => ({
        sessionId: s.id,
        seq: i + 1,
        sender: i % 2 === 0 ? 'm' : 'h',
        receiver: i % 2 === 0 ? 'h' : 'm',
        label: tag,
      })),
    })
  }
  return e.id
}

describe('compare two runs', () => {
  it('PXP: the Fig. 4 numbers of A and B, each as its own dashboard computes them', async () => {
    const researcher = await makeUser('researcher')
    const viewer = await makeUser('viewer')
    const study = await makeStudy(researcher, [viewer])
    // A: one two-way session (both ratify) and one where h rejects. B: both two-way.
    const a = await pxpRun(study.id, 'model A', [
      ['INIT', 'RATIFY', 'RATIFY'],
      ['INIT', 'REFUTE', 'REFUTE', 'REJECT'],
    ])
    const b = await pxpRun(study.id, 'model B', [
      ['INIT', 'RATIFY', 'RATIFY'],
      ['INIT', 'REFUTE', 'REVISE', 'RATIFY'],
    ])
    const r = await execute(compareRuns, viewer, { a, b })
    if (!r.ok) throw new Error(r.error)
    expect(r.data).toMatchObject({ protocol: 'pxp', a: { id: a, name: 'model A' }, b: { id: b, name: 'model B' } })
    const d = r.data.data as PxpCompare
    expect(d.a.report?.twoWay.median).toBe(1)
    expect(d.b.report?.twoWay.median).toBe(2)
    expect(d.a.proportions?.twoWay).toBe(0.5)
    expect(d.b.proportions?.twoWay).toBe(1)
    // B's m revised once and only ratified/revised: ultra-strong for m in one session.
    expect(d.b.report?.ultraStrong.machine.median).toBe(1)
    expect(d.a.report?.ultraStrong.machine.median).toBe(0)
  })

  it('refuses runs of different protocols (400) and runs the actor cannot read (404)', async () => {
    const researcher = await makeUser('researcher')
    const stranger = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const other = await makeStudy(stranger)
    const a = await pxpRun(study.id, 'A', [['INIT', 'RATIFY', 'RATIFY']])
    const hidden = await pxpRun(other.id, 'hidden', [['INIT', 'RATIFY', 'RATIFY']])
    const debate = await db.run.create({
      data: {
        studyId: study.id,
        name: 'a debate',
        protocol: 'evince',
        task: 'diagnosis',
        datasetId: 'none',
        config: {},
        seats: {},
        repetitions: 1,
        status: 'done',
      },
    })
    expect(await execute(compareRuns, researcher, { a, b: debate.id })).toMatchObject({
      ok: false,
      status: 400,
      error: expect.stringMatching(/same protocol/),
    })
    expect(await execute(compareRuns, researcher, { a, b: hidden })).toMatchObject({ ok: false, status: 404 })
    expect(await execute(compareRuns, stranger, { a, b: hidden })).toMatchObject({ ok: false, status: 404 })
    const expert = await makeUser('expert')
    expect(await execute(compareRuns, expert, { a, b: a })).toMatchObject({ ok: false, status: 403 })
  })

  it('PXP compares runs on one task only: RAD is not offered against DRUG, nor one template against another', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const tags = [['INIT', 'RATIFY', 'RATIFY']]
    const drugA = await pxpRun(study.id, 'drug A', tags)
    const drugB = await pxpRun(study.id, 'drug B', tags)
    const rad = await pxpRun(study.id, 'rad', tags, 'rad')
    const template = (name: string) => ({ n: 10, k: 3, template: { name, labels: ['yes', 'no'] } })
    const sentiment = await pxpRun(study.id, 'sentiment', tags, 'generic', template('Sentiment'))
    const topic = await pxpRun(study.id, 'topic', tags, 'generic', template('Topic'))

    expect(await execute(compareRuns, researcher, { a: drugA, b: drugB })).toMatchObject({ ok: true })
    expect(await execute(compareRuns, researcher, { a: rad, b: drugA })).toMatchObject({
      ok: false,
      status: 400,
      error: 'These runs do not compare: A runs on RAD, B on DRUG.',
      fieldErrors: { b: ['Choose a run on RAD.'] },
    })
    expect(await execute(compareRuns, researcher, { a: sentiment, b: topic })).toMatchObject({
      ok: false,
      status: 400,
      error: 'These runs do not compare: A runs on template “Sentiment”, B on template “Topic”.',
    })

    // What the compare page offers: each run with what it compares with.
    const choices = await execute(compareChoices, researcher, {})
    if (!choices.ok) throw new Error(choices.error)
    const ofStudy = choices.data.filter((r) => [drugA, drugB, rad, sentiment, topic].includes(r.id))
    const key = (id: string) => ofStudy.find((r) => r.id === id)?.comparable
    expect(key(drugA)).toEqual({ key: 'drug', label: 'DRUG' })
    expect(key(drugB)).toEqual(key(drugA))
    expect(key(rad)).toEqual({ key: 'rad', label: 'RAD' })
    expect(key(sentiment)?.key).not.toBe(key(topic)?.key)
    const comparableWith = (id: string) =>
      ofStudy.filter((r) => r.id !== id && r.comparable.key === key(id)?.key).map((r) => r.name)
    expect(comparableWith(drugA)).toEqual(['drug B'])
    expect(comparableWith(rad)).toEqual([])
    // A stranger's runs are not offered.
    const stranger = await makeUser('researcher')
    const theirs = await execute(compareChoices, stranger, {})
    expect(theirs.ok && theirs.data.some((r) => r.id === drugA)).toBe(false)
  })

  it('EVINCE: the accuracy tables of A and B, each with its own label merges', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const csv = [
      'symptoms,label',
      `"${loadDebateFixture('dengue').symptoms}",Dengue Fever`,
      `"${loadDebateFixture('jaundice').symptoms}",Jaundice`,
    ].join('\n')
    const imp = await importAndWait(researcher, {
      studyId: study.id,
      name: 'appendix cases',
      kind: 'cases',
      file: new File([csv], 'cases.csv'),
    })
    if (!imp.ok) throw new Error(imp.error)
    fake().setScript([...debateRules(loadDebateFixture('dengue')), ...debateRules(loadDebateFixture('jaundice'))])
    const batch = async (actor: Actor, name: string) => {
      const r = await execute(createRun, actor, {
        protocol: 'evince',
        studyId: study.id,
        name,
        A: { kind: 'llm', connectionId: conn.id, model: 'gen-a' },
        B: { kind: 'llm', connectionId: conn.id, model: 'gen-b' },
        judge: { connectionId: conn.id, model: 'judge' },
        config: { k: 5, maxRounds: 3 },
        datasetId: imp.data.id,
        start: false,
      })
      if (!r.ok) throw new Error(r.error)
      const sessions = await db.protocolSession.findMany({ where: { runId: r.data.id } })
      for (const s of sessions) await runSession(s.id)
      return r.data.id
    }
    const a = await batch(researcher, 'A')
    const b = await batch(researcher, 'B')
    // In B's results only, "Obstructive Jaundice" counts as "Jaundice" (top-k 1/2 → 2/2, MRR .5 → .625).
    expect(
      await execute(mergeDebateLabels, researcher, { runId: b, from: 'Obstructive Jaundice', into: 'Jaundice' }),
    ).toMatchObject({ ok: true })
    const r = await execute(compareRuns, researcher, { a, b })
    if (!r.ok) throw new Error(r.error)
    const d = r.data.data as EvinceCompareView
    expect(d.a).toMatchObject({ k: 5, cases: 2 })
    const debate = (s: EvinceCompareView['a']) => s.accuracy.rows.find((x) => x.key === 'debate')
    expect(debate(d.a)).toMatchObject({ top1: 0.5, topk: 0.5, mrr: 0.5 })
    expect(debate(d.b)).toMatchObject({ top1: 0.5, topk: 1, mrr: 0.625 })
    expect(d.a.accuracy.rows.map((x) => x.key)).toEqual(d.b.accuracy.rows.map((x) => x.key))
  })
})
