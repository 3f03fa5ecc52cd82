// MINT's export in the authors' layout: runFolder is the inverse of parseRunPath (property test), and
// resultRecord of a replayed released episode gives back the released record's history, success, action
// counts and terminate reason (../shared/datasets/mint; skipped visibly without it).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { replay } from '@/lib/protocols/types'
import { pyJson, resultRecord, resultsJsonl, runFolder, taskNameOf } from '@/protocols/mint/core/export'
import { DATASETS, mintConfig, mintProtocol, TASK_TYPE_OF } from '@/protocols/mint/core/protocol'
import { parseRecord, parseRunPath } from '@/protocols/mint/core/results'
import { describeShared } from '../../../tests/support/shared'
import { messagesOf, OUTPUTS, type Released, releasedRecords } from './released'

const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,30}$/).filter((s) => !s.startsWith('F=') && s !== 'None')
const runArb = fc
  .record({
    model: name,
    feedback: fc.option(name, { nil: null }),
    groundTruth: fc.boolean(),
    form: fc.constantFrom('textual' as const, 'binary' as const),
    withPhf: fc.boolean(),
    k: fc.integer({ min: 1, max: 10 }),
    p: fc.integer({ min: 1, max: 10 }),
    dataset: fc.constantFrom(...DATASETS),
  })
  .map((r) => ({
    model: r.model,
    feedback: r.feedback,
    phf: r.feedback !== null && r.withPhf ? { groundTruth: r.groundTruth, form: r.form } : null,
    k: r.k,
    p: r.p,
    taskType: TASK_TYPE_OF[r.dataset],
    dataset: r.dataset,
  }))

describe('runFolder', () => {
  it('is the inverse of parseRunPath (both ways)', () => {
    fc.assert(
      fc.property(runArb, (r) => {
        const rel = runFolder(r)
        const { run: _run, ...back } = parseRunPath(rel)
        expect(back).toEqual(r)
        expect(runFolder(back)).toBe(rel)
      }),
      { numRuns: 300 },
    )
  })

  it('writes the released names', () => {
    expect(
      runFolder({
        model: 'gpt-3.5-turbo-0613',
        feedback: 'gpt-4-0613',
        phf: { groundTruth: false, form: 'textual' },
        k: 5,
        p: 2,
        taskType: 'reasoning',
        dataset: 'gsm8k',
      }),
    ).toBe('gpt-3.5-turbo-0613/F=gpt-4-0613/PHF=no_GT-textual/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl')
  })

  it.each([
    [{ dataset: 'mbpp' as const, taskType: 'reasoning' as const }, /not a reasoning data set/],
    [{ feedback: null, phf: { groundTruth: true, form: 'binary' as const } }, /PHF= needs/],
    [{ model: 'a/b' }, /cannot be a folder name/],
    [{ model: '..' }, /cannot be a folder name/],
    [{ feedback: 'None' }, /pass null/],
    [{ k: 0 }, /whole numbers/],
  ])('refuses %o', (change, error) => {
    const base = {
      model: 'm',
      feedback: null,
      phf: null,
      k: 5,
      p: 2,
      taskType: 'reasoning' as const,
      dataset: 'gsm8k' as const,
    }
    expect(() => runFolder({ ...base, ...change })).toThrow(error)
  })
})

describe('resultRecord', () => {
  it('an episode of a few turns, keys in the released order, read back by parseRecord', () => {
    const config = mintConfig.parse({ k: 2 })
    const instance = { id: '7', dataset: 'gsm8k' as const, prompt: 'What is 2+4?', reference: '6' }
    const state = replay(mintProtocol, config, instance, [
      { seq: 1, sender: 'agent', kind: 'turn', content: 'no tags', error: null },
      { seq: 2, sender: 'agent', kind: 'turn', content: '<solution>6</solution>', error: null },
      { seq: 3, sender: 'env', kind: 'verdict', correct: true },
    ])
    const rec = resultRecord(state, {
      task: { task_name: taskNameOf('gsm8k'), task_id: 7, prompt: instance.prompt, reference: '6', metadata: {} },
      tokenCounter: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    })
    expect(Object.keys(rec)).toEqual(['state', 'task'])
    expect(Object.keys(rec.state)).toEqual([
      'history',
      'finished',
      'success',
      'latest_output',
      'agent_action_count',
      'token_counter',
      'terminate_reason',
      'error',
    ])
    expect(rec.state).toMatchObject({
      success: true,
      finished: true,
      terminate_reason: 'task_success',
      agent_action_count: { propose_solution: 1, use_tool: 0, invalid_action: 1 },
    })
    expect(rec.state.history.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(rec.state.history[2]?.content).toMatch(/^Observation:\nI don't understand your input/)
    const line = resultsJsonl([rec])
    expect(line.endsWith('}\n')).toBe(true)
    expect(parseRecord(line.trimEnd(), 'x')).toEqual(rec)
  })

  it('pyJson writes as Python json.dumps does', () => {
    expect(pyJson({ a: [1, 2.5, 'é–李'], b: null, c: true, d: 'x"\n' })).toBe(
      '{"a": [1, 2.5, "\\u00e9\\u2013\\u674e"], "b": null, "c": true, "d": "x\\"\\n"}',
    )
    expect(pyJson(1e-7)).toBe('1e-07')
  })
})

describeShared(
  'resultRecord on the released subset',
  () => {
    let records: Released[] = []
    beforeAll(() => {
      records = releasedRecords()
    })

    it('reproduces history, success, action counts and terminate reason of every replayable record', () => {
      const bad: string[] = []
      for (const r of records) {
        const state = replay(mintProtocol, r.config, r.instance, messagesOf(r))
        const rec = resultRecord(state, { task: r.record.task, tokenCounter: r.record.state.token_counter })
        const want = r.record.state
        const where = `${r.file}:${r.line}`
        if (JSON.stringify(rec.state.history) !== JSON.stringify(want.history)) bad.push(`${where} history`)
        if (rec.state.success !== want.success) bad.push(`${where} success`)
        if (JSON.stringify(rec.state.agent_action_count) !== JSON.stringify(want.agent_action_count))
          bad.push(`${where} counts`)
        if (rec.state.terminate_reason !== want.terminate_reason) bad.push(`${where} reason`)
        if (rec.state.finished !== want.finished) bad.push(`${where} finished`)
        if (JSON.stringify(rec.state.token_counter) !== JSON.stringify(want.token_counter)) bad.push(`${where} tokens`)
        if (JSON.stringify(rec.task) !== JSON.stringify(r.record.task)) bad.push(`${where} task`)
        // the folder the record was read from
        expect(runFolder(r.run)).toBe(r.file.split(path.sep).join('/'))
      }
      expect(records).toHaveLength(240)
      expect(bad).toEqual([])
    })

    it('pyJson gives back every released line byte for byte', () => {
      let same = 0
      const differ: string[] = []
      for (const r of records) {
        const line = readFileSync(path.join(OUTPUTS, r.file), 'utf8').split('\n')[r.line - 1] as string
        if (pyJson(r.record) === line) same++
        else differ.push(`${r.file}:${r.line}`)
      }
      console.log(`MINT export: ${same} of ${records.length} released lines re-serialised byte for byte`)
      expect(differ).toEqual([])
      expect(same).toBe(240)
    })
  },
  'datasets/mint',
)
