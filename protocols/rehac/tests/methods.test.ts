import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { protocolPage, protocolPanels } from '@/lib/server/services/protocol-pages'
import { getRun } from '@/lib/server/services/runs'
import { evaluate } from '@/protocols/rehac/core/metrics'
import { methodRows, type MethodsPageData, type TreePageData } from '@/protocols/rehac/server/methods'
import { episodes } from '@/protocols/rehac/server/views'
import { RehacStudyPage, RehacStudyPanel } from '@/protocols/rehac/ui/study-pages'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { useFakeLlm } from '../../../tests/support/llm'
import { treeRun } from './tree-run'

const fake = useFakeLlm()

/** The run's finished trajectories through the pure core (core/metrics.ts `evaluate`). */
async function coreFigures(runId: string, lambda: number) {
  const lines = (await episodes(runId))
    .filter((e) => e.status === 'done' && e.result && e.trajectory !== null)
    .map((e) => ({ trajectory: e.trajectory as string, f1: e.result?.f1 as number, em: e.result?.em as boolean }))
  return evaluate(lines, lambda)
}

function expectSame(
  row: Awaited<ReturnType<typeof methodRows>>[number],
  core: Awaited<ReturnType<typeof coreFigures>>,
) {
  expect(row.n).toBe(core.trajectories)
  expect(row.steps).toBe(core.steps)
  expect(row.humanSteps).toBe(core.humanSteps)
  expect(row.hir).toBeCloseTo(core.hir, 12)
  expect(row.T).toBeCloseTo(core.T, 12)
  expect(row.C).toBeCloseTo(core.humanSteps / core.trajectories, 12)
  expect(row.R).toBeCloseTo(core.R, 12)
}

