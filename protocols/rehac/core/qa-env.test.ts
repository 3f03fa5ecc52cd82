import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  buildCorpus,
  EPISODE_OVER,
  NO_MORE_RESULTS,
  NO_PAGE_OPEN,
  parsePagesJsonl,
  parseQaAction,
  parseQuestionsJsonl,
  pythonRepr,
  QA_INITIAL_STATE,
  QA_LIMITS,
  QaDataError,
  qaStateAfter,
  replayQa,
  similarTitles,
  splitSentences,
  stepQa,
} from './qa-env'

const DEMO = path.resolve(import.meta.dirname, '../demo')
const pages = parsePagesJsonl(readFileSync(path.join(DEMO, 'corpus.jsonl'), 'utf8'))
const questions = parseQuestionsJsonl(readFileSync(path.join(DEMO, 'questions.jsonl'), 'utf8'))
const corpus = buildCorpus(pages)
const observations = (actions: string[]) => replayQa(corpus, actions).map((s) => s.observation)

describe('the demo data', () => {
  it('has 30 pages and 12 questions, 4 of them yes/no', () => {
    expect(pages).toHaveLength(30)
    expect(questions).toHaveLength(12)
    expect(questions.filter((q) => q.type === 'yesno').map((q) => q.answer)).toEqual(['false', 'false', 'true', 'true'])
  })
})

describe('Search', () => {
  it('opens a page by its title (any case, underscores, extra spaces) and shows its first paragraph', () => {
    const [hit] = replayQa(corpus, ['search[  calder_LIGHTHOUSE ]'])
    expect(hit?.observation).toBe(
      'The Calder Lighthouse is a granite lighthouse on a rock at the mouth of the Ostrin River, off the northern quay of Port Calder. It was designed by the architect Halvard Brenn and completed in 1868.',
    )
    expect(hit?.state).toEqual({ page: 'Calder Lighthouse', lookup: null, finished: null })
  })

  it('shows the first N sentences of the page instead, as ReAct did, with searchSentences', () => {
    const [hit] = replayQa(corpus, ['Search[Mount Hesketh]'], { searchSentences: 3 })
    expect(hit?.observation).toBe(
      'Mount Hesketh is the highest mountain of Velmora, rising above Greyfen Moor in the north of the island. Its granite was quarried for the harbour walls of Port Calder. The summit stands 1,412 metres above sea level.',
    )
  })

  it('answers a miss with the similar titles, as ReAct printed them', () => {
    expect(observations(['Search[Lantern Keeper]'])).toEqual([
      "Could not find Lantern Keeper. Similar: ['The Lantern Keeper (novel)', 'The Lantern Keeper (film)'].",
    ])
    // Most shared words first, then the shorter title, then corpus order; five at most.
    expect(similarTitles(corpus, 'Port Calder Velmoran')).toEqual([
      'Port Calder',
      'Port Calder Rovers',
      'University of Port Calder',
      'Calder Lighthouse',
      'Velmoran Railway',
    ])
    expect(observations(['Search[Zanzibar]'])).toEqual(['Could not find Zanzibar. Similar: [].'])
    // Stopwords alone make nothing similar.
    expect(similarTitles(corpus, 'the of and')).toEqual([])
  })

  it('leaves the open page as it was after a miss (as ReAct)', () => {
    const steps = replayQa(corpus, ['Search[Mount Hesketh]', 'Search[Hesketh]', 'Lookup[metres]'])
    expect(steps[1]?.state.page).toBe('Mount Hesketh')
    expect(steps[2]?.observation).toBe('(Result 1 / 1) The summit stands 1,412 metres above sea level.')
  })
})

describe('Lookup', () => {
  it('pages through the sentences with the keyword, then says there are no more', () => {
    expect(
      observations(['Search[Mount Hesketh]', 'Lookup[Calder]', 'Lookup[calder]', 'Lookup[Calder]', 'Lookup[Calder]']),
    ).toEqual([
      expect.stringMatching(/^Mount Hesketh is/),
      '(Result 1 / 2) Its granite was quarried for the harbour walls of Port Calder.',
      '(Result 2 / 2) On clear days the Calder Lighthouse can be seen from it.',
      NO_MORE_RESULTS,
      NO_MORE_RESULTS,
    ])
    expect(NO_MORE_RESULTS).toBe('No more results.')
  })

  it('starts over on another keyword or a new Search', () => {
    expect(
      observations([
        'Search[Mount Hesketh]',
        'Lookup[Calder]',
        'Lookup[wildcat]',
        'Lookup[Calder]',
        'Search[Mount Hesketh]',
        'Lookup[Calder]',
      ]).slice(1),
    ).toEqual([
      '(Result 1 / 2) Its granite was quarried for the harbour walls of Port Calder.',
      '(Result 1 / 1) Its rocky southern slopes are the main refuge of the Velmoran wildcat.',
      '(Result 1 / 2) Its granite was quarried for the harbour walls of Port Calder.',
      expect.stringMatching(/^Mount Hesketh is/),
      '(Result 1 / 2) Its granite was quarried for the harbour walls of Port Calder.',
    ])
  })

  it('says no page is open before a successful Search', () => {
    expect(observations(['Lookup[river]', 'Search[Nowhere]', 'Lookup[river]'])).toEqual([
      NO_PAGE_OPEN,
      'Could not find Nowhere. Similar: [].',
      NO_PAGE_OPEN,
    ])
    expect(NO_PAGE_OPEN).toBe('No page is open: use Search[entity] first.')
  })

  it('answers No more results. for a keyword the page lacks', () => {
    expect(observations(['Search[Kestrel Cup]', 'Lookup[basketball]'])[1]).toBe(NO_MORE_RESULTS)
  })
})

