import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { describe, expect, it } from 'vitest'
import type { TurnFormProps } from '@/components/protocols/types'
import { RehacTurnForm } from '@/protocols/rehac/ui/turn-form'

/**
 * The annotator's forms as the browser first gets them (rendered to markup): the accessible names the
 * Playwright spec finds the controls by, each label tied to its control by for/id, the Action select
 * named "Action" alone (not its options), and the help line of shortcuts.
 */
function render(kind: 'qa' | 'sql', due: 'decide' | 'step') {
  const session = {
    id: 's1',
    protocol: 'rehac',
    ask: { j: 2, seat: due === 'decide' ? 'decider' : 'human', kind: due },
    draft: null,
    view: {
      task: { kind },
      threshold: 7,
      due: { kind: due, seat: due === 'decide' ? 'decider' : 'human', t: 1 },
      actions: kind === 'sql' ? ['sql', 'submit'] : ['search', 'lookup', 'finish'],
    },
  } as unknown as TurnFormProps['session']
  return renderToStaticMarkup(createElement(RehacTurnForm, { session } as TurnFormProps))
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&#x27;|&rsquo;/g, '’')
    .replace(/\s+/g, ' ')
    .trim()

/** label text → the tag of the control its `for` names. */
function labelled(html: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of html.matchAll(/<label\b[^>]*\sfor="([^"]+)"[^>]*>(.*?)<\/label>/gs)) {
    const control = html.match(new RegExp(`<(?:input|select|textarea)\\b[^>]*\\sid="${m[1]}"[^>]*>`))?.[0]
    out.set(text(m[2] as string), control ?? '')
  }
  return out
}
const buttons = (html: string) =>
  [...html.matchAll(/<button\b[^>]*>(.*?)<\/button>/gs)].map((m) => text(m[1] as string))

describe('the annotator’s step form', () => {
  it('QA: Thought 1, Action and Entity are labelled controls; Run, Show a suggestion and Send step; the keys', () => {
    const html = render('qa', 'step')
    const l = labelled(html)
    expect(l.get('Thought 1')).toMatch(/^<textarea\b[^>]*name="thought"/)
    expect(l.get('Action')).toMatch(/^<select\b[^>]*name="actionType"/)
    expect(l.get('Entity')).toMatch(/^<input\b[^>]*name="actionArg"/)
    // Every label names a control, and the select's label is not wrapped around its options.
    for (const [name, control] of l) expect(control, name).not.toBe('')
    expect(html).not.toMatch(/<label[^>]*>[^<]*<select/)
    expect(buttons(html)).toEqual(['Run', 'Show a suggestion', 'Send step'])
    expect(html).toContain('name="suggestion"')
    expect(html).toContain('name="ms"')
    expect(text(html)).toContain('Alt+S Search · Alt+L Lookup · Alt+F Finish · Alt+R Run · Alt+G Show a suggestion')
    // Empty state: what Run does, before it is used.
    expect(text(html)).toContain('Run shows the Observation this action would get, without sending the step.')
  })

  it('SQL: no Thought, the statement box labelled "SQL statement", the SQL keys', () => {
    const html = render('sql', 'step')
    const l = labelled(html)
    expect([...l.keys()]).toEqual(['Action', 'SQL statement'])
    expect(l.get('SQL statement')).toMatch(/^<textarea\b[^>]*name="actionArg"/)
    expect(text(html)).toContain('Alt+Q SQL statement · Alt+E submit')
  })

  it('decide: the agent or the human as labelled radios, Decide, and the A / H keys', () => {
    const html = render('qa', 'decide')
    const l = labelled(html)
    expect(l.get('The agent')).toMatch(/value="agent"[^>]*checked|checked[^>]*value="agent"/)
    expect(l.get('The human')).toMatch(/value="human"/)
    expect(buttons(html)).toEqual(['Decide'])
    expect(text(html)).toContain('A the agent · H the human · Ctrl+Enter Decide')
  })
})
