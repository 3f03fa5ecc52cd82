import { describe, expect, it } from 'vitest'
import {
  compareRanked,
  parseDocumentsJsonl,
  parseQrels,
  parseRuns,
  parseTopics,
  parseTopicsJsonl,
  parseTrecTopics,
} from './trec'

// Two topics as TREC's topic files write them (wrapped fields, blank lines).
const TREC_TOPICS = `<top>

<num> Number: 301

<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity, the activity, and, if possible, collaborating organizations
and the countries involved.

<narr> Narrative:
A relevant document must as a minimum identify the organization and the
type of illegal activity (e.g., Columbian cartel exporting cocaine).

</top>

<top>
<num> Number: 303
<title> Hubble Telescope Achievements
<desc> Description:
Identify positive accomplishments of the Hubble telescope since it
was launched in 1991.
<narr> Narrative:
Documents limited to the shortcomings of the telescope would be irrelevant.
</top>
`

describe('TREC topics, classic <top> format', () => {
  it('reads the fields, drops the prefixes and joins wrapped lines', () => {
    const r = parseTrecTopics(TREC_TOPICS)
    expect(r.errors).toEqual([])
    expect(r.value).toEqual([
      {
        id: '301',
        title: 'International Organized Crime',
        description:
          'Identify organizations that participate in international criminal activity, the activity, and, if possible, collaborating organizations and the countries involved.',
        narrative:
          'A relevant document must as a minimum identify the organization and the type of illegal activity (e.g., Columbian cartel exporting cocaine).',
      },
      {
        id: '303',
        title: 'Hubble Telescope Achievements',
        description: 'Identify positive accomplishments of the Hubble telescope since it was launched in 1991.',
        narrative: 'Documents limited to the shortcomings of the telescope would be irrelevant.',
      },
    ])
    expect(parseTopics(TREC_TOPICS).format).toBe('trec')
  })

  it('accepts closing field tags, a title-only topic and the skipped fields of old topics', () => {
    const r = parseTrecTopics(
      '<top><num>7</num><title>Topic: oil spills</title></top>\n<top>\n<num> Number: 8\n<dom> Domain: Law\n<title> Antitrust\n<con> Concepts: 1. x\n</top>',
    )
    expect(r.errors).toEqual([])
    expect(r.value).toEqual([
      { id: '7', title: 'oil spills' },
      { id: '8', title: 'Antitrust' },
    ])
  })

  it('reports problems with their line numbers', () => {
    const r = parseTrecTopics(
      [
        'stray text', // 1
        '<top>', // 2
        '<num> Number: 301', // 3
        '<title> A', // 4
        '<title> B', // 5
        '</top>', // 6
        '<top>', // 7
        '<title> no number', // 8
        '</top>', // 9
        '<top>', // 10
        '<num> Number: 301', // 11
        '<title> again', // 12
        '<bogus> x', // 13
        '</top>', // 14
        '</top>', // 15
        '<top>', // 16
        '<num> 9', // 17
      ].join('\n'),
    )
    expect(r.errors).toEqual([
      { line: 1, message: 'text outside a <top> … </top> topic' },
      { line: 5, message: 'a second <title> in the topic opened on line 2' },
      { line: 7, message: 'the topic has no <num> (e.g. "<num> Number: 301")' },
      { line: 13, message: 'unknown tag <bogus>' },
      { line: 10, message: 'topic 301 is already defined on line 2' },
      { line: 15, message: '</top> without a <top>' },
      { line: 16, message: 'the topic opened here is not closed with </top>' },
    ])
    expect(r.value.map((t) => t.id)).toEqual(['301'])
  })

  it('refuses a topic without a title, a number with whitespace, and a nested <top>', () => {
    expect(parseTrecTopics('<top>\n<num> Number: 5\n</top>').errors).toEqual([
      { line: 1, message: 'topic 5 has no <title>' },
    ])
    expect(parseTrecTopics('<top>\n<num> Number: 5 6\n<title> t\n</top>').errors).toEqual([
      { line: 2, message: 'the topic number "5 6" holds whitespace' },
    ])
    expect(parseTrecTopics('<top>\n<num> 1\n<title> a\n<top>\n<num> 2\n<title> b\n</top>').errors[0]).toEqual({
      line: 4,
      message: '<top> before the topic opened on line 1 was closed with </top>',
    })
  })

  it('is bounded', () => {
    const many = Array.from({ length: 4 }, (_, i) => `<top><num>${i}</num><title>t</title></top>`).join('\n')
    const r = parseTrecTopics(many, { maxRecords: 3 })
    expect(r.value).toHaveLength(3)
    expect(r.errors).toEqual([{ line: 4, message: 'more than 3 topics; at most 3 are read' }])
    expect(parseTrecTopics(many, { maxChars: 10 }).errors[0]?.message).toMatch(/at most 10 are read/)
    const bad = Array.from({ length: 5 }, () => 'junk').join('\n')
    expect(parseTrecTopics(`${bad}\n<oops>`, { maxErrors: 1 }).errors).toHaveLength(2)
  })
})