describe('actions', () => {
  it('refuses anything but Search, Lookup and Finish with ReAct’s message', () => {
    expect(observations(['Think[I should search]'])).toEqual(['Invalid action: think[I should search]'])
    // The released StrategyQA data shows this exact line for a missing bracket.
    expect(observations(['Search[Effects'])).toEqual(['Invalid action: search[Effects'])
    expect(observations(['Search[]', 'Lookup[  ]', 'Search Velmora'])).toEqual([
      'Invalid action: search[]',
      'Invalid action: lookup[  ]',
      'Invalid action: search Velmora',
    ])
    expect(parseQaAction('  LOOKUP[ metres ] ')).toEqual({ kind: 'lookup', arg: 'metres' })
    expect(parseQaAction('Finish[]')).toEqual({ kind: 'finish', arg: '' })
  })

  it('refuses an action longer than the bound, showing only its start', () => {
    const long = `Search[${'x'.repeat(QA_LIMITS.maxActionChars)}]`
    const [step] = replayQa(corpus, [long])
    expect(step?.action.kind).toBe('invalid')
    expect(step?.observation).toBe(
      `Invalid action: search[${'x'.repeat(193)}… (longer than ${QA_LIMITS.maxActionChars} characters)`,
    )
  })

  it('ends the episode on Finish, with the reward when one is given, and takes no action after it', () => {
    const reward = (a: string) => (a.toLowerCase() === '1874' ? 1 : 0)
    const steps = replayQa(corpus, ['Search[Ilsa Varkonen]', 'Finish[ 1874 ]', 'Search[Velmora]'], { reward })
    expect(steps.map((s) => [s.observation.slice(0, 30), s.done])).toEqual([
      ['Ilsa Varkonen (1874–1951) was ', false],
      ['Episode finished, reward = 1', true],
      [EPISODE_OVER.slice(0, 30), true],
    ])
    expect(steps[2]?.observation).toBe('The episode has finished; no more actions are taken.')
    expect(steps[2]?.state).toEqual({ page: 'Ilsa Varkonen', lookup: null, finished: { answer: '1874' } })
    expect(replayQa(corpus, ['Finish[false]'])[0]?.observation).toBe('Episode finished.')
  })
})

describe('replay', () => {
  const actions = [
    'Lookup[x]',
    'Search[Velmoran wildcat]',
    'Lookup[slopes]',
    'Lookup[slopes]',
    'Search[Hesketh]',
    'Lookup[moor]',
    'Search[Mount Hesketh]',
    'Lookup[metres]',
    'bogus',
    'Finish[1,412 metres]',
  ]

  it('gives the same observations and states every time, and the same as stepping one action at a time', () => {
    const a = replayQa(corpus, actions)
    const b = replayQa(buildCorpus(parsePagesJsonl(readFileSync(path.join(DEMO, 'corpus.jsonl'), 'utf8'))), actions)
    expect(JSON.stringify(b)).toBe(JSON.stringify(a))
    // Each prefix's state, through JSON (as stored), steps on to the next observation.
    for (let i = 0; i < actions.length; i++) {
      const stored = JSON.parse(JSON.stringify(qaStateAfter(corpus, actions.slice(0, i))))
      expect(stepQa(corpus, stored, actions[i] as string).observation).toBe(a[i]?.observation)
    }
    expect(a[3]?.observation).toBe(NO_MORE_RESULTS)
    expect(a[5]?.observation).toBe(
      '(Result 1 / 2) The wildcat is most often seen on the rocky slopes of Mount Hesketh, though it ranges across Greyfen Moor.',
    )
    expect(qaStateAfter(corpus, [])).toBe(QA_INITIAL_STATE)
  })
})

/**
 * For each demo question, a scripted action sequence; the answer (for short answers) and the facts the
 * question turns on (for yes/no) must appear in what the environment shows along the way.
 */
