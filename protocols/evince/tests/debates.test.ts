import { describe, expect, it } from 'vitest'
import { roundMetrics } from '@/protocols/evince/core/metrics'
import { db } from '@/lib/server/db'
import { DEMO_CONNECTION_ID, ensureDemoConnection } from '@/lib/server/llm/runtime'
import { execute } from '@/lib/server/operation'
import { runSession } from '@/lib/server/engine/runner'
import type { EvinceRunView, EvinceSessionView } from '@/protocols/evince/server/plugin'
import { mergeDebateLabels } from '@/protocols/evince/server/operations'
import { stopBoss } from '@/lib/server/jobs/queue'
import { exportRun } from '@/lib/server/services/run-export'
import { createRun, getRun, viewRun } from '@/lib/server/services/runs'
import { getSession, submitTurn } from '@/lib/server/services/sessions'
import type { Actor } from '@/lib/server/actor'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { debateRules, loadDebateFixture } from './support'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'
import { afterAll } from 'vitest'

const fake = useFakeLlm()
// Imports are jobs: this process works their queue.
useBulkWorkers()
afterAll(async () => {
  await stopBoss()
})

/** A debate run through the generic run operation. */
const createDebate = {
  run: (actor: Actor, input: Record<string, unknown>) => execute(createRun, actor, { protocol: 'evince', ...input }),
}
async function debateView(actor: Actor, sessionId: string) {
  const v = await execute(getSession, actor, { sessionId })
  return v.ok ? { ok: true as const, data: v.data.view as EvinceSessionView } : v
}
async function debateResults(actor: Actor, runId: string) {
  const [g, v] = await Promise.all([execute(getRun, actor, { runId }), execute(viewRun, actor, { runId })])
  if (!g.ok) return g
  if (!v.ok) return v
  return { ok: true as const, data: { counts: g.data.counts, ...(v.data.data as EvinceRunView) } }
}
async function exportLines(actor: Actor, runId: string, table: string, format: 'csv' | 'jsonl') {
  const r = await execute(exportRun, actor, { runId, table, format })
  if (!r.ok) throw new Error(r.error)
  const lines: string[] = []
  for await (const l of r.data.lines()) lines.push(l)
  return lines
}

async function setup() {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  return { researcher, expert, study, conn }
}

async function newDebate(
  ctx: Awaited<ReturnType<typeof setup>>,
  f: ReturnType<typeof loadDebateFixture>,
  over: Record<string, unknown> = {},
) {
  const r = await createDebate.run(ctx.researcher, {
    studyId: ctx.study.id,
    name: 'appendix replay',
    A: { kind: 'llm', connectionId: ctx.conn.id, model: 'gen-a', temperature: 0.2 },
    B: { kind: 'llm', connectionId: ctx.conn.id, model: 'gen-b', temperature: 1 },
    judge: { connectionId: ctx.conn.id, model: 'judge' },
    config: { k: f.k, maxRounds: f.rounds.length },
    case: { symptoms: f.symptoms, truth: f.groundTruth },
    start: false,
    ...over,
  })
  if (!r.ok) throw new Error(r.error)
  return r.data
}

