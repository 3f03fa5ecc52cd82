import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { canonicalSet, canonicalSmiles, depictSvg, reactantsMatch, sanitizeSvg, smilesProblem } from './chem'
import { parseDataset } from './datasets'
import { drugRows } from '../../protocols/pxp/core/datasets'
import { labelsMatch, parseReply } from './reply'
import { describeShared, PXP_DATA } from '../../tests/support/shared'

describe('RDKit canonicalisation and the DRUG MATCH', () => {
  it('canonicalises equivalent SMILES to one string and rejects invalid ones', async () => {
    expect(await canonicalSmiles('OCC')).toBe('CCO')
    expect(await canonicalSmiles('C(O)C')).toBe('CCO')
    expect(await canonicalSmiles('C1CC')).toBeNull()
    expect(await canonicalSmiles('')).toBeNull()
    expect(await canonicalSet('OCC.CC(=O)O.xyz')).toEqual({ set: new Set(['CCO', 'CC(=O)O']), invalid: ['xyz'] })
  })

  it('exact mode needs the same reactant set in any order and spelling; overlap mode any shared reactant', async () => {
    expect(await reactantsMatch('CC(=O)O.OCC', 'C(O)C.OC(C)=O')).toBe(true)
    expect(await reactantsMatch('CC(=O)O.OCC', 'CCO')).toBe(false)
    expect(await reactantsMatch('CC(=O)O.OCC', 'CCO', 'overlap')).toBe(true)
    expect(await reactantsMatch('CCO', 'CCN', 'overlap')).toBe(false)
    expect(await reactantsMatch('CCO', 'not a smiles', 'overlap')).toBe(false)
  })
})

describeShared(
  'the released DRUG file',
  () => {
    it('every reactant and product SMILES in the released DRUG file parses, and each row matches itself', async () => {
      const file = path.join(PXP_DATA, 'retro.csv')
      const { rows } = parseDataset(drugRows, 'retro.csv', readFileSync(file, 'utf8'))
      expect(rows).toHaveLength(95)
      for (const r of rows) {
        // Far within what Parley hands to RDKit (SMILES_LIMITS).
        expect(smilesProblem(r.prediction)).toBeNull()
        expect(smilesProblem(r.input.smiles as string)).toBeNull()
        expect((await canonicalSet(r.prediction)).invalid).toEqual([])
        expect(await canonicalSmiles(r.input.smiles as string)).not.toBeNull()
        expect(await reactantsMatch(r.prediction, r.prediction.split('.').reverse().join('.'))).toBe(true)
      }
      // Different rows have different reactant sets (exact mode tells them apart).
      expect(await reactantsMatch(rows[0]?.prediction ?? '', rows[1]?.prediction ?? '')).toBe(false)
    })
  },
  'datasets/pxp-interact',
)

describe('reply parsing and the RAD MATCH', () => {
  it('reads the paper format, with emphasis, restatements and multi-line explanations', () => {
    expect(parseReply('*Prediction: Pneumothorax*\n*Explanation: Visible pleural line; no lung markings.*')).toEqual({
      ok: true,
      value: { prediction: 'Pneumothorax', explanation: 'Visible pleural line; no lung markings.' },
    })
    expect(
      parseReply(
        'Sure.\nPrediction: Atelectasis\nPrediction: Pneumonia\nExplanation: Consolidation\nin the right lower lobe.',
      ),
    ).toEqual({
      ok: true,
      value: { prediction: 'Pneumonia', explanation: 'Consolidation\nin the right lower lobe.' },
    })
    expect(
      parseReply('Prediction: CCO.CC(=O)O\nPathway: Fischer esterification', {
        explanation: ['Pathway', 'Explanation'],
      }),
    ).toEqual({
      ok: true,
      value: { prediction: 'CCO.CC(=O)O', explanation: 'Fischer esterification' },
    })
  })

  it('says what is missing', () => {
    expect(parseReply('I cannot tell.')).toEqual({
      ok: false,
      error: 'The reply has neither a "Prediction:" nor an "Explanation:" line.',
    })
    expect(parseReply('Explanation: only this')).toEqual({ ok: false, error: 'The reply has no "Prediction:" value.' })
    expect(parseReply('Prediction: Pneumonia')).toEqual({ ok: false, error: 'The reply has no "Explanation:" value.' })
  })

  it('labels match case- and punctuation-insensitively, and by containment', () => {
    expect(labelsMatch('Pleural Effusion', 'pleural effusion.')).toBe(true)
    expect(labelsMatch('effusion', 'Pleural Effusion')).toBe(true)
    expect(labelsMatch('Pneumonia', 'Pneumothorax')).toBe(false)
    expect(labelsMatch('', 'Pneumonia')).toBe(false)
  })
})

describe('molecule depictions', () => {
  it('draws a valid SMILES as SVG with bonds, and refuses an unparsable one', async () => {
    const svg = await depictSvg('CCOC(C)=O')
    expect(svg).toMatch(/^\s*<svg[\s\S]*<\/svg>\s*$/)
    expect(svg).toContain('<path')
    expect(await depictSvg('C1CC(')).toBeNull()
    expect(await depictSvg('  ')).toBeNull()
  })

  it('strips scripts, event handlers and external references from an SVG', () => {
    const bad =
      '<?xml version="1.0"?><svg onload="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)"><path d="M0 0" onclick=\'x()\'/></a><foreignObject><div>x</div></foreignObject></svg>'
    const clean = sanitizeSvg(bad)
    expect(clean).not.toMatch(/script|onload|onclick|javascript|foreignObject|<\?xml/i)
    expect(clean).toContain('<path d="M0 0"')
  })
})
