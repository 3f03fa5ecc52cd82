// MINT's leaderboard: imported released runs and Parley's own finished MINT runs (rows written here as
// the engine writes them: a run, its sessions and their message logs, LLM calls), with SR_k from the run
// of budget k, the OLS fit, Δfeedback, the invalid-action ratio and cost. On the released subset its
// numbers equal `parley mint sr`'s.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { strToU8, zipSync } from 'fflate'
import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { executeOrThrow } from '@/lib/server/operation'
import type { MintMessageBody } from '@/protocols/mint/core/protocol'
import { cli } from '@/protocols/mint/server/cli'
import { buildLeaderboard, mintStudyPage, mintStudyPanel } from '@/protocols/mint/server/leaderboard'
import { importResults } from '@/protocols/mint/server/released-import'
import { MintLeaderboardPage, MintStudyPanel } from '@/protocols/mint/ui/leaderboard'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { parleyRun } from './parley-run'
import { runProtocolCli } from '../../../tests/support/protocol-cli'
import { describeShared } from '../../../tests/support/shared'
import { OUTPUTS } from './released'

let researcher: Actor
beforeAll(async () => {
  researcher = await makeUser('researcher')
})

const record = (success: boolean, invalid = 0) =>
  JSON.stringify({
    state: {
      history: [{ role: 'user', content: 'P' }],
      finished: true,
      success,
      latest_output: {},
      agent_action_count: { propose_solution: 1, use_tool: 1, invalid_action: invalid },
      token_counter: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
      terminate_reason: success ? 'task_success' : 'max_steps',
      error: null,
    },
    task: { task_name: 'reasoning', task_id: 0, prompt: 'p', reference: '1', metadata: {} },
  })
const zipOf = (files: Record<string, string>) =>
  new File([zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(v)])))], 't.zip')

const page = async (studyId: string) => {
  const p = await mintStudyPage(researcher, studyId, ['leaderboard'], {})
  if (!p) throw new Error('no page')
  return p.data
}

const solve: MintMessageBody[] = [
  { sender: 'agent', kind: 'turn', content: '<solution>6</solution>', error: null },
  { sender: 'env', kind: 'verdict', correct: true },
]
const wrongTwice: MintMessageBody[] = [
  { sender: 'agent', kind: 'turn', content: 'hmm', error: null },
  { sender: 'agent', kind: 'turn', content: '<solution>5</solution>', error: null },
  { sender: 'env', kind: 'verdict', correct: false },
]

