import { describe, expect, it } from 'vitest'
import { buildRelevancePrompt, RELEVANCE_CALL_PARAMS, type RelevanceItem } from './prompt'
import { TABLE2_ORDER } from './variants'

/** Robust04 topic 303 (its fields as the TREC file wraps them) and a short page. */
const item: RelevanceItem = {
  query: 'Hubble Telescope Achievements',
  description: 'Identify positive\n  accomplishments of the Hubble telescope since it\nwas launched in 1991.',
  narrative:
    'Documents are relevant that show the Hubble telescope has produced new data, better quality data than previously available, data that has increased human knowledge of the universe, or data that has led to disproving previously existing theories or hypotheses. Documents limited to the shortcomings of the telescope would be irrelevant.',
  document: 'The Hubble Space Telescope has sent back\nimages of distant galaxies.',
}
const DESC = 'Identify positive accomplishments of the Hubble telescope since it was launched in 1991.'
const NARR =
  'Documents are relevant that show the Hubble telescope has produced new data, better quality data than previously available, data that has increased human knowledge of the universe, or data that has led to disproving previously existing theories or hypotheses. Documents limited to the shortcomings of the telescope would be irrelevant.'

// Written out by hand from Figure 1 (§B.3), line by line.
const EXPECTED_NONE = [
  'Given a query and a web page, you must provide a score on an integer scale of 0 to 2 with the following meanings:',
  '2 = highly relevant, very helpful for this query',
  '1 = relevant, may be partly helpful but might contain other irrelevant content',
  '0 = not relevant, should never be shown for this query',
  'Assume that you are writing a report on the subject of the topic. If you would use any of the information contained in the web page in such a report, mark it 1. If the web page is primarily about the topic, or contains vital information about the topic, mark it 2. Otherwise, mark it 0.',
  '',
  '# Query',
  'A person has typed Hubble Telescope Achievements into a search engine.',
  '',
  '# Result',
  'Consider the following web page.',
  '---BEGIN WEB PAGE CONTENT---',
  'The Hubble Space Telescope has sent back',
  'images of distant galaxies.',
  '---END WEB PAGE CONTENT---',
  '',
  '# Instructions',
  'Split this problem into steps:',
  'Consider the underlying intent of the search.',
  'Consider the aspects above and the relative importance of each, and decide on a final score (O).',
  'Produce a JSON array of scores without providing any reasoning. Example: [{"O": 1}, {"O": 2}, {"O": 0...',
  '',
  '# Results',
  '[{',
].join('\n')

const EXPECTED_ALL = [
  'You are a search quality rater evaluating the relevance of web pages.',
  'Given a query and a web page, you must provide a score on an integer scale of 0 to 2 with the following meanings:',
  '2 = highly relevant, very helpful for this query',
  '1 = relevant, may be partly helpful but might contain other irrelevant content',
  '0 = not relevant, should never be shown for this query',
  'Assume that you are writing a report on the subject of the topic. If you would use any of the information contained in the web page in such a report, mark it 1. If the web page is primarily about the topic, or contains vital information about the topic, mark it 2. Otherwise, mark it 0.',
  '',
  '# Query',
  'A person has typed Hubble Telescope Achievements into a search engine.',
  `They were looking for: ${DESC} ${NARR}`,
  '',
  '# Result',
  'Consider the following web page.',
  '---BEGIN WEB PAGE CONTENT---',
  'The Hubble Space Telescope has sent back',
  'images of distant galaxies.',
  '---END WEB PAGE CONTENT---',
  '',
  '# Instructions',
  'Split this problem into steps:',
  'Consider the underlying intent of the search.',
  'Measure how well the content matches a likely intent of the query (M).',
  'Measure how trustworthy the web page is (T).',
  'Consider the aspects above and the relative importance of each, and decide on a final score (O).',
  'We asked five search engine raters to evaluate the relevance of the web page for the query. Each rater used their own independent judgement.',
  'Produce a JSON array of scores without providing any reasoning. Example: [{"M": 2, "T": 1, "O": 1}, {"M": 1...',
  '',
  '# Results',
  '[{',
].join('\n')

const lines = (s: string) => s.split('\n')
/** The lines of `b` that are not in `a` (a multiset difference, enough for these prompts). */
function added(a: string, b: string): string[] {
  const left = [...lines(a)]
  const out: string[] = []
  for (const l of lines(b)) {
    const i = left.indexOf(l)
    if (i >= 0) left.splice(i, 1)
    else out.push(l)
  }
  return out
}

