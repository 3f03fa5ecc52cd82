import { describe, expect, it } from 'vitest'
import { evinceConfig } from '@/protocols/evince/core'
import { turnReply } from '@/protocols/evince/core/prompts'
import { debaterTurn } from './agents'

const config = evinceConfig.parse({ k: 2 })
const reply = (...ps: Array<[string, number]>) =>
  turnReply.parse({ predictions: ps.map(([label, probability]) => ({ label, probability })) })

describe("a debater's reply held to the protocol's rules", () => {
  it('the generic demo placeholder (one label at 200 %) and a sum of 0 are refused with the reason', () => {
    expect(debaterTurn(config, reply(['simulated label', 2]))).toEqual({
      ok: false,
      error: 'the probabilities sum to 200 %; they must sum to 100 % (within 5 %)',
    })
    expect(debaterTurn(config, reply(['Flu', 0]))).toMatchObject({ ok: false, error: /sum to 0 %/ })
  })

  it('cutting to the top k never launders a list that breaks the rules: the whole list is checked first', () => {
    // Each of the top two would rescale to a valid pair, but the list sums to 200 %.
    expect(debaterTurn(config, reply(['Flu', 0.9], ['Cold', 0.9], ['Covid', 0.2]))).toMatchObject({
      ok: false,
      error: /sum to 200 %/,
    })
    expect(debaterTurn(config, reply(['Flu', 0.5], ['flu (influenza)', 0.3], ['Covid', 0.2]))).toMatchObject({
      ok: false,
      error: /listed twice/,
    })
    const cut = debaterTurn(config, reply(['Covid', 0.2], ['Flu', 0.5], ['Cold', 0.3]))
    expect(cut).toMatchObject({ ok: true, warnings: [expect.stringMatching(/kept the top 2 \(80 %/)] })
    if (cut.ok)
      expect(cut.predictions.map((p) => [p.label, Number(p.probability.toFixed(12))])).toEqual([
        ['Flu', 0.625],
        ['Cold', 0.375],
      ])
  })

  it('percent is read as fractions only when the list sums to 100 (± the tolerance)', () => {
    expect(debaterTurn(config, reply(['Flu', 60], ['Cold', 40]))).toMatchObject({
      ok: true,
      predictions: [
        { label: 'Flu', probability: 0.6 },
        { label: 'Cold', probability: 0.4 },
      ],
      warnings: ['probabilities given in percent; read as fractions'],
    })
    expect(debaterTurn(config, reply(['Flu', 60], ['Cold', 60]))).toMatchObject({ ok: false, error: /sum to 12000 %/ })
    // One label "at 1" is a fraction (100 %), not 1 %.
    expect(debaterTurn(config, reply(['Flu', 1]))).toMatchObject({ ok: true, warnings: [] })
  })
})
