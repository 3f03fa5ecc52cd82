import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { describeShared, sharedDir } from '../../../tests/support/shared'
import {
  type AdvantageTables,
  advantageTables,
  codePointLength,
  episodeDecisions,
  episodeReturn,
  MAX_STATE_LENGTH,
} from './advantages'
import { parseJsonl, type RehacLine } from './trajectory'

/** A QA trajectory whose steps follow `bits` (0 agent, 1 human), each with its own text. */
const traj = (question: string, bits: string) =>
  `Question: ${question}\n${[...bits].map((b, i) => `<solver> ${b === '1' ? 'human' : 'agent'}\nThought ${i + 1}: t${b}\nAction ${i + 1}: Search[x${b}]\nObservation ${i + 1}: o${b}`).join('\n')}\n\n`

describe('advantages on synthetic episodes', () => {
  it('gives every decision the episode return R = T − λ·C, C over the whole trajectory', () => {
    const d = episodeDecisions(traj('q', '011'), 1, 0.08)
    expect(d.map((x) => x.action)).toEqual([0, 1, 1])
    for (const x of d) expect(x.return).toBeCloseTo(1 - 0.08 * 2, 12)
    expect(d[0]?.state).toBe('Question: q\n<solver>')
    expect(d[1]?.state).toBe(
      'Question: q\n<solver> agent\nThought 1: t0\nAction 1: Search[x0]\nObservation 1: o0\n<solver>',
    )
    expect(episodeReturn(0.5, 3, 0.1)).toBeCloseTo(0.2, 12)
  })

  it('averages by exact state and action, and the two advantages of a state sum to 0', () => {
    const t = advantageTables(
      [
        { trajectory: traj('q', '0'), f1: 1 }, // R 1
        { trajectory: traj('q', '1'), f1: 1 }, // R 0.9
        { trajectory: traj('q', '11'), f1: 0 }, // R −0.2 (shares the state after step 1 with the line above)
        { trajectory: traj('q', '10'), f1: 0.5 }, // R 0.4
        { trajectory: traj('other', '0'), f1: 1 }, // one action only: no advantage row
      ],
      { lambda: 0.1 },
    )
    expect(t.decisions).toBe(7)
    expect(t.states).toBe(3)
    // Root of q: agent R̄ = 1 (n 1); human R̄ = (0.9 − 0.2 + 0.4)/3 = 0.3666… (n 3); A = ±(1 − 0.3666…)/2.
    // After a human step 1: human R̄ = −0.2, agent R̄ = 0.4 → A(human) = −0.3, A(agent) = 0.3.
    expect(t.advantages.map((r) => [r.state.length, r.action, r.count])).toEqual([
      ['Question: q\n<solver>'.length, 0, 1],
      ['Question: q\n<solver>'.length, 1, 3],
      [expect.any(Number), 1, 1],
      [expect.any(Number), 0, 1],
    ])
    const [a, b, c, d] = t.advantages
    expect(a?.reward).toBeCloseTo((1 - 1.1 / 3) / 2, 12)
    expect(b?.meanReturn).toBeCloseTo(1.1 / 3, 12)
    expect(c?.reward).toBeCloseTo(-0.3, 12)
    expect(d?.reward).toBeCloseTo(0.3, 12)
    for (let i = 0; i < t.advantages.length; i += 2)
      expect((t.advantages[i]?.reward as number) + (t.advantages[i + 1]?.reward as number)).toBe(0)
    expect(t.imitation.map((r) => r.action)).toEqual([0, 0])
    // The Monte-Carlo table keeps single-action states too, in first-seen (state, action) order.
    expect(t.monteCarlo.map((r) => [r.action, r.count])).toEqual([
      [0, 1],
      [1, 3],
      [1, 1],
      [0, 1],
      [0, 1],
    ])
  })

  it('keeps a state of exactly 5,041 code points and drops one of 5,042 (astral characters count once)', () => {
    // The root state is "Question: " + q + "\n<solver>": 19 code points besides q.
    const astral = '\u{10B00}' // AVESTAN LETTER A, two UTF-16 units
    const q5041 = `${astral.repeat(3000)}${'a'.repeat(5041 - 19 - 3000)}`
    const q5042 = `${q5041}b`
    expect(codePointLength(`Question: ${q5041}\n<solver>`)).toBe(MAX_STATE_LENGTH)
    expect(`Question: ${q5041}\n<solver>`.length).toBe(MAX_STATE_LENGTH + 3000) // UTF-16 would drop it
    const eps = (q: string) => [
      { trajectory: traj(q, '0'), f1: 1 },
      { trajectory: traj(q, '1'), f1: 1 },
    ]
    const kept = advantageTables(eps(q5041), { lambda: 0.08 })
    expect(kept.advantages.map((r) => [r.action, r.reward])).toEqual([
      [0, expect.closeTo(0.04, 12)],
      [1, expect.closeTo(-0.04, 12)],
    ])
    expect(advantageTables(eps(q5042), { lambda: 0.08 }).advantages).toEqual([])
  })

  it('strips the leading whitespace of the text as Python strip() does', () => {
    const d = episodeDecisions(`\u00a0\n ${traj('q', '0')}`, 1, 0)
    expect(d[0]?.state).toBe('Question: q\n<solver>')
  })
})