describe('EVINCE debates end to end through the fake LLM server', () => {
  for (const name of ['dengue', 'jaundice'] as const) {
    it(`replays the paper's ${name} debate: the recorded distributions and metrics are the paper's`, async () => {
      const ctx = await setup()
      const f = loadDebateFixture(name)
      fake().setScript(debateRules(f))
      const { firstSessionId } = await newDebate(ctx, f)
      const end = await runSession(firstSessionId as string)
      // Dengue: both agents hold 60/35/5 in round 3 (agreement); Jaundice: three rounds as printed.
      expect(end).toEqual({ kind: 'done', reason: name === 'dengue' ? 'agreement' : 'max-rounds' })
      const v = await debateView(ctx.researcher, firstSessionId as string)
      if (!v.ok) throw new Error(v.error)
      expect(v.data.rounds).toHaveLength(f.rounds.length)
      for (const [i, r] of f.rounds.entries()) {
        const got = v.data.rounds[i]
        // Stored sorted by probability (stable), as the paper lists them.
        expect(got?.A?.predictions.map((p) => [p.label, p.probability])).toEqual(
          r.A.map((p) => [p.label, p.probability]),
        )
        expect(got?.B?.predictions.map((p) => [p.label, p.probability])).toEqual(
          r.B.map((p) => [p.label, p.probability]),
        )
        expect(got?.metrics).toEqual(roundMetrics(r.A, r.B, { epsilon: 0.001 }))
        expect(got?.delta).toBeCloseTo([0.9, 0.9, 0.675][i] ?? -1, 12)
        expect(got?.critA?.score).toBeCloseTo(0.56, 12) // 8 · 7 / 100, no rivals
      }
      if (name === 'jaundice') {
        expect(v.data.rounds[0]?.metrics?.klAB).toBeCloseTo(1.4632, 4)
        expect(v.data.rounds[1]?.metrics?.klAB).toBeCloseTo(1.4668, 4)
      }
      expect(v.data.report?.labTests).toEqual(['complete blood count', 'serology'])
      expect(v.data.final?.crit[0]?.label).toBe(name === 'dengue' ? 'Dengue Fever' : 'Hepatitis C')
      // M, C and the call log line up: one context per message, every LLM message points at its call.
      const messages = await db.protocolMessage.findMany({
        where: { sessionId: firstSessionId as string },
        orderBy: { seq: 'asc' },
      })
      const contexts = await db.contextSnapshot.count({ where: { sessionId: firstSessionId as string } })
      expect(contexts).toBe(messages.length)
      expect(messages.every((m) => m.llmCallId)).toBe(true)
      // B's round-1 prompt carries A's round-1 distribution; A's round-1 prompt has nothing from B.
      const c1 = await db.contextSnapshot.findMany({
        where: { sessionId: firstSessionId as string, seq: { in: [1, 2] } },
        orderBy: { seq: 'asc' },
      })
      const text = (c: unknown) => JSON.stringify(c)
      expect(text(c1[0]?.context)).not.toContain("Debater B's latest")
      expect(text(c1[1]?.context)).toContain("Debater A's latest distribution (round 1)")
    })
  }

  it('the offline demo model carries a whole debate to its report', async () => {
    const ctx = await setup()
    await ensureDemoConnection()
    const r = await createDebate.run(ctx.researcher, {
      studyId: ctx.study.id,
      name: 'demo',
      A: { kind: 'llm', connectionId: DEMO_CONNECTION_ID },
      B: { kind: 'llm', connectionId: DEMO_CONNECTION_ID },
      judge: { connectionId: DEMO_CONNECTION_ID },
      config: { k: 3 },
      case: { symptoms: 'yellowish skin, dark urine, itching, abdominal pain, fatigue', truth: 'Jaundice' },
      start: false,
    })
    if (!r.ok) throw new Error(r.error)
    const end = await runSession(r.data.firstSessionId as string)
    expect(end.kind).toBe('done')
    const v = await debateView(ctx.researcher, r.data.firstSessionId as string)
    if (!v.ok) throw new Error(v.error)
    expect(v.data.report?.conclusion).toMatch(/Simulated demo model/)
    expect(v.data.rounds.length).toBeGreaterThanOrEqual(2)
  })

  it('an invalid reply is re-asked with the error, and a list longer than k is cut to the top k', async () => {
    const ctx = await setup()
    fake().setScript([
      {
        match: { model: 'gen-a' },
        replies: [
          { text: 'I think it is the flu.' },
          {
            json: {
              predictions: [
                { label: 'Flu', probability: 0.5 },
                { label: 'Cold', probability: 0.3 },
                { label: 'Covid', probability: 0.2 },
              ],
            },
          },
        ],
      },
    ])
    const r = await createDebate.run(ctx.researcher, {
      studyId: ctx.study.id,
      name: 'reask',
      A: { kind: 'llm', connectionId: ctx.conn.id, model: 'gen-a' },
      B: { kind: 'human', userId: ctx.expert.userId },
      config: { k: 2 },
      case: { symptoms: 'fever, cough' },
      start: false,
    })
    if (!r.ok) throw new Error(r.error)
    const sid = r.data.firstSessionId as string
    expect(await runSession(sid)).toEqual({ kind: 'awaiting', seat: 'B' })
    const m = await db.protocolMessage.findFirstOrThrow({ where: { sessionId: sid, seq: 1 } })
    expect((m.body as { predictions: Array<{ label: string }> }).predictions.map((p) => p.label)).toEqual([
      'Flu',
      'Cold',
    ])
    const requests = fake().requests.filter(
      (q) => q.model === 'gen-a' && JSON.stringify(q.body).includes('fever, cough'),
    )
    expect(requests).toHaveLength(2)
    expect(JSON.stringify(requests[1]?.body)).toContain('Your answer cannot be used')
  })

  it('a human debater answers in the browser: validated, one turn per message, in the metrics', async () => {
    const ctx = await setup()
    fake().setScript([
      {
        match: { model: 'gen-a', contains: 'Round 1.' },
        replies: [
          {
            json: {
              predictions: [
                { label: 'Dengue Fever', probability: 0.7 },
                { label: 'Zika Virus', probability: 0.3 },
              ],
            },
          },
        ],
      },
      {
        match: { model: 'gen-a', contains: 'Round 2.' },
        replies: [
          {
            json: {
              predictions: [
                { label: 'Dengue Fever', probability: 0.6 },
                { label: 'Chikungunya', probability: 0.4 },
              ],
            },
          },
        ],
      },
    ])
    const r = await createDebate.run(ctx.researcher, {
      studyId: ctx.study.id,
      name: 'expert vs model',
      A: { kind: 'llm', connectionId: ctx.conn.id, model: 'gen-a' },
      B: { kind: 'human', userId: ctx.expert.userId },
      config: { k: 3, maxRounds: 2 },
      case: { symptoms: 'fever, rash, pain behind the eyes', truth: 'Dengue Fever' },
      start: false,
    })
    if (!r.ok) throw new Error(r.error)
    const sid = r.data.firstSessionId as string
    expect(await runSession(sid)).toEqual({ kind: 'awaiting', seat: 'B' })
    const turn = {
      sessionId: sid,
      seq: 2,
      predictions: [
        { label: 'Dengue Fever', probability: 0.6, justification: 'retro-orbital pain' },
        { label: 'Chikungunya', probability: 0.4 },
      ],
      arguments: ['pain behind the eyes is typical of dengue'],
    }
    const bad = await execute(submitTurn, ctx.expert, {
      ...turn,
      predictions: [{ label: 'Dengue Fever', probability: 0.5 }],
    })
    expect(bad).toMatchObject({ ok: false, status: 400 })
    expect(bad.ok ? '' : bad.error).toMatch(/sum to 50\.0%/)
    const notMine = await execute(submitTurn, ctx.researcher, turn)
    expect(notMine).toMatchObject({ ok: false, status: 404 })
    expect(await execute(submitTurn, ctx.expert, turn)).toMatchObject({ ok: true })
    const again = await execute(submitTurn, ctx.expert, turn)
    expect(again).toMatchObject({ ok: false, status: 409 })
    // The job queue would continue; here the runner is stepped directly (no judge: no CRIT, no report).
    expect(await runSession(sid)).toEqual({ kind: 'awaiting', seat: 'B' })
    expect(await execute(submitTurn, ctx.expert, { ...turn, seq: 4 })).toMatchObject({ ok: true })
    expect(await runSession(sid)).toEqual({ kind: 'done', reason: 'agreement' })
    const v = await debateView(ctx.expert, sid)
    if (!v.ok) throw new Error(v.error)
    expect(v.data.truth).toBeNull() // the debating expert does not see the ground truth
    expect(v.data.rounds[0]?.metrics).toEqual(
      roundMetrics(
        [
          { label: 'Dengue Fever', probability: 0.7 },
          { label: 'Zika Virus', probability: 0.3 },
        ],
        turn.predictions,
        { epsilon: 0.001 },
      ),
    )
    expect(v.data.rounds[1]?.metrics?.wd).toBe(0)
  })

  it('a case set imports from CSV, runs as a batch, and the results page computes accuracy and exports', async () => {
    const ctx = await setup()
    const csv = [
      'symptoms,label',
      `"${loadDebateFixture('dengue').symptoms}",Dengue Fever`,
      `"${loadDebateFixture('jaundice').symptoms}",Jaundice`,
    ].join('\n')
    const imp = await importAndWait(ctx.researcher, {
      studyId: ctx.study.id,
      name: 'appendix cases',
      kind: 'cases',
      file: new File([csv], 'cases.csv'),
    })
    if (!imp.ok) throw new Error(imp.error)
    const badCsv = await importAndWait(ctx.researcher, {
      studyId: ctx.study.id,
      name: 'broken',
      kind: 'cases',
      file: new File(['symptoms,label\n,Flu\nfever,Flu\n'], 'cases.csv'),
    })
    expect(badCsv).toMatchObject({ ok: false, status: 400 })
    fake().setScript([...debateRules(loadDebateFixture('dengue')), ...debateRules(loadDebateFixture('jaundice'))])
    const r = await createDebate.run(ctx.researcher, {
      studyId: ctx.study.id,
      name: 'batch',
      A: { kind: 'llm', connectionId: ctx.conn.id, model: 'gen-a' },
      B: { kind: 'llm', connectionId: ctx.conn.id, model: 'gen-b' },
      judge: { connectionId: ctx.conn.id, model: 'judge' },
      config: { k: 5, maxRounds: 3 },
      datasetId: imp.data.id,
      start: false,
    })
    if (!r.ok) throw new Error(r.error)
    const sessions = await db.protocolSession.findMany({
      where: { runId: r.data.id },
      orderBy: { position: 'asc' },
    })
    for (const s of sessions) await runSession(s.id)
    const g = await debateResults(ctx.researcher, r.data.id)
    if (!g.ok) throw new Error(g.error)
    expect(g.data.counts).toMatchObject({ total: 2, done: 2 })
    // Dengue: P_f top-1 Dengue Fever (rank 1). Jaundice: "Obstructive Jaundice" is not "Jaundice"
    // without an alias, so the truth is absent: top-1 1/2, MRR (1 + 0)/2.
    const debate = g.data.accuracy.rows.find((x) => x.key === 'debate')
    expect(debate).toMatchObject({ n: 2, top1: 0.5, topk: 0.5, mrr: 0.5 })
    // A alone in round 1: Dengue rank 1; Jaundice absent. B's round 1 (Gemini's Dengue list has no
    // Dengue): 0 and absent. EnToPPS of the last rounds ranks like P_f here.
    expect(g.data.accuracy.rows.map((x) => [x.key, x.top1])).toEqual([
      ['A', 0.5],
      ['B', 0],
      ['debate', 0.5],
      ['entopps', 0.5],
    ])
    expect(g.data.confusion.truths).toEqual(['dengue fever', 'jaundice'])
    // Merging "Obstructive Jaundice" into "Jaundice" for the results makes Jaundice rank 4 in P_f
    // (HCV, HBV, Cirrhosis, OJ): top-1 stays 1/2, MRR (1 + 1/4)/2 = .625. The debates are untouched.
    const merged = await execute(mergeDebateLabels, ctx.researcher, {
      runId: r.data.id,
      from: 'Obstructive Jaundice',
      into: 'Jaundice',
    })
    expect(merged).toMatchObject({ ok: true })
    const g2 = await debateResults(ctx.researcher, r.data.id)
    if (!g2.ok) throw new Error(g2.error)
    expect(g2.data.accuracy.rows.find((x) => x.key === 'debate')).toMatchObject({ top1: 0.5, topk: 1, mrr: 0.625 })
    expect(
      await execute(mergeDebateLabels, ctx.researcher, { runId: r.data.id, from: 'Jaundice', into: 'jaundice' }),
    ).toMatchObject({ ok: false, status: 400 })
    expect(await execute(mergeDebateLabels, ctx.expert, { runId: r.data.id, clear: true })).toMatchObject({
      ok: false,
      status: 403,
    })
    const lines = await exportLines(ctx.researcher, r.data.id, 'rounds', 'csv')
    expect(lines).toHaveLength(1 + 3 + 3) // header + Dengue's 3 rounds + Jaundice's 3 rounds
    // The JSONL rows keep the lists (A, B, labels) that the CSV spreads over a column per item.
    const jsonl = (await exportLines(ctx.researcher, r.data.id, 'rounds', 'jsonl')).map(
      (l) => JSON.parse(l) as Record<string, unknown>,
    )
    const csvColumns = lines[0]?.split(',') ?? []
    for (const key of Object.keys(jsonl[0] ?? {})) if (!['A', 'B'].includes(key)) expect(csvColumns, key).toContain(key)
    expect(csvColumns).toEqual(expect.arrayContaining(['A_1_label', 'A_5_probability', 'B_5_label']))
    const dengue1 = jsonl.find((x) => x.round === 1 && (x.labels as string[]).includes('Dengue Fever'))
    const d = loadDebateFixture('dengue').rounds[0]
    const { rawSumA: _a, rawSumB: _b, ...expected } = roundMetrics(d?.A ?? [], d?.B ?? [], { epsilon: 0.001 })
    expect(dengue1).toMatchObject({ ...expected, critA: 0.56, critB: 0.56 })
    const finals = await exportLines(ctx.researcher, r.data.id, 'finals', 'jsonl')
    expect(finals.map((l) => JSON.parse(l).truth).sort()).toEqual(['Dengue Fever', 'Jaundice'])
  })
})
