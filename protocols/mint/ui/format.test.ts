import { describe, expect, it } from 'vitest'
import { commandFor, replyParts } from '@/protocols/mint/ui/format'

describe('a reply split for the pages', () => {
  it('keeps thought, code, proposal and other text apart, in order, as text', () => {
    expect(
      replyParts('Assistant:\n<thought> add </thought>\n<execute>print(1 + 1)</execute> then <solution> 2 </solution>'),
    ).toEqual([
      { kind: 'text', text: 'Assistant:' },
      { kind: 'thought', text: 'add' },
      { kind: 'code', text: 'print(1 + 1)' },
      { kind: 'text', text: 'then' },
      { kind: 'proposal', text: '2' },
    ])
    // Markup the model wrote stays text (React escapes it): nothing is parsed as HTML here.
    expect(replyParts('<img src=x onerror=alert(1)>')).toEqual([{ kind: 'text', text: '<img src=x onerror=alert(1)>' }])
    expect(replyParts('<thought> unclosed')).toEqual([{ kind: 'text', text: '<thought> unclosed' }])
  })
})

describe('the feedback keyboard', () => {
  const key = (k: string, mods: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean }> = {}) => ({
    key: k,
    ctrlKey: false,
    metaKey: false,
    altKey: false,
    ...mods,
  })
  it('Ctrl/Cmd+Enter sends anywhere; g and b choose GOOD / BAD only in binary mode and outside a field', () => {
    expect(commandFor(key('Enter', { ctrlKey: true }), { binary: false, inField: true })).toEqual({ kind: 'send' })
    expect(commandFor(key('Enter', { metaKey: true }), { binary: true, inField: false })).toEqual({ kind: 'send' })
    expect(commandFor(key('Enter'), { binary: false, inField: true })).toBeNull()
    expect(commandFor(key('g'), { binary: true, inField: false })).toEqual({ kind: 'verdict', value: 'GOOD' })
    expect(commandFor(key('B'), { binary: true, inField: false })).toEqual({ kind: 'verdict', value: 'BAD' })
    expect(commandFor(key('g'), { binary: true, inField: true })).toBeNull()
    expect(commandFor(key('g'), { binary: false, inField: false })).toBeNull()
    expect(commandFor(key('b', { ctrlKey: true }), { binary: true, inField: false })).toBeNull()
  })
})
