// A Parley MINT run exported in the authors' layout (a zip of results.jsonl files): the folder names,
// the records (read back by parseRecord and `parley mint sr`), the token counters, what is left out; and
// the released F=None k = 5 run stored as Parley sessions exports back to the released records.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { strFromU8, unzipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import type { MintMessageBody } from '@/protocols/mint/core/protocol'
import { parseRecord, parseRunPath } from '@/protocols/mint/core/results'
import { cli } from '@/protocols/mint/server/cli'
import { folderSafe, mintExportFiles } from '@/protocols/mint/server/exports'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { runProtocolCli } from '../../../tests/support/protocol-cli'
import { describeShared } from '../../../tests/support/shared'
import { parleyRun } from './parley-run'
import { messagesOf, type Released, releasedRecords } from './released'

const tmp = mkdtempSync(path.join(tmpdir(), 'parley-mint-export-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

let researcher: Actor
beforeAll(async () => {
  researcher = await makeUser('researcher')
})

const exported = async (runId: string) => {
  const zip = unzipSync(
    await (mintExportFiles['results-jsonl'] as { build(id: string): Promise<Uint8Array> }).build(runId),
  )
  return Object.fromEntries(Object.entries(zip).map(([k, v]) => [k, strFromU8(v)]))
}
const writeTree = (dir: string, files: Record<string, string>) => {
  for (const [k, v] of Object.entries(files)) {
    if (!k.endsWith('results.jsonl')) continue
    mkdirSync(path.dirname(path.join(dir, k)), { recursive: true })
    writeFileSync(path.join(dir, k), v)
  }
}

const solve: MintMessageBody[] = [
  { sender: 'agent', kind: 'turn', content: '<execute>print(2+4)</execute>', error: null },
  { sender: 'tool', kind: 'observation', output: '6\n', done: false },
  { sender: 'feedback', kind: 'feedback', text: 'Good, now propose it.' },
  { sender: 'agent', kind: 'turn', content: '<solution>6</solution>', error: null },
  { sender: 'env', kind: 'verdict', correct: true },
]

describe('MINT export in the authors’ layout', () => {
  it('names folders as the authors do, writes finished episodes, counts tokens, notes what is left out', async () => {
    expect(folderSafe('org/model')).toBe('org_model')
    expect(folderSafe('None')).toBe('model_None')
    const study = (await makeStudy(researcher)).id
    const runId = await parleyRun(
      study,
      'fb',
      { k: 2, feedback: { mode: 'textual', groundTruth: false, frequency: 'dense' } },
      [
        { log: solve },
        { log: solve.slice(0, 2), status: 'running' },
        {
          log: solve,
          instance: { id: '3', dataset: 'mbpp', prompt: 'Write f.', reference: 'assert f() == 1' },
        },
      ],
      {
        agent: { kind: 'llm', model: { connectionId: 'c', model: 'org/demo' }, helpers: {} },
        feedback: { kind: 'llm', model: { connectionId: 'c', model: 'gpt-4-0613' }, helpers: {} },
      },
    )
    const files = await exported(runId)
    expect(Object.keys(files).sort()).toEqual([
      'NOTES.txt',
      'org_demo/F=gpt-4-0613/PHF=no_GT-textual/max2_p2+tool+cd/code_generation/mbpp/results.jsonl',
      'org_demo/F=gpt-4-0613/PHF=no_GT-textual/max2_p2+tool+cd/reasoning/gsm8k/results.jsonl',
    ])
    expect(files['NOTES.txt']).toMatch(/2 finished episodes in 2 results files/)
    expect(files['NOTES.txt']).toMatch(/Left out \(1\):\n.*: not finished \(running\)/)
    const gsm = 'org_demo/F=gpt-4-0613/PHF=no_GT-textual/max2_p2+tool+cd/reasoning/gsm8k/results.jsonl'
    expect(parseRunPath(gsm)).toMatchObject({ model: 'org_demo', feedback: 'gpt-4-0613', k: 2, p: 2 })
    const lines = (files[gsm] as string).split('\n')
    expect(lines).toHaveLength(2) // one record and the final newline
    const rec = parseRecord(lines[0] as string, gsm)
    expect(rec.state).toMatchObject({
      success: true,
      terminate_reason: 'task_success',
      agent_action_count: { propose_solution: 1, use_tool: 1, invalid_action: 0 },
      token_counter: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    })
    expect(rec.task).toEqual({
      task_name: 'reasoning',
      task_id: 0,
      prompt: 'What is 2+4?',
      reference: '6',
      metadata: {},
    })
    expect(rec.state.history.map((m) => m.content.split('\n')[0])).toEqual([
      expect.stringMatching(/^You are a helpful assistant/),
      'Assistant:',
      'Observation:',
      'Assistant:',
    ])
    expect(rec.state.history[2]?.content).toContain('\nExpert feedback:\nGood, now propose it.\n')
    // `parley mint sr` reads the exported tree
    writeTree(tmp, files)
    const out = JSON.parse((await runProtocolCli('mint', cli, ['mint', 'sr', path.join(tmp, 'org_demo')])).stdout)
    expect(out.runs).toEqual([
      expect.objectContaining({
        path: 'F=gpt-4-0613/PHF=no_GT-textual/max2_p2+tool+cd',
        records: 2,
        successes: 2,
        sr: 100,
      }),
    ])
  })
})

describeShared(
  'MINT export of the released k = 5 run replayed as Parley sessions',
  () => {
    it('gives back each released record’s history, success, counts, reason and task id', async () => {
      const run = 'F=None/max5_p2+tool+cd'
      const released = releasedRecords().filter((r) => r.run.run === run)
      expect(released).toHaveLength(40)
      const study = (await makeStudy(researcher)).id
      const strip = (r: Released) => messagesOf(r).map(({ seq: _seq, ...m }) => m as MintMessageBody)
      const runId = await parleyRun(
        study,
        'released k5',
        { ...(released[0] as Released).config },
        released.map((r) => ({ log: strip(r), instance: r.instance })),
        { agent: { kind: 'llm', model: { connectionId: 'c', model: 'gpt-3.5-turbo-0613' }, helpers: {} } },
      )
      const files = await exported(runId)
      const bad: string[] = []
      for (const r of released) {
        const text = files[r.file.split(path.sep).join('/')]
        if (!text) {
          bad.push(`${r.file}: missing`)
          continue
        }
        const mine = text
          .split('\n')
          .filter(Boolean)
          .map((l) => parseRecord(l, r.file))
          .find((x) => x.task.task_id === r.record.task.task_id)
        const want = r.record
        if (!mine) bad.push(`${r.file}:${r.line} missing`)
        else if (
          JSON.stringify([
            mine.state.history,
            mine.state.success,
            mine.state.agent_action_count,
            mine.state.terminate_reason,
            mine.task.task_name,
          ]) !==
          JSON.stringify([
            want.state.history,
            want.state.success,
            want.state.agent_action_count,
            want.state.terminate_reason,
            want.task.task_name,
          ])
        )
          bad.push(`${r.file}:${r.line}`)
      }
      expect(bad).toEqual([])
      writeTree(path.join(tmp, 'released'), files)
      const out = JSON.parse(
        (await runProtocolCli('mint', cli, ['mint', 'sr', path.join(tmp, 'released', 'gpt-3.5-turbo-0613')])).stdout,
      )
      expect(out.runs).toEqual([expect.objectContaining({ path: run, records: 40, successes: 15, sr: 37.5 })])
    })
  },
  'datasets/mint',
)
