import { describe, expect, it } from 'vitest'
import { formatJsonlLine, LineError, parseJsonlLine } from './jsonl'

const line = (o: unknown) => JSON.stringify(o)

describe('parseJsonlLine', () => {
  it('reads a message, with repetition 1 by default, tags and senders in any case, numeric sessions', () => {
    expect(parseJsonlLine(line({ session: 's', j: 1, sender: 'm', tag: 'init' }), 1)).toEqual({
      repetition: 1,
      session: 's',
      j: 1,
      sender: 'm',
      tag: 'INIT',
    })
    expect(parseJsonlLine(line({ repetition: 3, session: 42, j: 2, sender: 'H', tag: 'Revise', x: 1 }), 9)).toEqual({
      repetition: 3,
      session: '42',
      j: 2,
      sender: 'h',
      tag: 'REVISE',
    })
  })

  it('skips blank lines', () => {
    expect(parseJsonlLine('', 4)).toBeNull()
    expect(parseJsonlLine('   \t', 4)).toBeNull()
  })

  it.each([
    ['{"session": "s", "j": 1', /line 7: not valid JSON/],
    ['[1, 2]', /line 7: expected a JSON object/],
    ['"INIT"', /line 7: expected a JSON object/],
    [line({ j: 1, sender: 'm', tag: 'INIT' }), /line 7: session/],
    [line({ session: 's', j: 0, sender: 'm', tag: 'INIT' }), /line 7: j/],
    [line({ session: 's', j: 1.5, sender: 'm', tag: 'INIT' }), /line 7: j/],
    [line({ session: 's', j: 1, sender: 'x', tag: 'INIT' }), /line 7: sender/],
    [line({ session: 's', j: 2, sender: 'h', tag: 'MAYBE' }), /line 7: tag/],
    [line({ session: 's', j: 1, sender: 'h', tag: 'INIT' }), /line 7: sender: message 1 is the machine's/],
    [line({ session: 's', j: 4, sender: 'm', tag: 'REFUTE' }), /line 7: sender: message 4 is the human's/],
    [line({ session: 's', j: 1, sender: 'm', tag: 'RATIFY' }), /line 7: tag: message 1 is tagged INIT/],
    [line({ session: 's', j: 3, sender: 'm', tag: 'INIT' }), /line 7: tag: INIT is the tag of message 1 only/],
    [line({ repetition: -1, session: 's', j: 1, sender: 'm', tag: 'INIT' }), /line 7: repetition/],
    [line({ repetition: '1', session: 's', j: 1, sender: 'm', tag: 'INIT' }), /line 7: repetition/],
    [line({ session: '', j: 1, sender: 'm', tag: 'INIT' }), /line 7: session/],
  ])('refuses %s', (text, message) => {
    let error: unknown
    try {
      parseJsonlLine(text, 7)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(LineError)
    expect((error as LineError).line).toBe(7)
    expect((error as Error).message).toMatch(message)
  })
})

describe('formatJsonlLine', () => {
  it('writes the fields in a fixed order, extra fields after, and reads back', () => {
    const m = { repetition: 2, session: 'ab', j: 3, sender: 'm' as const, tag: 'REVISE' as const }
    const text = formatJsonlLine(m, { ailment: 'Pneumonia', tag: 'INIT' })
    expect(text).toBe('{"repetition":2,"session":"ab","j":3,"sender":"m","tag":"REVISE","ailment":"Pneumonia"}')
    expect(parseJsonlLine(text, 1)).toEqual(m)
  })
})