describe('TREC topics, JSON Lines', () => {
  it('reads {id, title, description, narrative}, ids as strings', () => {
    const text = [
      '{"id": 301, "title": "International  Organized\\nCrime", "description": "Identify organizations.", "narrative": "A relevant document …"}',
      '',
      '{"id": "q2", "title": "hubble", "description": null}',
    ].join('\n')
    const r = parseTopics(text)
    expect(r.format).toBe('jsonl')
    expect(r.errors).toEqual([])
    expect(r.value).toEqual([
      {
        id: '301',
        title: 'International Organized Crime',
        description: 'Identify organizations.',
        narrative: 'A relevant document …',
      },
      { id: 'q2', title: 'hubble' },
    ])
  })

  it('reports bad lines by number', () => {
    const r = parseTopicsJsonl(
      [
        '{"id": "1", "title": "a"}',
        'not json',
        '[1]',
        '{"id": "a b", "title": "x"}',
        '{"id": "2", "title": " "}',
        '{"id": "1", "title": "again"}',
      ].join('\n'),
    )
    expect(r.errors.map((e) => e.line)).toEqual([2, 3, 4, 5, 6])
    expect(r.errors[0]?.message).toMatch(/^not valid JSON/)
    expect(r.errors[1]?.message).toBe('expected a JSON object (one topic per line)')
    expect(r.errors[2]?.message).toBe('id: id is a non-empty id without whitespace')
    expect(r.errors[3]?.message).toBe('title: title is not blank')
    expect(r.errors[4]?.message).toBe('topic 1 is already defined on line 1')
  })
})

describe('documents, JSON Lines', () => {
  it('reads {docid, text, title?} and refuses duplicates and missing text', () => {
    const r = parseDocumentsJsonl(
      [
        '{"docid": "FT934-5418", "text": "The Hubble telescope…\\nsecond line", "title": "Hubble"}',
        '{"docid": "LA010189-0001", "text": ""}',
        '{"docid": "FT934-5418", "text": "again"}',
        '{"docid": "X"}',
      ].join('\r\n'),
    )
    expect(r.value).toEqual([
      { docid: 'FT934-5418', text: 'The Hubble telescope…\nsecond line', title: 'Hubble' },
      { docid: 'LA010189-0001', text: '' },
    ])
    expect(r.errors).toEqual([
      { line: 3, message: 'document FT934-5418 is already defined on line 1' },
      { line: 4, message: expect.stringMatching(/^text: /) },
    ])
    expect(parseDocumentsJsonl('{"docid":"a","text":"x"}\n{"docid":"b","text":"y"}', { maxRecords: 1 }).errors).toEqual(
      [{ line: 2, message: 'more than 1 documents; at most 1 are read' }],
    )
  })
})

describe('qrels', () => {
  it('reads topic iter docid rel, ignoring iter', () => {
    const r = parseQrels(
      '301 0 FBIS3-10082 1\n301\t0\tFBIS3-10169 0\n\n701 Q0 GX000-00-0000000 2\n701 0 clueweb-x -2\n',
    )
    expect(r.errors).toEqual([])
    expect(r.value).toEqual([
      { topic: '301', docid: 'FBIS3-10082', rel: 1 },
      { topic: '301', docid: 'FBIS3-10169', rel: 0 },
      { topic: '701', docid: 'GX000-00-0000000', rel: 2 },
      { topic: '701', docid: 'clueweb-x', rel: -2 },
    ])
  })

  it('reports wrong field counts, non-integer labels and duplicates by line', () => {
    const r = parseQrels('301 0 d1 1\n301 0 d2\n301 0 d3 1.5\n301 0 d4 yes\n301 0 d1 0\n302 0 d1 0 extra')
    expect(r.errors).toEqual([
      { line: 2, message: 'expected 4 fields "topic iter docid rel", found 3' },
      { line: 3, message: 'the relevance "1.5" is not an integer' },
      { line: 4, message: 'the relevance "yes" is not an integer' },
      { line: 5, message: 'topic 301, document d1 is already judged on line 1' },
      { line: 6, message: 'expected 4 fields "topic iter docid rel", found 5' },
    ])
  })

  it('is bounded', () => {
    expect(parseQrels('1 0 a 1\n1 0 b 1\n1 0 c 1', { maxRecords: 2 }).errors).toEqual([
      { line: 3, message: 'more than 2 qrels; at most 2 are read' },
    ])
    const junk = Array.from({ length: 10 }, () => 'x').join('\n')
    const r = parseQrels(junk, { maxErrors: 3 })
    expect(r.errors).toHaveLength(4)
    expect(r.errors[3]).toEqual({ line: 4, message: 'more than 3 errors; stopped reading' })
  })
})