describe('the relevance prompt (Figure 1, verbatim)', () => {
  it('-----: the bare template, one user message ending with the open [{', () => {
    const p = buildRelevancePrompt('-----', item)
    expect(p.text).toBe(EXPECTED_NONE)
    expect(p.messages).toEqual([{ role: 'user', content: EXPECTED_NONE }])
    expect(p.chars).toBe(EXPECTED_NONE.length)
    expect(p.name).toBe('-----')
    expect(p.documentTruncated).toBe(false)
    expect(p.missing).toEqual([])
  })

  it('RDNAM: every optional line', () => {
    expect(buildRelevancePrompt('RDNAM', item).text).toBe(EXPECTED_ALL)
  })

  it('each feature toggles exactly its lines', () => {
    const base = buildRelevancePrompt('-----', item).text
    const diff = (code: string) => ({
      added: added(base, buildRelevancePrompt(code, item).text),
      removed: added(buildRelevancePrompt(code, item).text, base),
    })
    expect(diff('R----')).toEqual({
      added: ['You are a search quality rater evaluating the relevance of web pages.'],
      removed: [],
    })
    expect(diff('-D---')).toEqual({ added: [`They were looking for: ${DESC}`], removed: [] })
    expect(diff('--N--')).toEqual({ added: [`They were looking for: ${NARR}`], removed: [] })
    expect(diff('-DN--')).toEqual({ added: [`They were looking for: ${DESC} ${NARR}`], removed: [] })
    expect(diff('---A-')).toEqual({
      added: [
        'Measure how well the content matches a likely intent of the query (M).',
        'Measure how trustworthy the web page is (T).',
        'Produce a JSON array of scores without providing any reasoning. Example: [{"M": 2, "T": 1, "O": 1}, {"M": 1...',
      ],
      removed: [
        'Produce a JSON array of scores without providing any reasoning. Example: [{"O": 1}, {"O": 2}, {"O": 0...',
      ],
    })
    expect(diff('----M')).toEqual({
      added: [
        'We asked five search engine raters to evaluate the relevance of the web page for the query. Each rater used their own independent judgement.',
      ],
      removed: [],
    })
  })

  it('every one of the 32 variants ends with "# Results" and the open [{', () => {
    for (const code of TABLE2_ORDER) {
      const t = buildRelevancePrompt(code, item).text
      expect(t.endsWith('\n\n# Results\n[{')).toBe(true)
      expect(buildRelevancePrompt(code, item).name).toBe(code)
    }
  })

  it('leaves out a description or narrative the item lacks, and says so', () => {
    const p = buildRelevancePrompt('-DN--', { query: 'q', document: 'd', narrative: NARR })
    expect(p.text).toContain(`\nThey were looking for: ${NARR}\n`)
    expect(p.missing).toEqual(['description'])
    const none = buildRelevancePrompt('-DN--', { query: 'q', document: 'd', description: '  ' })
    expect(none.text).not.toContain('They were looking for')
    expect(none.missing).toEqual(['description', 'narrative'])
    // Fields the variant leaves off are not shown even when present.
    expect(buildRelevancePrompt('-----', item).text).not.toContain('Identify positive')
  })

  it('bounds the page text with a marker', () => {
    const long = 'x'.repeat(50)
    const p = buildRelevancePrompt('-----', { query: 'q', document: long }, undefined, { maxDocumentChars: 20 })
    expect(p.documentTruncated).toBe(true)
    expect(p.text).toContain(
      `---BEGIN WEB PAGE CONTENT---\n${'x'.repeat(20)}\n[... document truncated: first 20 of 50 characters shown]\n---END WEB PAGE CONTENT---`,
    )
    expect(p.text.endsWith('[{')).toBe(true)
    // Never inside a surrogate pair: the emoji is dropped whole.
    const emoji = buildRelevancePrompt('-----', { query: 'q', document: `abc😀def` }, undefined, {
      maxDocumentChars: 4,
    })
    expect(emoji.text).toContain(
      'BEGIN WEB PAGE CONTENT---\nabc\n[... document truncated: first 3 of 8 characters shown]',
    )
    expect(
      buildRelevancePrompt('-----', { query: 'q', document: 'x'.repeat(20) }, undefined, { maxDocumentChars: 20 })
        .documentTruncated,
    ).toBe(false)
  })

  it('puts a paraphrase of the variant in place of the two spans, and refuses one of another variant', () => {
    const p = buildRelevancePrompt('-DNA-', item, {
      parent: '-DNA-',
      id: 'p1',
      spans: {
        instructions:
          'Rate each web page for how well it matches the query.\n0 = no match, 1 = some match, 2 = great match',
        steps: 'Think about what the person wants. Give scores only.',
      },
    })
    expect(p.name).toBe('-DNA-/p1')
    const t = p.text
    expect(
      t.startsWith(
        'Rate each web page for how well it matches the query.\n0 = no match, 1 = some match, 2 = great match\n\n# Query\n',
      ),
    ).toBe(true)
    expect(t).toContain(
      '# Instructions\nThink about what the person wants. Give scores only. Example: [{"M": 2, "T": 1, "O": 1}, {"M": 1...\n\n# Results\n[{',
    )
    expect(t).not.toContain('Split this problem')
    expect(t).not.toContain('Measure how')
    expect(t).toContain(`They were looking for: ${DESC} ${NARR}`)
    // Only one span rewritten: the other is the original.
    const steps = buildRelevancePrompt('-DNA-', item, { parent: '-DNA-', id: '13', spans: { steps: 'Do it.' } }).text
    expect(steps).toContain('Otherwise, mark it 0.\n\n# Query')
    expect(() =>
      buildRelevancePrompt('--NA-', item, { parent: '-DNA-', id: 'p1', spans: { steps: 'Do it.' } }),
    ).toThrow(/rewrites the -DNA- prompt, not --NA-/)
  })

  it('refuses an invalid variant or item', () => {
    expect(() => buildRelevancePrompt('DNA', item)).toThrow(/not a prompt variant/)
    expect(() => buildRelevancePrompt('-----', { query: '  ', document: 'd' })).toThrow(/query: the query is not blank/)
  })

  it("carries the paper's decoding: temperature 0, top_p 1, frequency penalty 0.5, presence penalty 0, no stop", () => {
    expect(RELEVANCE_CALL_PARAMS).toEqual({ temperature: 0, top_p: 1, frequency_penalty: 0.5, presence_penalty: 0 })
    expect(RELEVANCE_CALL_PARAMS).not.toHaveProperty('stop')
  })
})
