import { describe, expect, it } from 'vitest'
import { align } from '@/protocols/evince/core/metrics'
import { evinceConfig, type TurnMessage } from '@/protocols/evince/core'
import {
  critPrompt,
  critReply,
  debaterPrompt,
  reportPrompt,
  reportReply,
  turnReply,
} from '@/protocols/evince/core/prompts'
import { DEMO_LABEL, demoReply } from '@/lib/llm/demo-model'
import { evinceDemo } from './demo'

const json = (messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>) =>
  JSON.parse(demoReply({ messages, response_format: { type: 'json_object' } }, [evinceDemo]))

describe('the demo model in an EVINCE debate', () => {
  const config = evinceConfig.parse({ k: 3 })
  const kase = { symptoms: 'high fever, severe joint pain, pain behind the eyes, skin rash' }

  it('answers valid, labelled top-k distributions that move towards the other debater', () => {
    const a1 = turnReply.parse(json(debaterPrompt({ seat: 'A', round: 1, delta: 0.9, config, case: kase, turns: [] })))
    expect(a1.predictions.length).toBeLessThanOrEqual(3)
    expect(a1.predictions[0]?.label).toBe('Dengue Fever')
    expect(a1.predictions.reduce((s, p) => s + p.probability, 0)).toBeCloseTo(1, 9)
    expect(a1.predictions[0]?.justification).toContain(DEMO_LABEL)
    const t = (sender: 'A' | 'B', round: number, r: typeof a1): TurnMessage => ({
      seq: 0,
      kind: 'turn',
      sender,
      round,
      ...r,
    })
    const b1 = turnReply.parse(
      json(debaterPrompt({ seat: 'B', round: 1, delta: 0.9, config, case: kase, turns: [t('A', 1, a1)] })),
    )
    const a2 = turnReply.parse(
      json(
        debaterPrompt({ seat: 'A', round: 2, delta: 0.9, config, case: kase, turns: [t('A', 1, a1), t('B', 1, b1)] }),
      ),
    )
    // A's round 2 is closer to B's round 1 than A's round 1 was.
    const tv = (x: typeof a1, y: typeof a1) => {
      const al = align(x.predictions, y.predictions)
      return al.p.reduce((s, p, i) => s + Math.abs(p - (al.q[i] as number)), 0) / 2
    }
    expect(tv(a2, b1)).toBeLessThan(tv(a1, b1))
  })

  it('answers CRIT and the report in the shapes the runner reads', () => {
    const turn: TurnMessage = {
      seq: 1,
      kind: 'turn',
      sender: 'A',
      round: 1,
      predictions: [{ label: 'Dengue Fever', probability: 1 }],
      arguments: ['retro-orbital pain is typical'],
      counterArguments: [],
    }
    const crit = critReply.parse(json(critPrompt({ target: 'A', case: kase, turn })))
    expect(crit.reasons).toHaveLength(1)
    const report = reportReply.parse(json(reportPrompt({ case: kase, turns: [turn], final: turn.predictions })))
    expect(report.conclusion).toContain('Dengue Fever')
    expect(report.conclusion).toContain(DEMO_LABEL)
  })
})
