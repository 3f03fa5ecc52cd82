/**
 * The authors' tags.txt (karannb/interact, src/interact.py; reference-implementations.md §1.3):
 * one line per session, appended after each session,
 *
 *   sessionID-<sess>, ailment-<label> ::: tags-['Machine: init', 'Human: refute', ...]
 *
 * DRUG writes `mol-<label>` (the reactant SMILES) instead of `ailment-<label>`. The tag list is
 * Python's repr of a list of str, machine first, tags in lower case. Message numbers are the list
 * positions, from 1.
 *
 * Parsed sessions become lines of the JSONL message format (./jsonl.ts) that `parley pxp stats`
 * reads; the label travels along as an extra `ailment` or `mol` field.
 */
import { formatJsonlLine, LineError, type PxpJsonlMessage, pxpJsonlLine } from './jsonl'

export type LabelKind = 'ailment' | 'mol'

export interface TagsFileSession {
  /** 1-based line number in the file. */
  line: number
  sessionId: string
  labelKind: LabelKind
  label: string
  /** The messages in order; repetition is filled in by {@link sessionToJsonl}. */
  messages: Omit<PxpJsonlMessage, 'repetition' | 'session'>[]
}

const LINE = /^sessionID-(.+?), (ailment|mol)-(.*) ::: tags-(\[.*\])\s*$/
const ITEM = /^\s*(machine|human)\s*:\s*(\S+)\s*$/i

/** Parses Python's repr of a list of str: ['a', "b's"]. Returns null when it is not one. */
export function parsePythonStrList(text: string): string[] | null {
  const s = text.trim()
  if (!s.startsWith('[') || !s.endsWith(']')) return null
  const items: string[] = []
  let i = 1
  const end = s.length - 1
  const skipSpace = () => {
    while (i < end && /\s/.test(s[i]!)) i++
  }
  skipSpace()
  if (i === end) return items
  for (;;) {
    const quote = s[i]
    if (quote !== "'" && quote !== '"') return null
    i++
    let item = ''
    for (;;) {
      if (i >= end) return null // unterminated string
      const c = s[i]!
      if (c === '\\') {
        const escaped = s[i + 1]
        if (escaped === undefined || i + 1 >= end) return null
        item += escaped === 'n' ? '\n' : escaped === 't' ? '\t' : escaped
        i += 2
      } else if (c === quote) {
        i++
        break
      } else {
        item += c
        i++
      }
    }
    items.push(item)
    skipSpace()
    if (i === end) return items
    if (s[i] !== ',') return null
    i++
    skipSpace()
    if (i === end) return items // a trailing comma is still a list in Python
  }
}

/** Parses one line of tags.txt (`line` is its 1-based number, for errors); null for a blank line. */
export function parseTagsLine(text: string, line: number): TagsFileSession | null {
  if (text.trim() === '') return null
  const m = LINE.exec(text.replace(/\r$/, ''))
  if (!m)
    throw new LineError(
      line,
      "expected `sessionID-<id>, ailment-<label> ::: tags-['Machine: init', …]` (or mol-<label> for DRUG)",
    )
  const [, sessionId, labelKind, label, list] = m
  const items = parsePythonStrList(list!)
  if (!items) throw new LineError(line, `the tags are not a Python list of strings: ${list}`)
  if (items.length === 0) throw new LineError(line, 'the session has no tags')
  const messages = items.map((item, i) => {
    const j = i + 1
    const im = ITEM.exec(item)
    if (!im) throw new LineError(line, `tag ${j} ("${item}") is not "Machine: <tag>" or "Human: <tag>"`)
    const parsed = pxpJsonlLine.safeParse({
      session: sessionId,
      j,
      sender: im[1]!.toLowerCase() === 'machine' ? 'm' : 'h',
      tag: im[2],
    })
    if (!parsed.success)
      throw new LineError(line, `tag ${j} ("${item}"): ${parsed.error.issues.map((x) => x.message).join('; ')}`)
    const { j: jj, sender, tag } = parsed.data
    return { j: jj, sender, tag }
  })
  return { line, sessionId: sessionId!, labelKind: labelKind as LabelKind, label: label!, messages }
}

/**
 * Reads tags.txt line by line. A session id seen twice is refused: the authors' code appends every
 * run to the same file, so two runs in one file must be split and imported with different
 * repetition numbers.
 */
export class TagsFileReader {
  private lineNo = 0
  private readonly seen = new Map<string, number>()

  push(text: string): TagsFileSession | null {
    const session = parseTagsLine(text, ++this.lineNo)
    if (!session) return null
    const first = this.seen.get(session.sessionId)
    if (first !== undefined)
      throw new LineError(
        session.line,
        `session ${session.sessionId} already appeared on line ${first}; if the file holds several runs, split it and import each with its own --repetition`,
      )
    this.seen.set(session.sessionId, session.line)
    return session
  }
}

export function parseTagsFile(lines: Iterable<string>): TagsFileSession[] {
  const reader = new TagsFileReader()
  const out: TagsFileSession[] = []
  for (const l of lines) {
    const s = reader.push(l)
    if (s) out.push(s)
  }
  return out
}

/** The session as JSONL message lines for `parley pxp stats`. */
export function sessionToJsonl(s: TagsFileSession, repetition: number): string[] {
  return s.messages.map((m) => formatJsonlLine({ repetition, session: s.sessionId, ...m }, { [s.labelKind]: s.label }))
}
