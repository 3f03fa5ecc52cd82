import { parse } from 'csv-parse/sync'
import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { runSession } from '@/lib/server/engine/runner'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { listDatasets } from '@/lib/server/services/datasets'
import { exportRun } from '@/lib/server/services/run-export'
import { createRun } from '@/lib/server/services/runs'
import { debateRules, loadDebateFixture } from './support'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()
useBulkWorkers()
afterAll(async () => {
  await stopBoss()
})

async function lines(actor: Parameters<typeof execute>[1], runId: string, table: string, format: 'csv' | 'jsonl') {
  const r = await execute(exportRun, actor, { runId, table, format })
  if (!r.ok) throw new Error(r.error)
  const out: string[] = []
  for await (const l of r.data.lines()) out.push(l)
  return out
}
const csv = (ls: string[]) => parse(ls.join('\n'), { columns: true }) as Array<Record<string, string>>

/** A number written without binary noise: at most 12 significant digits. */
const clean = (cell: string) => cell === String(Number(Number(cell).toPrecision(12)))

async function batchRun() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const conn = await fakeConnection(study.id, fake())
  const cases = [
    'symptoms,label',
    `"${loadDebateFixture('dengue').symptoms}",Dengue Fever`,
    `"${loadDebateFixture('jaundice').symptoms}",Jaundice`,
  ].join('\n')
  const imp = await importAndWait(researcher, {
    studyId: study.id,
    name: 'appendix cases',
    kind: 'cases',
    file: new File([cases], 'cases.csv'),
  })
  if (!imp.ok) throw new Error(imp.error)
  fake().setScript([...debateRules(loadDebateFixture('dengue')), ...debateRules(loadDebateFixture('jaundice'))])
  const r = await execute(createRun, researcher, {
    protocol: 'evince',
    studyId: study.id,
    name: 'exports',
    A: { kind: 'llm', connectionId: conn.id, model: 'gen-a' },
    B: { kind: 'llm', connectionId: conn.id, model: 'gen-b' },
    judge: { connectionId: conn.id, model: 'judge' },
    config: { k: 5, maxRounds: 3 },
    datasetId: imp.data.id,
    start: false,
  })
  if (!r.ok) throw new Error(r.error)
  for (const s of await db.protocolSession.findMany({ where: { runId: r.data.id } })) await runSession(s.id)
  return { researcher, study, conn, runId: r.data.id }
}