describeShared(
  'ReHAC advantages of the released strategyqa.jsonl (λ = 0.08)',
  () => {
    let lines: RehacLine[]
    let t: AdvantageTables
    beforeAll(() => {
      lines = parseJsonl(readFileSync(sharedDir('datasets', 'rehac', 'strategyqa.jsonl'), 'utf8'))
      t = advantageTables(lines, { lambda: 0.08 })
    })

    it('counts decisions, states and rows', () => {
      // 8,641 markers; 2,172 distinct state strings, 2,169 of them seen with both actions (no state is
      // over 5,041 code points: the longest trajectory has 3,908). The authors' data_preprocess.py run on
      // the same file gave the same 4,338 rows, value for value.
      expect(t.decisions).toBe(8641)
      expect(t.states).toBe(2172)
      expect(t.monteCarlo.length).toBe(4341)
      expect(t.advantages.length).toBe(4338)
      expect(t.imitation.length).toBe(2169)
      for (let i = 0; i < t.advantages.length; i += 2) {
        const [a, b] = [t.advantages[i], t.advantages[i + 1]]
        expect(a?.state).toBe(b?.state)
        expect((a?.reward as number) + (b?.reward as number)).toBe(0)
      }
    })

    it('row 1–2 by hand: idx 296, the question typo splits its root state', () => {
      // Lines 1, 3, 4 (idx 296) start "Question: Would it be safe …"; line 2 has "WouldL", so it has its
      // own root state. Paths and R = f1 − 0.08·C: line 1 "00" f1 1 → 1; line 3 "10" → 0.92; line 4 "11" → 0.84.
      // Agent: R̄ = 1 (n 1); human: R̄ = (0.92 + 0.84)/2 = 0.88 (n 2); A = ±(1 − 0.88)/2 = ±0.06.
      const [a, b] = t.advantages
      expect(a?.state).toBe('Question: Would it be safe to have a jackfruit thrown at your head?\n<solver>')
      expect([a?.action, a?.count, b?.action, b?.count]).toEqual([0, 1, 1, 2])
      expect(a?.meanReturn).toBe(1)
      expect(b?.meanReturn).toBeCloseTo(0.88, 12)
      expect(a?.reward).toBeCloseTo(0.06, 12)
      expect(b?.reward).toBeCloseTo(-0.06, 12)
    })

    it('idx 342 by hand: both its states', () => {
      // Lines 282 "1", 283 "00", 284 "01", all f1 1 → R 0.92, 1, 0.92.
      // Root: agent (283, 284) R̄ = 0.96 n 2, human (282) R̄ = 0.92 n 1 → A(agent) = +0.02.
      // After agent step 1 (the same text in 283 and 284): agent (283) 1, human (284) 0.92 → A(agent) = +0.04.
      const root = 'Question: Would Donald Duck be allowed into most grocery stores?\n<solver>'
      const rows = t.advantages.filter((r) => r.state.startsWith(root))
      expect(rows.map((r) => [r.state === root, r.action, r.count])).toEqual([
        [true, 1, 1],
        [true, 0, 2],
        [false, 0, 1],
        [false, 1, 1],
      ])
      expect(rows.map((r) => r.reward)).toEqual([
        expect.closeTo(-0.02, 12),
        expect.closeTo(0.02, 12),
        expect.closeTo(0.04, 12),
        expect.closeTo(-0.04, 12),
      ])
      expect(rows[2]?.state.startsWith(`${root} agent\nThought 1: `)).toBe(true)
      expect(lines[281]?.idx).toBe(342)
    })
  },
  'datasets/rehac',
)
