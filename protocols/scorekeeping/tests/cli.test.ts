// `parley scorekeeping replay`, run as a user would (no database). Expected scores worked out by hand.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { describeShared, sharedDir } from '../../../tests/support/shared'

const root = path.resolve(import.meta.dirname, '../../..')
const env = { ...process.env, DATABASE_URL: '' }
const parley = (args: string[], input?: string) =>
  spawnSync(process.execPath, ['bin/parley.mjs', ...args], { cwd: root, env, input, encoding: 'utf8', timeout: 60_000 })

/**
 * A hand-made 2-slot game: slots city (Rome), day (May) in that key order; request order day, city,
 * so the ground-truth turns are day 0, city 1. Probing rounds 0, 1, 2; probe_answers[r] = [city, day].
 */
const instance = {
  game_id: 5,
  tag: 'AGENT',
  slots: { city: 'Rome', day: 'May' },
  request_order: ['day', 'city'],
  requests: { city: 0, day: 0 },
  probes: { '0': { city: 0, day: 0 }, '1': { city: 0, day: 0 }, '2': { city: 0, day: 0 } },
}
const perfect = {
  experiment: 'trip',
  game_id: 5,
  instance,
  slot_answers: ['ANSWER: In May.', 'ANSWER: Rome.'],
  probe_answers: [
    [['ASIDE: No.'], ['ASIDE: No.']],
    [['ASIDE: No.'], ['ASIDE: Yes.']],
    [['ASIDE: Yes.'], ['ASIDE: Yes.']],
  ],
}

describe('parley scorekeeping replay', () => {
  it("prints clembench's scores.json for a perfect game as one JSON line", () => {
    const r = parley(['scorekeeping', 'replay', '-'], JSON.stringify(perfect))
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
    const turn = (requests: number, filled?: number) => ({
      'Request Count': requests,
      'Parsed Request Count': requests,
      'Violated Request Count': 0,
      Accuracy: 1,
      ...(filled === undefined ? {} : { 'Slot Filled?': filled }),
    })
    // 2 probes in round 0, an answer and 2 probes in rounds 1 and 2 → 8 requests; middle round int(3/2) − 1 = 0
    expect(JSON.parse(r.stdout)).toEqual({
      'turn scores': { 0: turn(2), 1: turn(3, 1), 2: turn(3, 1) },
      'episode scores': {
        'Middle-Accuracy': 1,
        Accuracy: 1,
        Kappa: 1,
        'Truncated Kappa': 1,
        'Slot-Filling-Accuracy': 1,
        'Main Score': 100,
        Aborted: 0,
        Lose: 0,
        Success: 1,
        'Request Count': 8,
        'Parsed Request Count': 8,
        'Violated Request Count': 0,
        'Request Success Ratio': 1,
      },
    })
  })

  it('retries and an abort: NaN scores come out as null', () => {
    // round 1: "city" answered on try 3; "day" gets 5 invalid replies → aborted in round 1
    const c = structuredClone(perfect)
    c.probe_answers[1] = [
      ['maybe', 'ASIDE: perhaps', 'ASIDE: no'],
      ['Yes', 'Yes', 'Yes', 'Yes', 'Yes'],
    ]
    const r = parley(['scorekeeping', 'replay', '-'], JSON.stringify(c))
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(Object.keys(out['turn scores'])).toEqual(['0'])
    // requests: 2 + (1 answer + 3 tries + 5 tries) = 11; parsed 2 + 2 = 4; violated 2 + 5 = 7
    expect(out['episode scores']).toEqual({
      'Middle-Accuracy': null,
      Accuracy: null,
      Kappa: null,
      'Truncated Kappa': null,
      'Slot-Filling-Accuracy': null,
      'Main Score': null,
      Aborted: 1,
      Lose: 0,
      Success: 0,
      'Request Count': 11,
      'Parsed Request Count': 4,
      'Violated Request Count': 7,
      'Request Success Ratio': 4 / 11,
    })
  })

  it('refuses bad input with one clear line and exit 1', () => {
    const missing = parley(
      ['scorekeeping', 'replay', '-'],
      JSON.stringify({ ...perfect, slot_answers: ['ANSWER: May'] }),
    )
    expect(missing.status).toBe(1)
    expect(missing.stderr).toMatch(/^parley: -: slot_answers\[1\] is missing: .*round 2 \(slot "city"\)\.\n$/)
    const shape = parley(['scorekeeping', 'replay', '-'], JSON.stringify({ ...perfect, probe_answers: 'yes' }))
    expect(shape.status).toBe(1)
    expect(shape.stderr).toMatch(/The case does not fit: probe_answers: /)
    const inst = parley(
      ['scorekeeping', 'replay', '-'],
      JSON.stringify({ ...perfect, instance: { ...instance, request_order: ['day'] } }),
    )
    expect(inst.status).toBe(1)
    expect(inst.stderr).toMatch(/experiment trip, game_id 5: requestOrder must name every slot once/)
    const notJson = parley(['scorekeeping', 'replay', '-'], '{')
    expect(notJson.status).toBe(1)
    expect(notJson.stderr).toMatch(/is not JSON/)
    const noFile = parley(['scorekeeping', 'replay', 'no/such/case.json'])
    expect(noFile.status).toBe(1)
    expect(noFile.stderr).toMatch(/Cannot read no\/such\/case\.json/)
  })
})

describeShared(
  'parley scorekeeping replay on a released instance',
  () => {
    it('travel-booking game 0 answered perfectly scores 100', () => {
      const file = JSON.parse(readFileSync(sharedDir('datasets/clembench-privateshared/in/instances.json'), 'utf8'))
      const inst = file.experiments[0].game_instances[0]
      const slots = Object.keys(inst.slots)
      const turn = (s: string) => inst.request_order.indexOf(s)
      const c = {
        experiment: 'travel-booking',
        game_id: 0,
        instance: inst,
        slot_answers: inst.request_order.map((s: string) => `ANSWER: ${inst.slots[s]}`),
        probe_answers: Array.from({ length: slots.length + 1 }, (_, r) =>
          slots.map((s) => [r > turn(s) ? 'ASIDE: Yes.' : 'ASIDE: No.']),
        ),
      }
      const r = parley(['scorekeeping', 'replay', '-'], JSON.stringify(c))
      expect(r.stderr).toBe('')
      expect(JSON.parse(r.stdout)['episode scores']).toMatchObject({ 'Main Score': 100, 'Request Count': 35 })
    })
  },
  'datasets/clembench-privateshared',
)
