import { describe, expect, it } from 'vitest'
import { isField, readDraft, shortcutFor, shortcutHelp } from '@/protocols/rehac/ui/shortcuts'

const key = (k: string, mods: Partial<{ alt: boolean; ctrl: boolean; meta: boolean; code: string }> = {}) => ({
  key: k,
  code: mods.code ?? (/^[a-z]$/i.test(k) ? `Key${k.toUpperCase()}` : k),
  altKey: !!mods.alt,
  ctrlKey: !!mods.ctrl,
  metaKey: !!mods.meta,
})
const qa = { kind: 'step', task: 'qa' } as const
const sqlForm = { kind: 'step', task: 'sql' } as const
const decide = { kind: 'decide' } as const

describe('the annotator’s shortcuts', () => {
  it('Alt+S / L / F choose the QA actions, also while typing; on a Mac Alt+S types ß but the key is KeyS', () => {
    expect(shortcutFor(key('s', { alt: true }), true, qa)).toEqual({ kind: 'action', type: 'search' })
    expect(shortcutFor(key('ß', { alt: true, code: 'KeyS' }), true, qa)).toEqual({ kind: 'action', type: 'search' })
    expect(shortcutFor(key('l', { alt: true }), false, qa)).toEqual({ kind: 'action', type: 'lookup' })
    expect(shortcutFor(key('f', { alt: true }), false, qa)).toEqual({ kind: 'action', type: 'finish' })
    // Not an action of the other task kind.
    expect(shortcutFor(key('s', { alt: true }), false, sqlForm)).toBeNull()
    expect(shortcutFor(key('q', { alt: true }), false, sqlForm)).toEqual({ kind: 'action', type: 'sql' })
    expect(shortcutFor(key('e', { alt: true }), false, sqlForm)).toEqual({ kind: 'action', type: 'submit' })
  })

  it('Alt+R runs the preview, Alt+G asks the suggestion, Alt+U uses it; Ctrl/⌘+Enter sends from anywhere', () => {
    expect(shortcutFor(key('r', { alt: true }), true, qa)).toEqual({ kind: 'preview' })
    expect(shortcutFor(key('g', { alt: true }), true, sqlForm)).toEqual({ kind: 'suggest' })
    expect(shortcutFor(key('u', { alt: true }), false, qa)).toEqual({ kind: 'use' })
    expect(shortcutFor(key('Enter', { ctrl: true }), true, qa)).toEqual({ kind: 'send' })
    expect(shortcutFor(key('Enter', { meta: true }), true, decide)).toEqual({ kind: 'send' })
    expect(shortcutFor(key('Enter'), true, qa)).toBeNull()
    expect(shortcutFor(key('r', { alt: true, ctrl: true }), false, qa)).toBeNull()
  })

  it('A / H pick the solver only outside a field, never with a modifier, never on the step form', () => {
    expect(shortcutFor(key('a'), false, decide)).toEqual({ kind: 'solver', solver: 'agent' })
    expect(shortcutFor(key('H'), false, decide)).toEqual({ kind: 'solver', solver: 'human' })
    expect(shortcutFor(key('a'), true, decide)).toBeNull()
    expect(shortcutFor(key('a', { ctrl: true }), false, decide)).toBeNull()
    expect(shortcutFor(key('a'), false, qa)).toBeNull()
    expect(shortcutFor(key('s'), false, qa)).toBeNull()
    expect(shortcutFor(key('s', { alt: true }), false, decide)).toBeNull()
  })

  it('knows a field when it sees one', () => {
    for (const tagName of ['INPUT', 'TEXTAREA', 'SELECT']) expect(isField({ tagName })).toBe(true)
    expect(isField({ tagName: 'DIV', isContentEditable: true })).toBe(true)
    expect(isField({ tagName: 'BUTTON' })).toBe(false)
    expect(isField(null)).toBe(false)
  })

  it('the help line lists every shortcut the form answers to', () => {
    const help = shortcutHelp(qa).map(([k]) => k)
    expect(help).toEqual(['Alt+S', 'Alt+L', 'Alt+F', 'Alt+R', 'Alt+G', 'Alt+U', 'Ctrl+Enter'])
    for (const k of help) {
      const m = /^(Alt|Ctrl)\+(.+)$/.exec(k)
      const e = m?.[2] === 'Enter' ? key('Enter', { ctrl: true }) : key((m?.[2] ?? '').toLowerCase(), { alt: true })
      expect(shortcutFor(e, false, qa), k).not.toBeNull()
    }
    expect(shortcutHelp(decide).map(([k]) => k)).toEqual(['A', 'H', 'Ctrl+Enter'])
  })
})

describe('a step’s draft', () => {
  it('restores the server’s draft over this browser’s, this browser’s when the server has none', () => {
    const local = JSON.stringify({ thought: 'mine', type: 'lookup', arg: 'x', suggestion: null })
    expect(readDraft({ thought: 'server', type: 'search', arg: 'Calder', suggestion: 'copied' }, local)).toEqual({
      thought: 'server',
      type: 'search',
      arg: 'Calder',
      suggestion: 'copied',
    })
    expect(readDraft(null, local)).toEqual({ thought: 'mine', type: 'lookup', arg: 'x', suggestion: null })
  })

  it('reads what it can of a damaged draft, and nothing of one that is not a draft', () => {
    expect(readDraft({ thought: 3, type: 'drop', arg: 'kept' }, null)).toEqual({
      thought: '',
      type: null,
      arg: 'kept',
      suggestion: null,
    })
    expect(readDraft(null, '{not json')).toBeNull()
    expect(readDraft(null, null)).toBeNull()
    expect(readDraft('text', null)).toBeNull()
  })
})
