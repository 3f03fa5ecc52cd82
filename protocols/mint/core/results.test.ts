import { describe, expect, it } from 'vitest'
import { parseGameIds, parseRecord, parseRunPath, parseTaskLines, referenceText } from './results'

describe('MINT released-file readers', () => {
  it('parses run paths with and without feedback', () => {
    expect(parseRunPath('gpt-3.5-turbo-0613/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl')).toEqual({
      model: 'gpt-3.5-turbo-0613',
      feedback: null,
      phf: null,
      k: 1,
      p: 1,
      taskType: 'reasoning',
      dataset: 'gsm8k',
      run: 'F=None/max1_p1+tool+cd',
    })
    expect(
      parseRunPath('m/F=gpt-4-0613/PHF=GT-binary/max5_p2+tool+cd/decision_making/alfworld/results.jsonl'),
    ).toMatchObject({
      feedback: 'gpt-4-0613',
      phf: { groundTruth: true, form: 'binary' },
      k: 5,
      run: 'F=gpt-4-0613/PHF=GT-binary/max5_p2+tool+cd',
    })
  })

  it.each([
    ['m/F=None/max5_p2+tool+cd/reasoning/gsm8k/out.jsonl', /does not end in results.jsonl/],
    ['m/None/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl', /F=<feedback>/],
    ['m/F=x/PHF=maybe/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl', /PHF=maybe/],
    ['m/F=None/max5+tool+cd/reasoning/gsm8k/results.jsonl', /max<k>_p<p>/],
    ['m/F=None/max5_p2+tool+cd/reasoning/mbpp/results.jsonl', /mbpp is not a reasoning data set/],
    ['m/F=None/max5_p2+tool+cd/reasoning/gsm9k/results.jsonl', /dataset/],
    ['m/F=None/max11_p2+tool+cd/reasoning/gsm8k/results.jsonl', /k:/],
    ['m/F=None/PHF=GT-textual/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl', /PHF= without feedback/],
  ])('refuses %s', (p, why) => {
    expect(() => parseRunPath(p)).toThrow(why)
  })

  it('records: names the line of a bad one', () => {
    expect(() => parseRecord('{', 'f:3')).toThrow(/^f:3: not JSON/)
    expect(() => parseRecord('{"state": {}, "task": {}}', 'f:4')).toThrow(/^f:4: not a MINT record: state.history/)
  })

  it('task lines (JSON Lines despite .json) and references as the instance keeps them', () => {
    const t = parseTaskLines(
      '{"id": 1, "prompt": "Q", "reference": [0, 5], "answer_type": "list of integer"}\n\n{"id": 2, "prompt": "R", "reference": "6"}\n',
      'x',
    )
    expect(t.map((x) => referenceText(x.reference))).toEqual(['[0,5]', '6'])
    expect(() => parseTaskLines('{"id": 1}', 'x')).toThrow(/^x:1: not a MINT task: prompt/)
    expect(() => parseTaskLines('{"id":1,"prompt":"a","reference":""}\n'.repeat(3), 'x', 2)).toThrow(/more than 2/)
    expect(referenceText(false)).toBe('false')
  })

  it('ALFWorld game ids: the sub-type from the id, marked as not playable here', () => {
    const g = parseGameIds(
      'pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T1\nlook_at_obj_in_light-X/trial_T2\n\nweird/trial\n',
    )
    expect(g.map((x) => x.type)).toEqual(['heat', 'examine', null])
    expect(g[0]?.note).toMatch(/environment not installed/)
  })
})