describe('EVINCE exports', () => {
  it('rounds CSV: a column per top-k item, no JSON in any cell, numbers without float noise', async () => {
    const { researcher, runId } = await batchRun()
    const rows = csv(await lines(researcher, runId, 'rounds', 'csv'))
    const jsonl = (await lines(researcher, runId, 'rounds', 'jsonl')).map((l) => JSON.parse(l))
    expect(rows).toHaveLength(6)
    const header = Object.keys(rows[0] ?? {})
    for (const seat of ['A', 'B'])
      for (let i = 1; i <= 5; i++)
        expect(header).toEqual(expect.arrayContaining([`${seat}_${i}_label`, `${seat}_${i}_probability`]))
    for (const row of rows)
      for (const [col, cell] of Object.entries(row)) {
        expect(cell, col).not.toMatch(/^[[{]/)
        if (cell !== '' && !Number.isNaN(Number(cell))) expect(clean(cell), `${col} = ${cell}`).toBe(true)
      }
    // The same numbers as JSONL, to 12 significant digits; the lists spread over the item columns.
    for (const [i, row] of rows.entries()) {
      const j = jsonl[i]
      expect(row.session).toBe(j.session)
      for (const col of ['entropyA', 'klAB', 'jsd', 'wd', 'mi', 'nmi'])
        expect(Number(row[col]), col).toBeCloseTo(j[col] as number, 10)
      expect(row.A_1_label).toBe(j.A[0].label)
      expect(Number(row.A_1_probability)).toBe(j.A[0].probability)
      expect(row.labels).toBe(j.labels.join(' | '))
    }
    // Dengue round 1: B (Gemini) lists 3 items, so its columns 4 and 5 are empty.
    const dengue1 = rows.find((r) => r.round === '1' && r.A_1_label === 'Dengue Fever')
    expect(dengue1?.warnings).toMatch(/B's probabilities sum to 0\.95/)
  })

  it('finals: the top-1 and whether it is the ground truth, P_f as item columns in CSV', async () => {
    const { researcher, runId } = await batchRun()
    const rows = csv(await lines(researcher, runId, 'finals', 'csv'))
    const byTruth = Object.fromEntries(rows.map((r) => [r.truth, r]))
    // Dengue: P_f's top-1 is Dengue Fever; Jaundice: "Obstructive Jaundice" is not "Jaundice".
    expect(byTruth['Dengue Fever']).toMatchObject({ top1: 'Dengue Fever', top1Correct: 'true' })
    expect(byTruth.Jaundice).toMatchObject({ top1Correct: 'false' })
    expect(byTruth.Jaundice?.top1).not.toBe('Jaundice')
    expect(Object.keys(rows[0] ?? {})).toEqual(
      expect.arrayContaining(['final_1_label', 'final_10_probability', 'entopps_1_label', 'labTests']),
    )
    for (const row of rows) for (const cell of Object.values(row)) expect(cell).not.toMatch(/^[[{]/)
    expect(byTruth['Dengue Fever']?.labTests).toBe('complete blood count | serology')
    // The JSONL keeps the lists, with the same top-1 columns.
    const jsonl = (await lines(researcher, runId, 'finals', 'jsonl')).map((l) => JSON.parse(l))
    const dengue = jsonl.find((j) => j.truth === 'Dengue Fever')
    expect(dengue).toMatchObject({ top1: 'Dengue Fever', top1Correct: true })
    expect(Array.isArray(dengue.final)).toBe(true)
    expect(dengue.final[0]).toMatchObject({ label: byTruth['Dengue Fever']?.final_1_label })
  })

  it('D joins back to the source file: its data row and its own id column', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const imp = await importAndWait(researcher, {
      studyId: study.id,
      name: 'with ids',
      kind: 'cases',
      file: new File(
        ['case_id,symptoms,label\nP-17,"fever, rash",Dengue\nP-03,"jaundice, itching",Hepatitis\n'],
        'c.csv',
      ),
    })
    if (!imp.ok) throw new Error(imp.error)
    const r = await execute(createRun, researcher, {
      protocol: 'evince',
      studyId: study.id,
      name: 'joins',
      A: { kind: 'llm', connectionId: conn.id, model: 'gen-a' },
      B: { kind: 'llm', connectionId: conn.id, model: 'gen-b' },
      datasetId: imp.data.id,
      start: false,
    })
    if (!r.ok) throw new Error(r.error)
    const d = csv(await lines(researcher, r.data.id, 'd', 'csv'))
    expect(d.map((row) => [row.position, row.sourceRow, row.sourceId]).sort()).toEqual([
      ['0', '1', 'P-17'],
      ['1', '2', 'P-03'],
    ])
  })

  it('a typed-in case is kept apart from the case sets: never offered as one, nor made the default', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const single = async (symptoms: string) => {
      const r = await execute(createRun, researcher, {
        protocol: 'evince',
        studyId: study.id,
        name: 'one case',
        A: { kind: 'llm', connectionId: conn.id, model: 'gen-a' },
        B: { kind: 'llm', connectionId: conn.id, model: 'gen-b' },
        case: { symptoms, truth: 'Flu' },
        start: false,
      })
      if (!r.ok) throw new Error(r.error)
      return r.data
    }
    await single('fever, cough, aches')
    await single('rash, itching')
    const ds = await execute(listDatasets, researcher, { studyId: study.id })
    if (!ds.ok) throw new Error(ds.error)
    expect(ds.data.filter((d) => d.kind === 'cases')).toEqual([])
    const typed = ds.data.filter((d) => d.kind === 'typed-cases')
    expect(typed).toHaveLength(1)
    expect(typed[0]?._count.instances).toBe(2)
  })
})