const SCRIPTS: Record<string, { actions: string[]; evidence: string[] }> = {
  vq01: {
    actions: ['Search[Ostrin River]', 'Search[Calder Lighthouse]'],
    evidence: ['At its mouth stands the Calder Lighthouse'],
  },
  vq02: { actions: ['Search[The Tidewater Suite]', 'Search[Ilsa Varkonen]'], evidence: ['composer Ilsa Varkonen'] },
  vq03: {
    actions: ['Search[The Lantern Keeper (novel)]', 'Search[Nessa Quill]', 'Search[Dunmere]'],
    evidence: ['born in Dunmere', 'on the Ostrin River'],
  },
  vq04: { actions: ['Search[Nessa Quill]', 'Search[The Lantern Keeper (film)]'], evidence: ['The Lantern Keeper'] },
  vq05: {
    actions: ['Search[Comet Tollis]', 'Search[Maren Tollis]'],
    evidence: ['taught at the University of Port Calder'],
  },
  vq06: { actions: ['Search[Merrow Bridge]', 'Search[Ostrin River]'], evidence: ['across the Ostrin River'] },
  vq07: {
    actions: ['Search[Velmoran wildcat]', 'Lookup[slopes]', 'Search[Mount Hesketh]', 'Lookup[metres]'],
    evidence: ['most often seen on the rocky slopes of Mount Hesketh'],
  },
  vq08: {
    actions: ['Search[Velmoran Railway]', 'Lookup[Dunmere]'],
    evidence: ['(Result 1 / 1) The line reached Dunmere'],
  },
  vq09: {
    actions: ['Search[Ilsa Varkonen]', 'Search[Calder Lighthouse]'],
    evidence: ['(1874–1951)', 'completed in 1868'],
  },
  vq10: {
    actions: ['Search[Merrow Bridge]', 'Lookup[clearance]'],
    evidence: ['clearance of 32 metres above high water'],
  },
  vq11: {
    actions: ['Search[Orrin Vale]', 'Lookup[university]', 'Search[Maren Tollis]'],
    evidence: ['Vale studied history at the University of Port Calder', 'taught at the University of Port Calder'],
  },
  vq12: {
    actions: ['Search[Kestrel Cup]', 'Search[Velmoran Football League]'],
    evidence: ['first held in 1891', 'founded in 1905'],
  },
}

describe('every demo question is answerable with Search and Lookup', () => {
  it('has a script for each question', () => {
    expect(Object.keys(SCRIPTS).sort()).toEqual(questions.map((q) => q.id).sort())
  })
  for (const q of questions)
    it(`${q.id}: ${q.question}`, () => {
      const script = SCRIPTS[q.id]
      if (!script) throw new Error(`no script for ${q.id}`)
      const steps = replayQa(corpus, [...script.actions, `Finish[${q.answer}]`])
      const seen = steps.map((s) => s.observation).join('\n')
      // No step of the script failed.
      expect(seen).not.toMatch(/Could not find|No more results|No page is open|Invalid action/)
      if (q.type === 'qa') expect(seen).toContain(q.answer)
      for (const e of script.evidence) expect(seen).toContain(e)
      expect(steps.at(-1)?.done).toBe(true)
      expect(steps.at(-1)?.state.finished).toEqual({ answer: q.answer })
    })
})

describe('sentences and text', () => {
  it('splits at . ! ? before a capital, digit or opening quote, and nowhere else', () => {
    expect(splitSentences('It rained. Then it stopped! Did it? 1903 was dry. "Yes," she said.')).toEqual([
      'It rained.',
      'Then it stopped!',
      'Did it?',
      '1903 was dry.',
      '"Yes," she said.',
    ])
    expect(splitSentences('Trees, e.g. birch and alder. They grow (mostly.) Here 3.5 km away.')).toEqual([
      'Trees, e.g. birch and alder.',
      'They grow (mostly.)',
      'Here 3.5 km away.',
    ])
  })

  it('writes titles as Python’s repr does', () => {
    expect(pythonRepr('Port Calder')).toBe("'Port Calder'")
    expect(pythonRepr("Keeper's House")).toBe(`"Keeper's House"`)
    expect(pythonRepr(`It's "x"`)).toBe(`'It\\'s "x"'`)
  })
})

describe('the files', () => {
  it('refuses two titles that are the same page', () => {
    expect(() =>
      buildCorpus([
        { title: 'Grand Canal', paragraphs: ['A canal.'] },
        { title: 'grand_canal', paragraphs: ['The same.'] },
      ]),
    ).toThrow('the titles "Grand Canal" and "grand_canal" are the same page')
  })

  it('names the line that does not parse', () => {
    expect(() => parsePagesJsonl('{"title":"A","paragraphs":["x"]}\n\n{"title":"B"}')).toThrow(/^line 3: paragraphs: /)
    expect(() => parsePagesJsonl('{"title":"A",')).toThrow(QaDataError)
    expect(() => parseQuestionsJsonl('{"id":"a","question":"Is it?","answer":"yes","type":"yesno"}')).toThrow(
      'line 1: answer: a yesno answer is "true" or "false"',
    )
    expect(() =>
      parseQuestionsJsonl('{"id":"a","question":"Q?","answer":"x"}\n{"id":"a","question":"Q2?","answer":"y"}'),
    ).toThrow('question id "a" appears twice')
    expect(parseQuestionsJsonl('{"id":"a","question":"Q?","answer":"x"}')[0]?.type).toBe('qa')
  })

  it('refuses a paragraph past the bound', () => {
    const long = JSON.stringify({ title: 'A', paragraphs: ['x'.repeat(QA_LIMITS.maxParagraphChars + 1)] })
    expect(() => parsePagesJsonl(long)).toThrow(/^line 1: paragraphs\.0: /)
  })
})
