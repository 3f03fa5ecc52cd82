import { describe, expect, it } from 'vitest'
import { evinceConfig, type TurnMessage } from '@/protocols/evince/core'
import { argumentPool, debaterPrompt, partialPredictions } from './prompts'

describe('EVINCE prompts', () => {
  const config = evinceConfig.parse({ k: 3, labels: [] })
  const turn = (sender: 'A' | 'B', round: number, label: string): TurnMessage => ({
    seq: 1,
    kind: 'turn',
    sender,
    round,
    predictions: [{ label, probability: 1, justification: 'because' }],
    arguments: [`${sender} says ${label}`],
    counterArguments: [`${sender} doubts the other`],
  })

  it("A's opening sees only the case; B sees A's answer; later rounds see the pool and their own last answer", () => {
    const a1 = debaterPrompt({ seat: 'A', round: 1, delta: 0.9, config, case: { symptoms: 'fever' }, turns: [] })
    expect(a1[1]?.content).toMatch(/^Round 1\. Information set S \(the patient's symptoms\): fever/)
    expect(a1[1]?.content).not.toContain('latest distribution')
    // Δ and the Table 2 row for it are in the system prompt.
    expect(a1[0]?.content).toContain('Δ = 0.90')
    expect(a1[0]?.content).toContain('Highly confrontational')
    const b1 = debaterPrompt({
      seat: 'B',
      round: 1,
      delta: 0.9,
      config,
      case: { symptoms: 'fever' },
      turns: [turn('A', 1, 'Flu')],
    })
    expect(b1[1]?.content).toContain("Debater A's latest distribution (round 1):\n1. Flu: 100% (because)")
    const a3 = debaterPrompt({
      seat: 'A',
      round: 3,
      delta: 0.675,
      config,
      case: { symptoms: 'fever' },
      turns: [turn('A', 1, 'Flu'), turn('B', 1, 'Cold'), turn('A', 2, 'Flu'), turn('B', 2, 'Covid')],
    })
    expect(a3[1]?.content).toContain("Debater B's latest distribution (round 2):\n1. Covid: 100%")
    expect(a3[1]?.content).toContain('Your previous distribution (round 2):\n1. Flu: 100%')
    expect(a3[0]?.content).toContain('Still confrontational')
    expect(argumentPool([turn('A', 1, 'Flu')])).toEqual([
      'A (round 1): A says Flu',
      'A against the other (round 1): A doubts the other',
    ])
  })

  it('a closed label space is stated in the prompt', () => {
    const p = debaterPrompt({
      seat: 'A',
      round: 1,
      delta: 0.9,
      config: evinceConfig.parse({ labels: ['Flu', 'Cold'] }),
      case: { symptoms: 'fever' },
      turns: [],
    })
    expect(p[0]?.content).toContain('Choose labels only from this list: Flu; Cold.')
  })

  it('reads the complete predictions of a reply still streaming', () => {
    const text =
      '{"predictions": [{"label": "Dengue \\"classic\\"", "probability": 0.6, "justification": "eyes"}, {"label": "Zika", "probability": 0.3}, {"label": "Chik'
    expect(partialPredictions(text)).toEqual([
      { label: 'Dengue "classic"', probability: 0.6, justification: 'eyes' },
      { label: 'Zika', probability: 0.3 },
    ])
    expect(partialPredictions('{"predic')).toEqual([])
  })
})