describe('ReHAC method comparison (Table 4 in SQL)', () => {
  it('the SQL figures equal the pure core’s on a collected run, at every λ, also with a partly right answer', async () => {
    const w = await treeRun(fake())
    for (const lambda of [0, 0.06, 0.08, 0.1, 1]) {
      const [row] = await methodRows(w.studyId, lambda)
      expectSame(row as never, await coreFigures(w.runId, lambda))
    }
    // The tree of tree-run.ts: "00" T 1 C 0, "01" T 0 C 1, "1" T 0 C 1 → 5 steps, 2 human.
    const [at08] = await methodRows(w.studyId, 0.08)
    expect(at08).toMatchObject({ n: 3, steps: 5, humanSteps: 2, method: 'Collection tree seed 3' })
    expect(at08?.T).toBeCloseTo(1 / 3, 12)
    expect(at08?.R).toBeCloseTo((1 - 2 * 0.08) / 3, 12)
    const [at10] = await methodRows(w.studyId, 0.1)
    expect((at08?.R as number) - (at10?.R as number)).toBeCloseTo((0.02 * 2) / 3, 12)

    // A partly right answer (punctuation, articles, case, a repeated token): token F1 strictly between 0 and 1.
    const finishes = await db.protocolMessage.findMany({
      where: { session: { runId: w.runId }, label: 'finish' },
      select: { id: true, sessionId: true, body: true },
    })
    expect(finishes.length).toBeGreaterThan(0)
    const answers = ['The Brenn, HALVARD brenn!', 'a yes', 'Halvard  of  an  Oslo']
    for (const [i, m] of finishes.entries()) {
      const body = m.body as { action: { type: string; arg: string } }
      await db.protocolMessage.update({
        where: { id: m.id },
        data: { body: { ...body, action: { ...body.action, arg: answers[i % answers.length] } } },
      })
      await db.protocolSession.update({ where: { id: m.sessionId }, data: { updatedAt: new Date() } })
    }
    const core = await coreFigures(w.runId, 0.08)
    expect(core.T).toBeGreaterThan(0)
    expect(core.T).not.toBeCloseTo(1 / 3, 6)
    const [edited] = await methodRows(w.studyId, 0.08)
    expectSame(edited as never, core)
  })

  it('the methods page: λ from the URL, a bad λ is a message, coverage per question; the tree page has both branches; annotators are refused as on run pages', async () => {
    const w = await treeRun(fake())
    const page = (actor: typeof w.researcher, path: string[], args: Record<string, string> = {}) =>
      execute(protocolPage, actor, { studyId: w.studyId, protocol: 'rehac', path, args })

    const ok = await page(w.researcher, ['methods'], { lambda: '0.1' })
    if (!ok.ok) throw new Error(ok.error)
    const data = ok.data.data as MethodsPageData
    expect(data).toMatchObject({ kind: 'methods', lambda: 0.1, error: null })
    expect(data.rows).toHaveLength(1)
    expect(data.rows[0]?.R).toBeCloseTo((1 - 0.2) / 3, 12)
    // Two states reached ("" and "0"), both with both branches.
    expect(data.coverage[0]?.questions).toEqual([
      expect.objectContaining({ trajectories: 3, states: 2, both: 2, one: 0 }),
    ])

    for (const bad of ['abc', '-0.1', '1.5', 'Infinity']) {
      const r = await page(w.researcher, ['methods'], { lambda: bad })
      if (!r.ok) throw new Error(r.error)
      const d = r.data.data as MethodsPageData
      expect(d.error).toMatch(/λ/)
      expect(d.lambda).toBe(0.08)
    }

    const instanceId = data.coverage[0]?.questions[0]?.instanceId as string
    const tree = await page(w.researcher, ['tree', w.runId, instanceId], { lambda: '0.08' })
    if (!tree.ok) throw new Error(tree.error)
    const t = tree.data.data as TreePageData
    expect(t.trajectories.map((x) => x.path)).toEqual(['00', '01', '1'])
    expect(t.forks).toHaveLength(2)
    // Every trajectory keeps its fork origin (parent, step) from the stored parentId / forkSeq.
    expect(
      t.trajectories
        .filter((x) => x.parentKey !== null)
        .map((x) => x.forkAt)
        .sort(),
    ).toEqual([1, 2])
    const [root, afterAgent] = t.forks
    expect(root).toMatchObject({ prefix: '', at: 1, changed: true })
    expect(root?.agent.keys).toHaveLength(2)
    expect(root?.human.keys).toHaveLength(1)
    // R̄(root, agent) = (1 + (0 − λ)) / 2, R̄(root, human) = −λ (tree-run.ts).
    expect(root?.agent.R).toBeCloseTo((1 - 0.08) / 2, 12)
    expect(root?.deltaR).toBeCloseTo(-0.08 - (1 - 0.08) / 2, 12)
    expect(afterAgent).toMatchObject({ prefix: '0', at: 2, changed: true, deltaT: -1 })
    expect(afterAgent?.deltaR).toBeCloseTo(-1 - 0.08, 12)
    expect(t.trajectories.find((x) => x.path === '1')?.steps.map((s) => s.solver)).toEqual(['human'])
    expect(t.coverage).toEqual({ states: 2, both: 2, one: 0 })

    // The pages render: the method row, λ presets, the tree's two columns and Agent/Human badges, the
    // question escaped (a hostile one stays text).
    const html = (title: string, d: unknown) =>
      renderToStaticMarkup(
        createElement(RehacStudyPage, { study: { id: w.studyId, name: 's' }, path: [], title, data: d }),
      )
    const methodsHtml = html('Methods', data)
    expect(methodsHtml).toContain('Collection tree seed 3')
    expect(methodsHtml).toContain('?lambda=0.06')
    expect(methodsHtml).toContain('Only finished')
    expect(methodsHtml).toContain(`/p/rehac/tree/${w.runId}/${encodeURIComponent(instanceId)}`)
    const treeHtml = html('Tree', { ...t, instance: { ...t.instance, question: '<script>alert(1)</script>' } })
    expect(treeHtml).toContain('&lt;script&gt;')
    expect(treeHtml).not.toContain('<script>')
    expect(treeHtml).toContain('agent branch')
    expect(treeHtml).toContain('human branch')
    expect(treeHtml).toContain('>Human<')
    expect(treeHtml).toContain('>Agent<')
    expect(treeHtml).toContain('human step changed the outcome')
    const badHtml = html('Methods', {
      ...data,
      error: 'λ must be at least 0.',
      lambdaInput: '-1',
      rows: [],
      coverage: [],
    })
    expect(badHtml).toContain('λ must be at least 0.')
    expect(badHtml).toContain('no ReHAC run yet')

    // The study card counts the ReHAC runs; a study without one has an empty methods page and no card data.
    const panels = await execute(protocolPanels, w.researcher, { studyId: w.studyId })
    if (!panels.ok) throw new Error(panels.error)
    expect(panels.data.find((p) => p.protocol === 'rehac')?.data).toEqual({ runs: 1, canTrain: true })
    const other = await makeStudy(w.researcher)
    const empty = await execute(protocolPage, w.researcher, {
      studyId: other.id,
      protocol: 'rehac',
      path: ['methods'],
      args: {},
    })
    if (!empty.ok) throw new Error(empty.error)
    expect(empty.data.data).toMatchObject({ rows: [], coverage: [], error: null, lambda: 0.08 })

    const missing = await page(w.researcher, ['tree', w.runId, 'no-such-question'])
    expect(missing).toMatchObject({ ok: false, status: 404 })

    // Readers of the study (a viewer) read the pages; an annotator of the study does not read it (as run pages).
    const viewer = await makeUser('viewer')
    const annotator = await makeUser('annotator')
    await db.studyMember.createMany({
      data: [
        { studyId: w.studyId, userId: viewer.userId, role: 'viewer' },
        { studyId: w.studyId, userId: annotator.userId, role: 'annotator' },
      ],
    })
    expect(await page(viewer, ['methods'])).toMatchObject({ ok: true })
    expect(await page(viewer, ['tree', w.runId, instanceId])).toMatchObject({ ok: true })
    const runPage = await execute(getRun, annotator, { runId: w.runId })
    expect(runPage.ok).toBe(false)
    expect([403, 404]).toContain(runPage.ok ? 200 : runPage.status)
    // Refused as the run page is (its scope says 403; a study page, which every account may ask for,
    // answers 404: to an annotator the study's pages are of a study it cannot see).
    for (const path of [['methods'], ['tree', w.runId, instanceId]]) {
      const r = await page(annotator, path)
      expect(r.ok).toBe(false)
      expect([403, 404]).toContain(r.ok ? 200 : r.status)
    }
    // An annotator account made a viewer of the study is still refused by its account scope, like the run page.
    await db.studyMember.update({
      where: { studyId_userId: { studyId: w.studyId, userId: annotator.userId } },
      data: { role: 'viewer' },
    })
    const runPage2 = await execute(getRun, annotator, { runId: w.runId })
    const page2 = await page(annotator, ['methods'])
    expect(page2.ok).toBe(runPage2.ok)
  })
})

