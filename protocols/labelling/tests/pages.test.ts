import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  agreementOfLabels,
  bootstrapKappa,
  fleissKappa,
  krippendorffAlpha,
  pairwiseKappa,
  perRaterAgreement,
} from '@/lib/metrics/agreement'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { protocolPage } from '@/lib/server/services/protocol-pages'
import { createRun, startRun } from '@/lib/server/services/runs'
import { claimSeat, getSession, submitTurn } from '@/lib/server/services/sessions'
import { labellingDataset } from '@/protocols/labelling/fixture'
import { adjudicateLabel, type AdjudicationPageData } from '@/protocols/labelling/server/adjudication'
import type { AgreementPageData, ProjectPageData } from '@/protocols/labelling/server/pages'
import { exportRun } from '@/lib/server/services/run-export'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

/**
 * The project and agreement pages of a labelling run: N = 3 annotators on 20 items (the last two
 * items short of c's label), exact progress figures, agreement figures equal to lib/metrics/agreement.ts
 * on the same labels, a hand-computed Fleiss κ, staff only, and the SQL aggregation on 10,000 × 3
 * labels seeded with one INSERT … SELECT generate_series.
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
afterAll(async () => {
  await stopBoss()
})

async function project(items: number, slots: number) {
  const datasetId = await labellingDataset(studyId, items, `items ${Math.random()}`)
  const r = await execute(createRun, researcher, {
    studyId,
    protocol: 'labelling',
    name: `relevance ${items}`,
    datasetId,
    config: { preset: 'relevance-0-2' },
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

async function labelAs(who: Actor, sessionId: string, O: number, elapsedMs: number) {
  const claimed = await execute(claimSeat, who, { sessionId, seat: 'annotator' })
  if (!claimed.ok) throw new Error(claimed.error)
  const sent = await execute(submitTurn, who, { sessionId, seq: 1, answers: { O: String(O) }, elapsedMs })
  if (!sent.ok) throw new Error(sent.error)
}

async function page<T>(who: Actor, path: string[], args: Record<string, string> = {}) {
  return execute(protocolPage, who, { studyId, protocol: 'labelling', path, args }) as Promise<
    { ok: true; data: { data: T } } | { ok: false; status: number; error: string }
  >
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y)
  const m = s.length / 2
  return s.length % 2 ? (s[Math.floor(m)] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}

describe('labelling pages: 20 items × 3 annotators', () => {
  // The grades: a, b and c per item (c leaves items 18 and 19 unlabelled).
  const gradeA = (p: number) => p % 3
  const gradeB = (p: number) => (p % 4 === 0 ? (p + 1) % 3 : p % 3)
  const gradeC = (p: number) => (p % 5 === 0 ? 0 : (p * 2) % 3)
  const ms = (who: number, p: number) => 1000 * (who + 1) + 37 * p
  let runId = ''
  let sessions: Array<{ id: string; position: number; repetition: number }> = []
  beforeAll(async () => {
    ;({ runId, rows: sessions } = await project(20, 3))
    for (const s of sessions) {
      if (s.repetition === 1) await labelAs(a, s.id, gradeA(s.position), ms(0, s.position))
      if (s.repetition === 2) await labelAs(b, s.id, gradeB(s.position), ms(1, s.position))
      if (s.repetition === 3 && s.position < 18) await labelAs(c, s.id, gradeC(s.position), ms(2, s.position))
    }
  }, 120_000)

  it('the project page: exact progress per annotator and per item, a paged label browser with filters', async () => {
    const r = await page<ProjectPageData>(researcher, ['project', runId], { pageSize: '10' })
    if (!r.ok) throw new Error(r.error)
    const d = r.data.data
    expect(d.totals).toEqual({ items: 20, labels: 58, complete: 18, short: 2, sessions: 60 })
    const P = Array.from({ length: 20 }, (_, p) => p)
    expect(d.annotators.map((x) => [x.key, x.labels, x.medianMs])).toEqual([
      [a.userId, 20, median(P.map((p) => ms(0, p)))],
      [b.userId, 20, median(P.map((p) => ms(1, p)))],
      [c.userId, 18, median(P.slice(0, 18).map((p) => ms(2, p)))],
    ])
    expect(d.items.total).toBe(20)
    expect(d.items.rows).toHaveLength(10)
    expect(d.items.rows[0]).toMatchObject({ position: 0, labels: 3, status: 'complete' })
    const disagree = (p: number) => {
      const v = [gradeA(p), gradeB(p), ...(p < 18 ? [gradeC(p)] : [])]
      return new Set(v).size > 1
    }
    expect(d.items.rows.map((x) => x.disagree)).toEqual(P.slice(0, 10).map(disagree))
    expect(d.labels.total).toBe(58)
    expect(d.labels.rows).toHaveLength(10)
    expect(d.labels.rows[0]).toMatchObject({ position: 0, schemaVersion: 1, answers: { O: gradeA(0) } })

    // Short items only: the last two, two labels each.
    const short = await page<ProjectPageData>(researcher, ['project', runId], { short: '1' })
    if (!short.ok) throw new Error(short.error)
    expect(short.data.data.items.rows.map((x) => [x.position, x.labels, x.status])).toEqual([
      [18, 2, 'short'],
      [19, 2, 'short'],
    ])
    // One annotator's labels, pseudonymised: "Annotator 3" is c (third to label first), 18 labels.
    const mine = await page<ProjectPageData>(researcher, ['project', runId], {
      annotator: 'Annotator 3',
      pseudo: '1',
      pageSize: '100',
    })
    if (!mine.ok) throw new Error(mine.error)
    expect(mine.data.data.labels.total).toBe(18)
    expect(new Set(mine.data.data.labels.rows.map((l) => l.annotator))).toEqual(new Set(['Annotator 3']))
    expect(JSON.stringify(mine.data.data)).not.toContain(c.userId)
    // Disagreements only: the items whose labels differ.
    const dis = await page<ProjectPageData>(researcher, ['project', runId], { disagree: '1', pageSize: '100' })
    if (!dis.ok) throw new Error(dis.error)
    expect(dis.data.data.items.rows.map((x) => x.position)).toEqual(P.filter(disagree))
    expect(new Set(dis.data.data.labels.rows.map((l) => l.position))).toEqual(new Set(P.filter(disagree)))
  })

  it('the agreement page equals lib/metrics/agreement.ts on the same labels', async () => {
    const r = await page<AgreementPageData>(researcher, ['agreement', runId])
    if (!r.ok) throw new Error(r.error)
    const d = r.data.data
    const P = Array.from({ length: 20 }, (_, p) => p)
    const table = P.map((p) => [gradeA(p), gradeB(p), p < 18 ? gradeC(p) : null])
    expect(d.level).toBe('ordinal')
    expect(d.items).toBe(20)
    expect(d.labels).toBe(58)
    // Fleiss over the 18 complete items, categories in the question's option order (2, 1, 0).
    const counts = table.slice(0, 18).map((row) => [2, 1, 0].map((v) => row.filter((x) => x === v).length))
    expect(d.fleiss.items).toBe(18)
    expect(d.fleiss.kappa).toBeCloseTo(fleissKappa(counts).fleissKappa as number, 12)
    expect(d.alpha.alpha).toBeCloseTo(krippendorffAlpha(table, 'ordinal').alpha as number, 12)
    expect(d.pairwise).toEqual(pairwiseKappa(table))
    expect(d.perAnnotator.map((x) => x.kappaVsMajority)).toEqual(perRaterAgreement(table).map((x) => x.kappaVsMajority))
    // Against gold: the fixture's gold per item from the dataset instances.
    const inst = await db.instance.findMany({
      where: { datasetId: (await db.run.findUniqueOrThrow({ where: { id: runId } })).datasetId },
      orderBy: { index: 'asc' },
      select: { prediction: true },
    })
    const gold = inst.map((i) => Number(i.prediction))
    const vsA = agreementOfLabels(gold, P.map(gradeA))
    expect(d.gold?.items).toBe(20)
    const ga = d.gold?.perAnnotator[0]
    expect(ga).toMatchObject({
      n: 20,
      confusion: vsA.confusion,
      accuracy: vsA.accuracy,
      maeBinary: vsA.maeBinary,
      maeGraded: vsA.maeGraded,
      pAgreeModel0: vsA.pAgreeModel0,
      pAgreeModel1: vsA.pAgreeModel1,
    })
    const boot = bootstrapKappa(gold, P.map(gradeA), { resamples: 20, seed: 1 })
    expect(ga?.kappa).toEqual({ estimate: boot.estimate, lo: boot.lo, hi: boot.hi })
    // Interval override.
    const iv = await page<AgreementPageData>(researcher, ['agreement', runId], { level: 'interval' })
    if (!iv.ok) throw new Error(iv.error)
    expect(iv.data.data.alpha.alpha).toBeCloseTo(krippendorffAlpha(table, 'interval').alpha as number, 12)
  })

  it('staff only: an annotator and a bad parameter are refused; an annotator’s session page is blind', async () => {
    // The annotator's study role grants no study permission: to them these pages are of a study they cannot see.
    expect(await page(a, ['project', runId])).toMatchObject({ ok: false, status: 404 })
    expect(await page(a, ['agreement', runId])).toMatchObject({ ok: false, status: 404 })
    expect(await page(researcher, ['agreement', runId], { level: 'cubic' })).toMatchObject({ ok: false, status: 400 })
    expect(await page(researcher, ['project', 'nope'])).toMatchObject({ ok: false, status: 404 })
    // c's own session of item 0: c's label only, never a's or b's.
    const s = sessions.find((x) => x.position === 0 && x.repetition === 3) as { id: string }
    const view = await execute(getSession, c, { sessionId: s.id })
    if (!view.ok) throw new Error(view.error)
    const text = JSON.stringify(view.data)
    expect(text).not.toContain(a.userId)
    expect(text).not.toContain(b.userId)
    expect(view.data.messages).toHaveLength(1)
  })
  it('adjudication: the disputed items side by side; a researcher sets a final label with a note; an annotator is refused; the exports have it', async () => {
    const P = Array.from({ length: 20 }, (_, p) => p)
    const disputed = P.filter((p) => new Set([gradeA(p), gradeB(p), ...(p < 18 ? [gradeC(p)] : [])]).size > 1)
    const r = await page<AdjudicationPageData>(researcher, ['adjudicate', runId], { pseudo: '1', pageSize: '100' })
    if (!r.ok) throw new Error(r.error)
    const d = r.data.data
    expect(d.total).toBe(disputed.length)
    expect(d.items.map((i) => i.position)).toEqual(disputed)
    const first = d.items[0] as AdjudicationPageData['items'][number]
    expect(first.labels.map((l) => [l.annotator, l.value])).toEqual([
      ['Annotator 1', gradeA(first.position)],
      ['Annotator 2', gradeB(first.position)],
      ...(first.position < 18 ? [['Annotator 3', gradeC(first.position)]] : []),
    ])
    expect(JSON.stringify(d)).not.toContain(a.userId)
    expect(first.final).toBeNull()

    const set = await execute(adjudicateLabel, researcher, {
      runId,
      position: first.position,
      value: 2,
      note: 'Guideline 3: partial answer counts.',
    })
    expect(set.ok, JSON.stringify(set)).toBe(true)
    // An annotator (here an expert member) does not adjudicate: their study role grants it not, and they
    // do not see the study (404); a value that is no option is a field error.
    expect(
      await execute(adjudicateLabel, a, { runId, position: first.position, value: 0, note: 'mine' }),
    ).toMatchObject({ ok: false, status: 404 })
    expect(await page(a, ['adjudicate', runId])).toMatchObject({ ok: false, status: 404 })
    expect(
      await execute(adjudicateLabel, researcher, { runId, position: first.position, value: 7, note: 'x' }),
    ).toMatchObject({ ok: false, status: 400 })
    expect(
      await execute(adjudicateLabel, researcher, { runId, position: first.position, value: 1, note: '' }),
    ).toMatchObject({ ok: false, status: 400 })
    const audit = await db.auditLog.findMany({ where: { action: 'labelling.adjudicate', resourceId: runId } })
    expect(audit).toHaveLength(1)
    expect(audit[0]?.after).toMatchObject({
      position: first.position,
      value: 2,
      note: 'Guideline 3: partial answer counts.',
    })

    const again = await page<AdjudicationPageData>(researcher, ['adjudicate', runId], { pageSize: '1' })
    if (!again.ok) throw new Error(again.error)
    expect(again.data.data.items[0]?.final).toMatchObject({ value: 2, note: 'Guideline 3: partial answer counts.' })

    const out = await execute(exportRun, researcher, { runId, table: 'final-labels', format: 'jsonl' })
    if (!out.ok) throw new Error(out.error)
    const finals: Record<string, unknown>[] = []
    for await (const l of out.data.lines()) finals.push(JSON.parse(String(l)))
    expect(finals).toHaveLength(20)
    expect(finals[first.position]).toMatchObject({
      final: 2,
      source: 'adjudicated',
      note: 'Guideline 3: partial answer counts.',
    })
    // The others: the majority when there is one, else empty with the reason.
    for (const p of P.filter((x) => x !== first.position)) {
      const vals = [gradeA(p), gradeB(p), ...(p < 18 ? [gradeC(p)] : [])]
      const counts = new Map<number, number>()
      for (const v of vals) counts.set(v, (counts.get(v) ?? 0) + 1)
      const top = Math.max(...counts.values())
      const winners = [...counts].filter(([, n]) => n === top)
      const row = finals[p] as Record<string, unknown>
      if (winners.length === 1)
        expect(row).toMatchObject({
          final: winners[0]?.[0],
          source: new Set(vals).size === 1 ? 'unanimous' : 'majority',
          reason: '',
        })
      else expect(row).toMatchObject({ final: null, source: '', reason: 'tie: no majority' })
    }
    const ann = await execute(exportRun, researcher, { runId, table: 'annotations', format: 'jsonl' })
    if (!ann.ok) throw new Error(ann.error)
    const labels: Record<string, unknown>[] = []
    for await (const l of ann.data.lines()) labels.push(JSON.parse(String(l)))
    expect(labels).toHaveLength(58)
    expect(labels[0]).toMatchObject({
      annotatorId: a.userId,
      pseudonym: 'Annotator 1',
      schemaVersion: 1,
      model: null,
      promptVariant: null,
    })
  })
})

describe('the study role adjudicator', () => {
  it('adjudicates and reads agreement and adjudication, runs and exports nothing; the annotator study role never adjudicates', async () => {
    const { runId, rows } = await project(3, 2)
    for (const s of rows) await labelAs(s.repetition === 1 ? a : b, s.id, s.repetition === 1 ? 0 : 2, 10)
    const [adjR, adjA, ann, view] = await Promise.all([
      makeUser('researcher'),
      makeUser('annotator'),
      makeUser('annotator'),
      makeUser('researcher'),
    ])
    await db.studyMember.createMany({
      data: [
        { studyId, userId: adjR.userId, role: 'adjudicator' },
        { studyId, userId: adjA.userId, role: 'adjudicator' },
        { studyId, userId: ann.userId, role: 'annotator' },
        { studyId, userId: view.userId, role: 'viewer' },
      ],
    })
    const adjudicate = (who: Actor, value: number) =>
      execute(adjudicateLabel, who, { runId, position: 0, value, note: `by ${who.email}` })

    // A researcher account made adjudicator: the agreement and adjudication pages, and final labels.
    const agreement = await page<AgreementPageData>(adjR, ['agreement', runId])
    expect(agreement.ok, JSON.stringify(agreement)).toBe(true)
    const adj = await page<AdjudicationPageData>(adjR, ['adjudicate', runId])
    if (!adj.ok) throw new Error(adj.error)
    expect(adj.data.data.canAdjudicate).toBe(true)
    expect(adj.data.data.items.map((i) => i.position)).toEqual([0, 1, 2])
    expect(await adjudicate(adjR, 1)).toMatchObject({ ok: true })
    // … but not the project page, a new run, an export or a run's start.
    expect(await page(adjR, ['project', runId])).toMatchObject({ ok: false, status: 403 })
    const datasetId = await labellingDataset(studyId, 1, `adj ${Math.random()}`)
    const run = {
      studyId,
      protocol: 'labelling',
      name: 'by the adjudicator',
      datasetId,
      config: { preset: 'relevance-0-2' },
      seats: { annotator: { kind: 'human', claimable: true } },
    }
    expect(await execute(createRun, adjR, run)).toMatchObject({ ok: false, status: 403 })
    const draft = await execute(createRun, researcher, run)
    if (!draft.ok) throw new Error(draft.error)
    expect(await execute(startRun, adjR, { runId: draft.data.id })).toMatchObject({ ok: false, status: 403 })
    expect(await execute(exportRun, adjR, { runId, table: 'final-labels', format: 'jsonl' })).toMatchObject({
      ok: false,
      status: 403,
    })

    // An annotator account made adjudicator sets final labels (labels:adjudicate is theirs, the study
    // role says where) and opens the agreement and adjudication pages (they need only adjudicate), but
    // no page that needs read (no studies:read: the project page is a study it cannot see) and exports nothing.
    expect(await adjudicate(adjA, 2)).toMatchObject({ ok: true })
    const adjByAnnotator = await page<AdjudicationPageData>(adjA, ['adjudicate', runId])
    if (!adjByAnnotator.ok) throw new Error(adjByAnnotator.error)
    expect(adjByAnnotator.data.data.canAdjudicate).toBe(true)
    expect(await page(adjA, ['agreement', runId])).toMatchObject({ ok: true })
    expect(await page(adjA, ['project', runId])).toMatchObject({ ok: false, status: 404 })
    expect(await page(adjA, ['prompt-lab'])).toMatchObject({ ok: false, status: 404 })
    expect(await execute(exportRun, adjA, { runId, table: 'final-labels', format: 'jsonl' })).toMatchObject({
      ok: false,
      status: 403,
    })
    const final = await db.labelAdjudication.findFirstOrThrow({ where: { runId, position: 0 } })
    expect(final).toMatchObject({ value: 2, adjudicatorId: adjA.userId, note: `by ${adjA.email}` })

    // The annotator study role does not adjudicate (nor see the study); a study viewer reads but does not.
    expect(await adjudicate(ann, 0)).toMatchObject({ ok: false, status: 404 })
    expect(await page(ann, ['adjudicate', runId])).toMatchObject({ ok: false, status: 404 })
    expect(await adjudicate(view, 0)).toMatchObject({ ok: false, status: 403 })
    expect(await page(view, ['agreement', runId])).toMatchObject({ ok: false, status: 403 })
    expect(await db.labelAdjudication.findFirstOrThrow({ where: { runId, position: 0 } })).toMatchObject({ value: 2 })
  }, 60_000)
})

describe('Fleiss κ by hand', () => {
  it('3 items × 3 annotators: (2,2,2), (1,1,0), (0,0,0) → κ = 17/26', async () => {
    // P_i = 1, 1/3, 1 → P̄ = 7/9; p = (4/9, 2/9, 3/9) for 0, 1, 2 → P̄_e = 29/81; κ = (63 − 29)/(81 − 29) = 17/26.
    const { runId, rows } = await project(3, 3)
    const grades = [
      [2, 2, 2],
      [1, 1, 0],
      [0, 0, 0],
    ]
    const who = [a, b, c]
    for (const s of rows)
      await labelAs(who[s.repetition - 1] as Actor, s.id, grades[s.position]?.[s.repetition - 1] as number, 10)
    const r = await page<AgreementPageData>(researcher, ['agreement', runId])
    if (!r.ok) throw new Error(r.error)
    expect(r.data.data.fleiss.kappa).toBeCloseTo(17 / 26, 12)
  }, 60_000)
})

describe('10,000 items × 3 labels seeded in SQL', () => {
  it('the agreement and project pages aggregate every label', async () => {
    const datasetId = await labellingDataset(studyId, 1, `big ${Math.random()}`)
    const r = await execute(createRun, researcher, {
      studyId,
      protocol: 'labelling',
      name: 'big',
      datasetId,
      config: { preset: 'relevance-0-2' },
      seats: { annotator: { kind: 'human', claimable: true } },
      repetitions: 3,
    })
    if (!r.ok) throw new Error(r.error)
    const runId = r.data.id
    const run = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { config: true } })
    // The planned sessions of the one-item dataset go: the seeded ones are the run's.
    await db.protocolSession.deleteMany({ where: { runId } })
    const N = 10_000
    const users = [a.userId, b.userId, c.userId]
    // Sessions: item i, slot k (1..3); annotator k labels (i + k) % 3 except annotator 1 says 0 on i % 7 = 0.
    await db.$executeRawUnsafe(
      `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, repetition, position, status, "updatedAt")
       SELECT 'big-' || $2 || '-' || i || '-' || k, $1, $2, 'labelling', '1', $3::jsonb, 'labelling',
              jsonb_build_object('kind', 'text', 'id', 'item-' || i, 'text', 'x'), '{}'::jsonb, k, i, 'done', now()
       FROM generate_series(0, $4 - 1) i, generate_series(1, 3) k`,
      studyId,
      runId,
      JSON.stringify(run.config),
      N,
    )
    await db.$executeRawUnsafe(
      `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, body, "authorUserId", "createdAt")
       SELECT 'bigm-' || $1 || '-' || i || '-' || k, 'big-' || $1 || '-' || i || '-' || k, 1, 'annotator', 'annotator',
              jsonb_build_object('seq', 1, 'sender', 'annotator', 'kind', 'label', 'schemaVersion', 1,
                'answers', jsonb_build_object('O', CASE WHEN k = 1 AND i % 7 = 0 THEN 0 ELSE (i + k) % 3 END),
                'elapsedMs', 100 * k),
              ($2::text[])[k], now() + k * interval '1 second'
       FROM generate_series(0, $3 - 1) i, generate_series(1, 3) k`,
      runId,
      users,
      N,
    )
    const t0 = performance.now()
    const ag = await page<AgreementPageData>(researcher, ['agreement', runId])
    const took = performance.now() - t0
    if (!ag.ok) throw new Error(ag.error)
    console.log(`agreement page, 10,000 × 3 labels: ${took.toFixed(0)} ms`)
    const d = ag.data.data
    expect(d.items).toBe(N)
    expect(d.labels).toBe(3 * N)
    expect(d.fleiss.items).toBe(N)
    const table: number[][] = []
    for (let i = 0; i < N; i++) table.push([1, 2, 3].map((k) => (k === 1 && i % 7 === 0 ? 0 : (i + k) % 3)))
    const counts = table.map((row) => [2, 1, 0].map((v) => row.filter((x) => x === v).length))
    expect(d.fleiss.kappa).toBeCloseTo(fleissKappa(counts).fleissKappa as number, 12)
    expect(d.pairwise).toEqual(pairwiseKappa(table))
    const t1 = performance.now()
    const pr = await page<ProjectPageData>(researcher, ['project', runId])
    console.log(`project page, 10,000 × 3 labels: ${(performance.now() - t1).toFixed(0)} ms`)
    if (!pr.ok) throw new Error(pr.error)
    expect(pr.data.data.totals).toEqual({ items: N, labels: 3 * N, complete: N, short: 0, sessions: 3 * N })
    expect(pr.data.data.annotators.map((x) => [x.key, x.labels, x.medianMs])).toEqual([
      [a.userId, N, 100],
      [b.userId, N, 200],
      [c.userId, N, 300],
    ])
  }, 120_000)
})
