import { describe, expect, it } from 'vitest'
import { isField, labelShortcut, moveFocus, readLabelDraft } from '@/protocols/labelling/ui/shortcuts'

const key = (k: string, mods: Partial<{ altKey: boolean; ctrlKey: boolean; metaKey: boolean }> = {}) => ({
  key: k,
  altKey: false,
  ctrlKey: false,
  metaKey: false,
  ...mods,
})

describe('the label form’s keys', () => {
  it('digits pick the focused question’s option in order, only options it has', () => {
    expect(labelShortcut(key('1'), false, 3)).toEqual({ kind: 'pick', option: 0 })
    expect(labelShortcut(key('3'), false, 3)).toEqual({ kind: 'pick', option: 2 })
    expect(labelShortcut(key('4'), false, 3)).toBeNull()
    expect(labelShortcut(key('0'), false, 3)).toBeNull()
  })
  it('moves, sends, help and guidelines; nothing inside a field or with a modifier', () => {
    expect(labelShortcut(key('j'), false, 3)).toEqual({ kind: 'move', by: 1 })
    expect(labelShortcut(key('ArrowDown'), false, 3)).toEqual({ kind: 'move', by: 1 })
    expect(labelShortcut(key('k'), false, 3)).toEqual({ kind: 'move', by: -1 })
    expect(labelShortcut(key('ArrowUp'), false, 3)).toEqual({ kind: 'move', by: -1 })
    expect(labelShortcut(key('Enter'), false, 3)).toEqual({ kind: 'send' })
    expect(labelShortcut(key('?'), false, 3)).toEqual({ kind: 'help' })
    expect(labelShortcut(key('g'), false, 3)).toEqual({ kind: 'guidelines' })
    for (const k of ['1', 'j', 'k', 'Enter', '?', 'g', 'ArrowDown']) expect(labelShortcut(key(k), true, 3)).toBeNull()
    expect(labelShortcut(key('1', { ctrlKey: true }), false, 3)).toBeNull()
    expect(labelShortcut(key('g', { metaKey: true }), false, 3)).toBeNull()
    expect(labelShortcut(key('j', { altKey: true }), false, 3)).toBeNull()
    expect(isField({ tagName: 'TEXTAREA' })).toBe(true)
    expect(isField({ tagName: 'DIV', isContentEditable: true })).toBe(true)
    expect(isField({ tagName: 'BUTTON' })).toBe(false)
    expect(moveFocus(0, -1, 3)).toBe(0)
    expect(moveFocus(2, 1, 3)).toBe(2)
    expect(moveFocus(1, 1, 3)).toBe(2)
  })
  it('restores a draft: the server’s over this browser’s, a broken one dropped', () => {
    const local = JSON.stringify({ answers: { O: '1' }, rationale: 'local' })
    expect(readLabelDraft({ answers: { O: '2' } }, local)).toEqual({ answers: { O: '2' }, rationale: '', turns: {} })
    expect(readLabelDraft(null, local)).toEqual({ answers: { O: '1' }, rationale: 'local', turns: {} })
    expect(readLabelDraft(null, '{not json')).toBeNull()
    expect(readLabelDraft(null, null)).toBeNull()
  })
})