/** A stored SQL-task session (the log as the runner writes it), for the SQL reward's three cases. */
async function sqlSession(
  run: { id: string; studyId: string },
  key: string,
  steps: Array<{
    solver: 'agent' | 'human'
    type: 'sql' | 'submit' | 'finish'
    arg: string
    text: string
    finished: boolean
  }>,
  opts: { status?: string; threshold?: number; qa?: { answer: string } } = {},
) {
  const s = await db.protocolSession.create({
    data: {
      studyId: run.studyId,
      runId: run.id,
      protocol: 'rehac',
      protocolVersion: '1',
      config: opts.threshold ? { threshold: opts.threshold } : {},
      task: opts.qa ? 'qa' : 'sql',
      instance: opts.qa
        ? { id: `q-${key}`, kind: 'qa', question: 'Who?', answer: opts.qa.answer }
        : { id: `q-${key}`, kind: 'sql', question: 'How many orders?', answer: 'SELECT count(*) FROM orders' },
      seats: {},
      key,
      status: opts.status ?? 'done',
    },
  })
  let seq = 0
  const rows: Array<{ sender: string; receiver: string; body: object }> = []
  for (const [i, st] of steps.entries()) {
    const t = i + 1
    rows.push({
      sender: 'decider',
      receiver: st.solver,
      body: { seq: ++seq, sender: 'decider', kind: 'decide', t, solver: st.solver, pHuman: null },
    })
    rows.push({
      sender: st.solver,
      receiver: 'environment',
      body: {
        seq: ++seq,
        sender: st.solver,
        kind: 'step',
        t,
        thought: null,
        action: { type: st.type, arg: st.arg },
        suggestion: null,
        ms: null,
      },
    })
    rows.push({
      sender: 'environment',
      receiver: 'decider',
      body: { seq: ++seq, sender: 'environment', kind: 'observation', t, text: st.text, finished: st.finished },
    })
  }
  await db.protocolMessage.createMany({
    data: rows.map((r) => ({
      sessionId: s.id,
      seq: (r.body as { seq: number }).seq,
      sender: r.sender,
      receiver: r.receiver,
      body: r.body,
    })),
  })
}