describe('MINT leaderboard', () => {
  it('pure: SR per run, the curve per setting, the fit, Δfeedback, the invalid-action flag', () => {
    const ep = (success: boolean, invalid = 0) => ({
      dataset: 'gsm8k' as const,
      success,
      counts: { propose_solution: 1, use_tool: 0, invalid_action: invalid },
    })
    const run = (k: number, feedback: string | null, eps: ReturnType<typeof ep>[]) => ({
      source: 'imported' as const,
      id: `m/${k}/${feedback}`,
      label: `k${k}`,
      model: 'm',
      feedback,
      phf: feedback ? 'no_GT-textual' : null,
      k,
      p: 2,
      episodes: eps,
      tokens: null,
      costUsd: null,
      notCounted: 0,
    })
    const d = buildLeaderboard([
      run(1, null, [ep(false, 1), ep(false, 1)]),
      run(2, null, [ep(true), ep(false)]),
      run(3, null, [ep(true), ep(true), ep(true), ep(false)]),
      run(3, 'gpt-4', [ep(true), ep(true)]),
    ])
    expect(d.runs.map((r) => [r.setting, r.k, r.sr])).toEqual([
      ['F=gpt-4/PHF=no_GT-textual', 3, 100],
      ['F=None', 1, 0],
      ['F=None', 2, 50],
      ['F=None', 3, 75],
    ])
    // 2 invalid of 4 actions: 50 % > 20 %
    expect(d.runs[1]?.invalid).toEqual({ invalid: 2, total: 4, ratio: 50, flagged: true })
    expect(d.runs[2]?.invalid.flagged).toBe(false)
    const none = d.curves.find((c) => c.setting === 'F=None')
    expect(none?.points.map((p) => [p.k, p.sr])).toEqual([
      [1, 0],
      [2, 50],
      [3, 75],
    ])
    expect(none?.fit).toEqual({ slope: 37.5, intercept: -33.333, r2: 0.9643 })
    expect(d.deltas).toEqual([
      expect.objectContaining({ k: 3, micro: 25, byType: { reasoning: 25 }, without: { id: 'm/3/null', label: 'k3' } }),
    ])
    expect(d.taskTypes).toEqual(['reasoning'])
    expect(d.datasets).toEqual(['gsm8k'])
  })

  it('reads imported runs and Parley runs (finished sessions only, SR_k from the run with budget k)', async () => {
    const viewer = await makeUser('viewer')
    const study = (await makeStudy(researcher, [viewer])).id
    expect(await page(study)).toMatchObject({ page: 'leaderboard', runs: [], curves: [], deltas: [], canImport: true })
    // a viewer reads the board but is not offered the import
    expect((await mintStudyPage(viewer, study, ['leaderboard'], {}))?.data.canImport).toBe(false)
    const draw = async () =>
      renderToStaticMarkup(
        createElement(MintLeaderboardPage, {
          study: { id: study, name: 'S' },
          path: ['leaderboard'],
          title: 'MINT leaderboard',
          data: await page(study),
        }),
      )
    const empty = await draw()
    expect(empty).toContain('No MINT results yet')
    expect(empty).toContain('Import released results')
    expect(empty).toContain('name="file"')
    await executeOrThrow(importResults, researcher, {
      studyId: study,
      file: zipOf({
        'o/m/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl': `${record(false, 1)}\n${record(true)}\n`,
        'o/m/F=None/max2_p2+tool+cd/reasoning/gsm8k/results.jsonl': `${record(true)}\n${record(true)}\n`,
        'o/m/F=None/max2_p2+tool+cd/code_generation/mbpp/results.jsonl': `${record(false)}\n${record(true)}\n`,
      }),
    })
    await db.modelPrice.upsert({
      where: { model: 'm' },
      create: { model: 'm', inputPerMTok: 1, outputPerMTok: 10 },
      update: { inputPerMTok: 1, outputPerMTok: 10 },
    })
    // Parley: k = 1 solves 1 of 2; k = 2 solves 2 of 2 and has one unfinished session (not counted)
    await parleyRun(study, 'demo k=1', { k: 1 }, [{ log: solve }, { log: wrongTwice.slice(1) }])
    await parleyRun(study, 'demo k=2', { k: 2, feedback: { mode: 'none' } }, [
      { log: solve },
      { log: [...wrongTwice.slice(0, 1), ...solve] },
      { log: wrongTwice.slice(0, 1), status: 'running' },
    ])
    const d = await page(study)
    const imported = d.runs.filter((r) => r.source === 'imported')
    expect(imported.map((r) => [r.id, r.records, r.sr, r.byTask])).toEqual([
      ['m/F=None/max1_p1+tool+cd', 2, 50, { gsm8k: { records: 2, successes: 1, sr: 50 } }],
      [
        'm/F=None/max2_p2+tool+cd',
        4,
        75,
        { gsm8k: { records: 2, successes: 2, sr: 100 }, mbpp: { records: 2, successes: 1, sr: 50 } },
      ],
    ])
    // 4 records × (1000 in, 100 out) at $1 / $10 per million: 0.004 + 0.004
    expect(imported[1]?.costUsd).toBe(0.008)
    expect(imported[0]?.invalid).toMatchObject({ invalid: 1, total: 5 })
    const own = d.runs.filter((r) => r.source === 'parley')
    expect(own.map((r) => [r.label, r.model, r.k, r.p, r.records, r.successes, r.sr, r.notCounted])).toEqual([
      ['demo k=1', 'demo-model', 1, 1, 2, 1, 50, 0],
      ['demo k=2', 'demo-model', 2, 2, 2, 2, 100, 1],
    ])
    expect(own[1]?.tokens).toEqual({ prompt: 300, completion: 30 })
    expect(own[1]?.costUsd).toBe(0.03)
    expect(d.curves.map((c) => [c.source, c.model, c.points.map((p) => [p.k, p.sr])])).toEqual([
      [
        'parley',
        'demo-model',
        [
          [1, 50],
          [2, 100],
        ],
      ],
      [
        'imported',
        'm',
        [
          [1, 50],
          [2, 75],
        ],
      ],
    ])
    expect(await mintStudyPage(researcher, study, ['nothing'], {})).toBeNull()
    const html = await draw()
    expect(html).not.toContain('No MINT results yet')
    // flagged: Parley's k = 2 run (1 invalid of 3 actions); not the imported k = 1 run (1 of 5: at the mark)
    expect(html).toContain('33.33 % <span')
    expect(html).toContain('20.00 % </td>')
    expect(html.split('above 20 %</span>')).toHaveLength(2)
    expect(html).toContain('75.00 %')
    expect(html).toContain('$0.0300')
    expect(html).toContain('1 not finished or not readable')
    const panel = await mintStudyPanel(researcher, study)
    expect(panel).toEqual({ runs: 2, importedFiles: 3, importedModels: ['m'] })
    expect(renderToStaticMarkup(createElement(MintStudyPanel, { studyId: study, data: panel }))).toContain(
      `/studies/${study}/p/mint/leaderboard`,
    )
  })
})

