import { describe, expect, it } from 'vitest'
import { LineError } from './jsonl'
import { parsePythonStrList, parseTagsFile, parseTagsLine, sessionToJsonl } from './tags-file'

describe('parsePythonStrList', () => {
  it.each([
    ["['Machine: init', 'Human: refute']", ['Machine: init', 'Human: refute']],
    ['["Machine: init", "Human: it\'s"]', ['Machine: init', "Human: it's"]],
    ["[ 'a' ,'b', ]", ['a', 'b']],
    ["['a\\'b']", ["a'b"]],
    ['[]', []],
  ])('%s', (text, expected) => {
    expect(parsePythonStrList(text)).toEqual(expected)
  })
  it.each(["['a', 'b'", "'a'", "['a' 'b']", "['a', b]", "['a]"])('refuses %s', (text) => {
    expect(parsePythonStrList(text)).toBeNull()
  })
})

describe('parseTagsLine', () => {
  it('reads a RAD line: session id, ailment, the machine first, lower-case tags, j from 1', () => {
    expect(
      parseTagsLine(
        "sessionID-4f1c, ailment-Pleural Effusion ::: tags-['Machine: init', 'Human: refute', 'Machine: revise', 'Human: ratify', 'Machine: ratify']",
        3,
      ),
    ).toEqual({
      line: 3,
      sessionId: '4f1c',
      labelKind: 'ailment',
      label: 'Pleural Effusion',
      messages: [
        { j: 1, sender: 'm', tag: 'INIT' },
        { j: 2, sender: 'h', tag: 'REFUTE' },
        { j: 3, sender: 'm', tag: 'REVISE' },
        { j: 4, sender: 'h', tag: 'RATIFY' },
        { j: 5, sender: 'm', tag: 'RATIFY' },
      ],
    })
  })

  it('reads a DRUG line (mol-<SMILES>) and a Windows line ending', () => {
    const s = parseTagsLine("sessionID-00ff, mol-CC(=O)O.OCC ::: tags-['Machine: init', 'Human: ratify']\r", 1)
    expect(s?.labelKind).toBe('mol')
    expect(s?.label).toBe('CC(=O)O.OCC')
    expect(s?.messages).toHaveLength(2)
  })

  it('keeps a machine REJECT that did not end the session (the authors’ code)', () => {
    const s = parseTagsLine(
      "sessionID-0a9f, ailment-Cardiomegaly ::: tags-['Machine: init', 'Human: refute', 'Machine: refute', 'Human: refute', 'Machine: reject', 'Human: refute']",
      1,
    )
    expect(s?.messages.map((m) => m.tag)).toEqual(['INIT', 'REFUTE', 'REFUTE', 'REFUTE', 'REJECT', 'REFUTE'])
  })

  it('skips blank lines', () => {
    expect(parseTagsLine('  ', 2)).toBeNull()
  })

  it.each([
    ["sessionID-a1b2 ailment-X ::: tags-['Machine: init']", /line 5: expected `sessionID-/],
    ["sessionID-a1b2, label-X ::: tags-['Machine: init']", /line 5: expected `sessionID-/],
    ["sessionID-a1b2, ailment-X ::: tags-['Machine: init'", /line 5: expected `sessionID-/],
    ["sessionID-a1b2, ailment-X ::: tags-['Machine: init' 'Human: ratify']", /line 5: the tags are not a Python list/],
    ['sessionID-a1b2, ailment-X ::: tags-[]', /line 5: the session has no tags/],
    ["sessionID-a1b2, ailment-X ::: tags-['Oracle: init']", /line 5: tag 1 \("Oracle: init"\) is not/],
    ["sessionID-a1b2, ailment-X ::: tags-['Machine: init', 'Human: agree']", /line 5: tag 2 \("Human: agree"\)/],
    ["sessionID-a1b2, ailment-X ::: tags-['Human: init']", /line 5: tag 1 .*machine's/],
    ["sessionID-a1b2, ailment-X ::: tags-['Machine: ratify']", /line 5: tag 1 .*tagged INIT/],
    [
      "sessionID-a1b2, ailment-X ::: tags-['Machine: init', 'Human: init']",
      /line 5: tag 2 .*INIT is the tag of message 1/,
    ],
  ])('refuses %s', (text, message) => {
    expect(() => parseTagsLine(text, 5)).toThrow(LineError)
    expect(() => parseTagsLine(text, 5)).toThrow(message)
  })
})

describe('parseTagsFile and sessionToJsonl', () => {
  it('refuses a session id seen twice, naming both lines', () => {
    const l = "sessionID-a1b2, ailment-X ::: tags-['Machine: init']"
    expect(() => parseTagsFile([l, '', l])).toThrow(/line 3: session a1b2 already appeared on line 1/)
  })

  it('writes the JSONL messages of `pxp stats`, with the label', () => {
    const [s] = parseTagsFile(["sessionID-beef, ailment-Pneumonia ::: tags-['Machine: init', 'Human: ratify']"])
    expect(sessionToJsonl(s!, 4).map((l) => JSON.parse(l))).toEqual([
      { repetition: 4, session: 'beef', j: 1, sender: 'm', tag: 'INIT', ailment: 'Pneumonia' },
      { repetition: 4, session: 'beef', j: 2, sender: 'h', tag: 'RATIFY', ailment: 'Pneumonia' },
    ])
  })
})