describe('runs', () => {
  const RUN = [
    '301 Q0 dA 1 12.5 runA',
    '301 Q0 dB 2 14.0 runA', // a higher score at a worse rank: trec_eval goes by score
    '301 Q0 dC 3 10 runA',
    '302 Q0 dA 1 3e0 runA',
    '301 Q0 dZ 1 0.5 runB',
    '301 Q0 dY 2 0.5 runB', // tie with dZ
    '301 Q0 dX 3 .5 runB', // tie with both
  ].join('\n')

  it('groups by run tag and topic, ordered by score descending, ties by docid descending (trec_eval)', () => {
    const r = parseRuns(RUN)
    expect(r.errors).toEqual([])
    expect(r.value.map((x) => x.tag)).toEqual(['runA', 'runB'])
    const a = r.value[0]
    expect(a?.topics.map((t) => t.topic)).toEqual(['301', '302'])
    expect(a?.topics[0]?.docs).toEqual([
      { docid: 'dB', score: 14, rank: 2 },
      { docid: 'dA', score: 12.5, rank: 1 },
      { docid: 'dC', score: 10, rank: 3 },
    ])
    expect(a?.topics[1]?.docs).toEqual([{ docid: 'dA', score: 3, rank: 1 }])
    expect(r.value[1]?.topics[0]?.docs.map((d) => d.docid)).toEqual(['dZ', 'dY', 'dX'])
  })

  it('can break ties by the file’s rank instead', () => {
    const rev = RUN.replace('dZ 1', 'dZ 3').replace('dX 3', 'dX 1')
    expect(parseRuns(rev, { tieBreak: 'rank' }).value[1]?.topics[0]?.docs.map((d) => d.docid)).toEqual([
      'dX',
      'dY',
      'dZ',
    ])
    expect(parseRuns(rev).value[1]?.topics[0]?.docs.map((d) => d.docid)).toEqual(['dZ', 'dY', 'dX'])
    expect(
      [
        { docid: 'b', score: 1, rank: 1 },
        { docid: 'a', score: 2, rank: 2 },
      ].sort(compareRanked())[0]?.docid,
    ).toBe('a')
  })

  it('cuts each list at a depth after ordering', () => {
    const r = parseRuns(RUN, { depth: 2 })
    expect(r.value[0]?.topics[0]?.docs.map((d) => d.docid)).toEqual(['dB', 'dA'])
    expect(parseRuns(RUN, { depth: 0 }).errors).toEqual([{ line: 1, message: 'depth is a positive integer' }])
  })

  it('reports bad lines by number', () => {
    const r = parseRuns(
      [
        '301 Q0 d1 1 1.0 r',
        '301 Q0 d2 1 1.0',
        '301 Q0 d3 one 1.0 r',
        '301 Q0 d4 4 NaN r',
        '301 Q0 d5 5 Infinity r',
        '301 Q0 d6 6 1e999 r',
        '301 Q0 d1 7 0.3 r',
      ].join('\n'),
    )
    expect(r.errors).toEqual([
      { line: 2, message: 'expected 6 fields "topic Q0 docid rank score tag", found 5' },
      { line: 3, message: 'the rank "one" is not an integer' },
      { line: 4, message: 'the score "NaN" is not a finite number' },
      { line: 5, message: 'the score "Infinity" is not a finite number' },
      { line: 6, message: 'the score "1e999" is not a finite number' },
      { line: 7, message: 'run r lists document d1 for topic 301 twice (first on line 1)' },
    ])
  })

  it('is bounded', () => {
    expect(parseRuns('1 Q0 a 1 1 r\n1 Q0 b 2 1 r', { maxRecords: 1 }).errors).toEqual([
      { line: 2, message: 'more than 1 run lines; at most 1 are read' },
    ])
    expect(parseRuns('1 Q0 a 1 1 r', { maxChars: 5 }).errors).toEqual([
      { line: 1, message: 'the file has 12 characters; at most 5 are read' },
    ])
  })
})
