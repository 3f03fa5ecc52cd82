import { describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { orderByScore, perQueryMetrics, type Qrels, rbo } from '@/lib/metrics/agreement'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { protocolPage } from '@/lib/server/services/protocol-pages'
import { createRun } from '@/lib/server/services/runs'
import type { PromptLabData } from '@/protocols/labelling/server/prompt-lab'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

/**
 * The `trec` and `trec-runs` kinds through the engine's import job, and the prompt lab's RBO columns
 * on the stored runs, checked against lib/metrics/agreement.ts on hand-built qrels.
 */
useBulkWorkers()
const fake = useFakeLlm()
const file = (name: string, text: string) => new File([text], name)

const TOPICS = `<top>
<num> Number: 401
<title> honey bees
<desc> Description:
How bees make honey.
</top>
<top>
<num> Number: 402
<title> ocean tides
</top>
`
const DOCS = [
  { docid: 'd1', text: 'Bees fan nectar until it thickens into honey.' },
  { docid: 'd2', text: 'A cake recipe with honey.' },
  { docid: 'd3', text: 'The Moon pulls the oceans: tides.' },
  { docid: 'd4', text: 'A harbour café at high tide.' },
  { docid: 'd5', title: 'Unjudged', text: 'Never judged: not imported.' },
]
  .map((d) => JSON.stringify(d))
  .join('\n')
const QRELS = '401 0 d1 2\n401 0 d2 0\n402 0 d3 1\n402 0 d4 0\n'
// Two runs over both topics; A ranks the judged relevant documents first, B last.
const RUNS = [
  '401 Q0 d1 1 9 A',
  '401 Q0 d2 2 8 A',
  '402 Q0 d3 1 9 A',
  '402 Q0 d4 2 8 A',
  '401 Q0 d2 1 9 B',
  '401 Q0 d1 2 8 B',
  '402 Q0 d4 1 9 B',
  '402 Q0 d3 2 8 B',
].join('\n')

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  return { researcher, studyId: study.id }
}

