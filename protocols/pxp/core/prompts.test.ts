import { describe, expect, it } from 'vitest'
import { assemblePrompt, contextTurn, formatAnswer, queryTurn, systemPrompt, tagPhrase } from './prompts'
import { parseReply } from '../../../lib/tasks/reply'

describe('PXP prompts', () => {
  it('an answer formatted for a task parses back to the same (y, e)', () => {
    expect(parseReply(formatAnswer('rad', { y: 'Pneumothorax', e: 'Pleural line, no markings.' }))).toEqual({
      ok: true,
      value: { prediction: 'Pneumothorax', explanation: 'Pleural line, no markings.' },
    })
    const drug = formatAnswer('drug', { y: 'CCO.CC(=O)O', e: 'Esterification.' })
    expect(parseReply(drug, { explanation: ['Pathway'] })).toEqual({
      ok: true,
      value: { prediction: 'CCO.CC(=O)O', explanation: 'Esterification.' },
    })
  })

  it('UPDATE_CONTEXT phrases each tag, from the machine as assistant and the tester as user', () => {
    expect(contextTurn('rad', { sender: 'm', tag: 'INIT', y: 'Pneumonia', e: 'Consolidation.' })).toEqual({
      role: 'assistant',
      content: 'This is my initial diagnosis of the X-ray:\nPrediction: Pneumonia\nExplanation: Consolidation.',
    })
    expect(contextTurn('rad', { sender: 'h', tag: 'REFUTE', y: 'Atelectasis', e: 'Volume loss.' })).toEqual({
      role: 'user',
      content:
        'I think you made a mistake. I refute your diagnosis. I think:\nPrediction: Atelectasis\nExplanation: Volume loss.',
    })
    expect(contextTurn('drug', { sender: 'h', tag: 'RATIFY', y: 'CCO', e: 'x' })).toEqual({
      role: 'user',
      content: 'Our opinions match. I agree with you. This conversation is ratified.',
    })
    expect(tagPhrase('rad', 'REVISE')).toBe('I think I made a mistake. I revise my diagnosis to:')
    expect(tagPhrase('drug', 'REJECT')).toBe(
      'I disagree with you and reject your opinion. I think the retrosynthesis pathway is:',
    )
  })

  it('ASSEMBLE_PROMPT: system first, then the context turns, then the query with the image for RAD', () => {
    const ctx = [contextTurn('rad', { sender: 'm', tag: 'INIT', y: 'Pneumonia', e: 'c' })]
    const q = queryTurn('rad', { imageUrl: 'data:image/png;base64,AAAA' })
    const p = assemblePrompt('rad', ctx, q)
    expect(p.map((t) => t.role)).toEqual(['system', 'assistant', 'user'])
    expect(p[0]?.content).toBe(`${systemPrompt('rad')}\n\nUse the following as context:`)
    expect(p[2]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: expect.stringContaining('Predict which one of Atelectasis') },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ],
    })
    expect(assemblePrompt('drug', [], queryTurn('drug', { smiles: 'CCOC(C)=O' }))).toEqual([
      { role: 'system', content: systemPrompt('drug') },
      { role: 'user', content: 'You have to predict a single step retrosynthetic pathway for CCOC(C)=O.' },
    ])
    expect(() => queryTurn('drug', {})).toThrow(/product SMILES/)
  })
})