describe('ReHAC method comparison on SQL tasks', () => {
  it('T is 1 for a matching statement, the shown reward on submit, 0 at the threshold; unfinished sessions do not count', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const ds = await db.dataset.create({
      data: { studyId: study.id, name: 'sql', kind: 'rehac-sql', source: 'inline' },
    })
    const run = await db.run.create({
      data: {
        studyId: study.id,
        name: 'sql',
        protocol: 'rehac',
        task: 'sql',
        datasetId: ds.id,
        config: {},
        seats: { decider: { kind: 'program', program: 'random', params: { seed: 7 } } },
        repetitions: 1,
      },
    })
    await sqlSession(run, 'a', [
      { solver: 'human', type: 'sql', arg: 'SELECT 1', text: '[(1,)]', finished: false },
      { solver: 'agent', type: 'submit', arg: '', text: 'Submitted.\nreward = 0.5', finished: true },
    ])
    await sqlSession(run, 'b', [
      { solver: 'agent', type: 'sql', arg: 'SELECT count(*) FROM orders', text: '[(3,)]', finished: true },
    ])
    await sqlSession(run, 'c', [{ solver: 'human', type: 'sql', arg: 'SELECT 2', text: '[(2,)]', finished: false }], {
      threshold: 1,
    })
    await sqlSession(run, 'd', [{ solver: 'human', type: 'sql', arg: 'SELECT 3', text: '[(3,)]', finished: false }], {
      status: 'running',
    })
    const core = await coreFigures(run.id, 0.08)
    expect(core).toMatchObject({ trajectories: 3, steps: 4, humanSteps: 2 })
    expect(core.T).toBeCloseTo(1.5 / 3, 12)
    const [row] = await methodRows(study.id, 0.08)
    expect(row).toMatchObject({ method: 'Random seed 7' })
    expectSame(row as never, core)
  })
})

describe('ReHAC method comparison: token F1 in SQL', () => {
  it('normalises and scores answers as core/metrics.ts does (case, punctuation, articles, yes/no, repeats, non-ASCII)', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const ds = await db.dataset.create({ data: { studyId: study.id, name: 'qa', kind: 'rehac-qa', source: 'inline' } })
    const run = await db.run.create({
      data: {
        studyId: study.id,
        name: 'qa',
        protocol: 'rehac',
        task: 'qa',
        datasetId: ds.id,
        config: {},
        seats: { decider: { kind: 'program', program: 'agent-only' } },
        repetitions: 1,
      },
    })
    const pairs: Array<[string, string]> = [
      ['Yes', 'true'],
      ['no', 'yes'],
      ['The the cat, a dog', 'cat dog dog'],
      ['  Mr.  Smith-Jones ', 'mr smithjones'],
      ['ça a été', 'ç été'],
      ['Ångström   unit', 'ångström'],
      ['', 'x'],
      ['noanswer', 'noanswer'],
      ['an apple (an)', 'apple pie'],
      ['tab\tseparated\nwords', 'separated words tab'],
    ]
    for (const [i, [answer, gold]] of pairs.entries())
      await sqlSession(
        run,
        `k${i}`,
        [{ solver: i % 2 ? 'human' : 'agent', type: 'finish', arg: answer, text: 'Episode finished.', finished: true }],
        { qa: { answer: gold } },
      )
    const core = await coreFigures(run.id, 0.08)
    expect(core.trajectories).toBe(pairs.length)
    expect(core.T).toBeGreaterThan(0)
    expect(core.T).toBeLessThan(1)
    const [row] = await methodRows(study.id, 0.08)
    expect(row).toMatchObject({ method: 'Agent only' })
    expectSame(row as never, core)
  })
})

describe('ReHAC training page', () => {
  it('lists the study’s ReHAC runs with their ended episodes for staff; a viewer is refused (training reads every trajectory)', async () => {
    const w = await treeRun(fake())
    const page = (actor: typeof w.researcher) =>
      execute(protocolPage, actor, { studyId: w.studyId, protocol: 'rehac', path: ['train'], args: {} })
    const ok = await page(w.researcher)
    if (!ok.ok) throw new Error(ok.error)
    const ended = await db.protocolSession.count({ where: { runId: w.runId, status: 'done' } })
    expect(ended).toBeGreaterThan(0)
    expect(ok.data.data).toEqual({ kind: 'train', runs: [expect.objectContaining({ id: w.runId, ended })] })
    const html = renderToStaticMarkup(
      createElement(RehacStudyPage, {
        study: { id: w.studyId, name: 'S' },
        path: ['train'],
        title: ok.data.title,
        data: ok.data.data,
      }),
    )
    expect(html).toContain(`value="${w.runId}"`)
    expect(html).toContain(`(${ended} ended episodes)`)

    const viewer = await makeUser('viewer')
    await db.studyMember.create({ data: { studyId: w.studyId, userId: viewer.userId, role: 'viewer' } })
    expect(await page(viewer)).toMatchObject({ ok: false, status: 403 })
    // The study card offers the training page only to those it opens for.
    const card = await execute(protocolPanels, viewer, { studyId: w.studyId })
    if (!card.ok) throw new Error(card.error)
    const data = card.data.find((p) => p.protocol === 'rehac')?.data
    expect(data).toEqual({ runs: 1, canTrain: false })
    const cardHtml = renderToStaticMarkup(createElement(RehacStudyPanel, { studyId: w.studyId, data }))
    expect(cardHtml).toContain('/p/rehac/methods')
    expect(cardHtml).not.toContain('/p/rehac/train')
  })
})