describe('TREC imports', () => {
  it('qrels + topics + documents → one query–document item per judged pair, the qrel as gold; runs stored per tag', async () => {
    const { researcher, studyId } = await world()
    const r = await importAndWait(researcher, {
      studyId,
      name: 'trec',
      kind: 'trec',
      file: file('qrels.txt', QRELS),
      topics: file('topics.txt', TOPICS),
      documents: file('docs.jsonl', DOCS),
    })
    expect(r).toMatchObject({ ok: true, data: { status: 'ready', instances: 4 } })
    const ds = await db.dataset.findFirstOrThrow({ where: { studyId, kind: 'trec' } })
    const rows = await db.instance.findMany({ where: { datasetId: ds.id }, orderBy: { index: 'asc' } })
    expect(rows.map((x) => x.prediction)).toEqual(['2', '0', '1', '0'])
    expect(rows[0]?.input).toEqual({
      kind: 'query-doc',
      id: '401:d1',
      topicId: '401',
      query: 'honey bees',
      description: 'How bees make honey.',
      docId: 'd1',
      document: 'Bees fan nectar until it thickens into honey.',
    })
    expect(JSON.stringify(rows.map((x) => x.input))).not.toContain('Unjudged')

    const runs = await importAndWait(researcher, {
      studyId,
      name: 'runs',
      kind: 'trec-runs',
      file: file('runs.txt', RUNS),
    })
    expect(runs).toMatchObject({ ok: true, data: { status: 'ready', instances: 2 } })
    const stored = await db.instance.findMany({
      where: { dataset: { studyId, kind: 'trec-runs' } },
      orderBy: { index: 'asc' },
    })
    expect(stored.map((x) => x.input)).toEqual([
      { id: 'A', kind: 'trec-run', tag: 'A', topics: { '401': ['d1', 'd2'], '402': ['d3', 'd4'] } },
      { id: 'B', kind: 'trec-run', tag: 'B', topics: { '401': ['d2', 'd1'], '402': ['d4', 'd3'] } },
    ])

    // An LLM-labeller run over the trec dataset (scripted: d1 0, d2 2, d3 1, d4 1), then the prompt lab's RBO columns.
    const conn = await fakeConnection(studyId, fake())
    const LLM: Record<string, number> = { d1: 0, d2: 2, d3: 1, d4: 1 }
    fake().setScript([
      { match: { model: 'gen', contains: 'Bees fan nectar' }, replies: [{ text: `"O": ${LLM.d1}}]` }] },
      { match: { model: 'gen', contains: 'cake recipe' }, replies: [{ text: `"O": ${LLM.d2}}]` }] },
      { match: { model: 'gen', contains: 'The Moon pulls' }, replies: [{ text: `"O": ${LLM.d3}}]` }] },
      { match: { model: 'gen', contains: 'harbour café' }, replies: [{ text: `"O": ${LLM.d4}}]` }] },
    ] as FakeRule[])
    fake().reset()
    const created = await execute(createRun, researcher, {
      studyId,
      protocol: 'labelling',
      name: 'LLM -----',
      datasetId: ds.id,
      config: { preset: 'relevance-0-2', labeller: { variant: '-----' } },
      seats: { annotator: { kind: 'llm', model: { connectionId: conn.id, model: 'gen' } } },
    })
    if (!created.ok) throw new Error(`${created.error} ${JSON.stringify(created.fieldErrors ?? {})}`)
    expect(await runHeadless(created.data.id as string)).toMatchObject({ done: 4, stalled: 0 })
    const page = await execute(protocolPage, researcher, {
      studyId,
      protocol: 'labelling',
      path: ['prompt-lab'],
      args: { dataset: ds.id, queryRun: 'B', halves: '0' },
    })
    if (!page.ok) throw new Error(page.error)
    const d = page.data.data as PromptLabData
    expect(d.error).toBeNull()
    expect(d.runDataset?.tags).toEqual(['A', 'B'])
    const row = d.table!.rows[0]!
    expect(row.name).toBe('-----')
    // By hand: qrels under gold and under the model's labels, RBP@100 (φ 0.6) per query of run B
    // ascending, runs by mean RBP descending; RBO φ 0.9 and 0.7 (truncated).
    const gold: Qrels = { '401': { d1: 2, d2: 0 }, '402': { d3: 1, d4: 0 } }
    const model: Qrels = { '401': { d1: LLM.d1!, d2: LLM.d2! }, '402': { d3: LLM.d3!, d4: LLM.d4! } }
    const runA = { '401': ['d1', 'd2'], '402': ['d3', 'd4'] }
    const runB = { '401': ['d2', 'd1'], '402': ['d4', 'd3'] }
    const orderings = (q: Qrels) => {
      const b = perQueryMetrics(runB, q)
      const mean = (m: ReturnType<typeof perQueryMetrics>) => Object.values(m).reduce((s, x) => s + x.rbp100, 0) / 2
      return {
        queries: orderByScore({ '401': b['401']!.rbp100, '402': b['402']!.rbp100 }, 'asc'),
        systems: orderByScore({ A: mean(perQueryMetrics(runA, q)), B: mean(b) }, 'desc'),
      }
    }
    const g = orderings(gold)
    const m = orderings(model)
    // Under gold run A is better (relevant first); under the model (d2 relevant, d1 not) run B wins 401.
    expect(g.systems).toEqual(['A', 'B'])
    expect(row.rboQuery!.estimate).toBeCloseTo(rbo(g.queries, m.queries, 0.9).trunc, 12)
    expect(row.rboSystem!.estimate).toBeCloseTo(rbo(g.systems, m.systems, 0.7).trunc, 12)
    expect(d.table!.rboNote).toBeNull()
    expect(d.table!.queryRun).toBe('B')
  })

  it('a qrel whose document or topic is missing refuses the whole import with its line', async () => {
    const { researcher, studyId } = await world()
    const r = await importAndWait(researcher, {
      studyId,
      name: 'trec',
      kind: 'trec',
      file: file('qrels.txt', '401 0 d1 2\n401 0 d9 1\n999 0 d2 0\n401 0 d2 x\n'),
      topics: file('topics.txt', TOPICS),
      documents: file('docs.jsonl', DOCS),
    })
    expect(r.ok).toBe(false)
    const msg = r.ok ? '' : JSON.stringify(r)
    expect(msg).toMatch(/line 4/i)
    expect(msg).toMatch(/not an integer/)
    expect(await db.instance.count({ where: { dataset: { studyId } } })).toBe(0)
    const missing = await importAndWait(researcher, {
      studyId,
      name: 'trec',
      kind: 'trec',
      file: file('qrels.txt', '401 0 d1 2\n401 0 d9 1\n999 0 d2 0\n'),
      topics: file('topics.txt', TOPICS),
      documents: file('docs.jsonl', DOCS),
    })
    expect(missing.ok).toBe(false)
    const m = missing.ok ? '' : JSON.stringify(missing)
    expect(m).toMatch(/line 2/i)
    expect(m).toMatch(/document d9 is not in docs.jsonl/)
    expect(m).toMatch(/line 3/i)
    expect(m).toMatch(/topic 999 is not in topics.txt/)
    const noTopics = await importAndWait(researcher, {
      studyId,
      name: 'trec',
      kind: 'trec',
      file: file('qrels.txt', QRELS),
    })
    expect(noTopics.ok ? '' : JSON.stringify(noTopics)).toMatch(/Upload the topics/)
    expect(await db.instance.count({ where: { dataset: { studyId } } })).toBe(0)
  })
})
