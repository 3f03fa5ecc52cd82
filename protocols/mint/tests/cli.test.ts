// `parley mint sr <dir>` in process (commander with the command module; tests/cli-help.test.ts checks
// that `parley` finds it). On a small tree written here, and on the released gpt-3.5-turbo-0613 subset.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { cli } from '@/protocols/mint/server/cli'
import { runProtocolCli } from '../../../tests/support/protocol-cli'
import { describeShared } from '../../../tests/support/shared'
import { OUTPUTS } from './released'

const tmp = mkdtempSync(path.join(tmpdir(), 'parley-mint-cli-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const parley = (args: string[]) => runProtocolCli('mint', cli, args)

const record = (success: boolean, dataset: string) =>
  JSON.stringify({
    state: {
      history: [{ role: 'user', content: 'P' }],
      finished: true,
      success,
      latest_output: {},
      agent_action_count: { propose_solution: 1, use_tool: 0, invalid_action: 0 },
      token_counter: {},
      terminate_reason: success ? 'task_success' : 'max_propose_steps',
      error: null,
    },
    task: { task_name: dataset, task_id: 0, prompt: 'p', reference: '1', metadata: {} },
  })
function writeRun(model: string, run: string, type: string, dataset: string, successes: boolean[]) {
  const d = path.join(tmp, model, run, type, dataset)
  mkdirSync(d, { recursive: true })
  writeFileSync(path.join(d, 'results.jsonl'), `${successes.map((s) => record(s, dataset)).join('\n')}\n`)
}

it('sr on a small tree: SR per run, by type and task, SR by k, the OLS fit and Δfeedback', async () => {
  // k=1: 0/4; k=2: 2/4; k=3: 3/4 → SR 0, 50, 75: slope 37.5, intercept −33.333, R² 0.9643
  writeRun('m', 'F=None/max1_p1+tool+cd', 'reasoning', 'gsm8k', [false, false])
  writeRun('m', 'F=None/max1_p1+tool+cd', 'code_generation', 'mbpp', [false, false])
  writeRun('m', 'F=None/max2_p2+tool+cd', 'reasoning', 'gsm8k', [true, false])
  writeRun('m', 'F=None/max2_p2+tool+cd', 'code_generation', 'mbpp', [true, false])
  writeRun('m', 'F=None/max3_p2+tool+cd', 'reasoning', 'gsm8k', [true, true])
  writeRun('m', 'F=None/max3_p2+tool+cd', 'code_generation', 'mbpp', [true, false])
  writeRun('m', 'F=gpt-4-0613/PHF=no_GT-textual/max3_p2+tool+cd', 'reasoning', 'gsm8k', [true, true])
  writeRun('m', 'F=gpt-4-0613/PHF=no_GT-textual/max3_p2+tool+cd', 'code_generation', 'mbpp', [true, true])
  const r = await parley(['mint', 'sr', path.join(tmp, 'm')])
  expect(r.stderr).toBe('')
  expect(r.status).toBe(0)
  const out = JSON.parse(r.stdout)
  expect(out.runs.map((x: { path: string }) => x.path)).toEqual([
    'F=None/max1_p1+tool+cd',
    'F=None/max2_p2+tool+cd',
    'F=None/max3_p2+tool+cd',
    'F=gpt-4-0613/PHF=no_GT-textual/max3_p2+tool+cd',
  ])
  expect(out.runs[2]).toMatchObject({
    k: 3,
    p: 2,
    feedback: null,
    records: 4,
    successes: 3,
    sr: 75,
    byType: { reasoning: { records: 2, successes: 2, sr: 100 }, code_generation: { sr: 50 } },
    byTask: { gsm8k: { sr: 100 }, mbpp: { sr: 50 } },
  })
  expect(out.runs[3].feedback).toBe('gpt-4-0613')
  expect(out.srByK).toEqual({ '1': 0, '2': 50, '3': 75 })
  expect(out.slope).toBe(37.5)
  expect(out.intercept).toBe(-33.333)
  expect(out.r2).toBe(0.9643)
  expect(out.deltaFeedback).toEqual({ micro: 25, reasoning: 0, code_generation: 50 })
})

it('sr refuses a folder without results and a path that is not a MINT run', async () => {
  mkdirSync(path.join(tmp, 'empty'), { recursive: true })
  const a = await parley(['mint', 'sr', path.join(tmp, 'empty')])
  expect(a.status).toBe(1)
  expect(a.stderr).toMatch(/No results.jsonl under/)
  writeRun('bad', 'F=None/max5+tool', 'reasoning', 'gsm8k', [true])
  const b = await parley(['mint', 'sr', path.join(tmp, 'bad')])
  expect(b.status).toBe(1)
  expect(b.stderr).toMatch(/not a MINT results path/)
  const c = await parley(['mint', 'sr', path.join(tmp, 'nowhere')])
  expect(c.stderr).toMatch(/Cannot read/)
})

describeShared(
  'parley mint sr on the released subset',
  () => {
    it('gpt-3.5-turbo-0613: six runs of 40 records each', async () => {
      const r = await parley(['mint', 'sr', path.join(OUTPUTS, 'gpt-3.5-turbo-0613')])
      expect(r.status).toBe(0)
      const out = JSON.parse(r.stdout)
      expect(out.runs).toHaveLength(6)
      expect(out.runs.every((x: { records: number }) => x.records === 40)).toBe(true)
      // successes counted independently from the files' success flags: 2, 2, 8, 12, 15 of 40; feedback 19 of 40
      expect(out.srByK).toEqual({ '1': 5, '2': 5, '3': 20, '4': 30, '5': 37.5 })
      // OLS over (1..5, SR): slope = Σ(k−3)(SR−19.5)/10 = 90/10 = 9
      expect(out.slope).toBe(9)
      expect(out.deltaFeedback.micro).toBe(10) // 47.5 − 37.5
      expect(out.deltaFeedbackRun).toEqual({
        with: 'F=gpt-4-0613/PHF=no_GT-textual/max5_p2+tool+cd',
        without: 'F=None/max5_p2+tool+cd',
      })
      console.log(
        'mint sr on the released subset:',
        JSON.stringify({ srByK: out.srByK, slope: out.slope, r2: out.r2, deltaFeedback: out.deltaFeedback }),
      )
    })
  },
  'datasets/mint',
)