describeShared(
  'MINT leaderboard on the released subset',
  () => {
    it('gives the numbers of `parley mint sr` for the same tree', async () => {
      const study = (await makeStudy(researcher)).id
      const files = (readdirSync(OUTPUTS, { recursive: true }) as string[]).filter((f) => f.endsWith('results.jsonl'))
      await executeOrThrow(importResults, researcher, {
        studyId: study,
        file: zipOf(Object.fromEntries(files.map((f) => [f, readFileSync(path.join(OUTPUTS, f), 'utf8')]))),
      })
      const cliOut = JSON.parse(
        (await runProtocolCli('mint', cli, ['mint', 'sr', path.join(OUTPUTS, 'gpt-3.5-turbo-0613')])).stdout,
      )
      const d = await page(study)
      expect(d.runs).toHaveLength(cliOut.runs.length)
      for (const c of cliOut.runs) {
        const r = d.runs.find((x) => x.id === `gpt-3.5-turbo-0613/${c.path}`)
        expect(r, c.path).toBeDefined()
        expect({
          records: r?.records,
          successes: r?.successes,
          sr: r?.sr,
          byType: r?.byType,
          byTask: r?.byTask,
        }).toEqual({
          records: c.records,
          successes: c.successes,
          sr: c.sr,
          byType: c.byType,
          byTask: c.byTask,
        })
      }
      const none = d.curves.find((c) => c.setting === 'F=None')
      expect(Object.fromEntries(none?.points.map((p) => [String(p.k), p.sr]) ?? [])).toEqual(cliOut.srByK)
      expect(none?.fit).toEqual({ slope: cliOut.slope, intercept: cliOut.intercept, r2: cliOut.r2 })
      expect(d.deltas).toHaveLength(1)
      const { micro, byType } = d.deltas[0] as { micro: number; byType: object }
      expect({ micro, ...byType }).toEqual(cliOut.deltaFeedback)
      expect(cliOut.srByK).toEqual({ '1': 5, '2': 5, '3': 20, '4': 30, '5': 37.5 })
    })
  },
  'datasets/mint',
)
