/**
 * `parley pxp stats`: intelligibility counts from a stream of JSONL message lines
 * (protocols/pxp/core/jsonl.ts), aggregated over repetitions (./intelligibility.ts).
 *
 * Lines may come in any order. Each session keeps a constant-size summary plus the line number of
 * each of its message numbers (to refuse duplicates and find gaps), never the messages themselves.
 * A session must hold messages 1..L without gaps or repeats: a log with a hole is a broken log,
 * and counting it would silently give wrong numbers.
 */
import { LineError, parseJsonlLine } from '@/protocols/pxp/core/jsonl'
import {
  addToSummary,
  aggregateRepetitions,
  countRepetition,
  emptySummary,
  type IntelligibilityReport,
  longestSession,
  type SessionSummary,
} from '@/protocols/pxp/core/intelligibility'

interface SessionState {
  summary: SessionSummary
  /** j → the line it came from. */
  lines: Map<number, number>
}

export class PxpStatsCollector {
  private readonly reps = new Map<number, Map<string, SessionState>>()
  private lineNo = 0

  /** Adds the next line of input; throws {@link LineError} for a bad one. */
  push(text: string): void {
    const line = ++this.lineNo
    const m = parseJsonlLine(text, line)
    if (!m) return
    let sessions = this.reps.get(m.repetition)
    if (!sessions) {
      sessions = new Map()
      this.reps.set(m.repetition, sessions)
    }
    let s = sessions.get(m.session)
    if (!s) {
      s = { summary: emptySummary(), lines: new Map() }
      sessions.set(m.session, s)
    }
    const earlier = s.lines.get(m.j)
    if (earlier !== undefined)
      throw new LineError(
        line,
        `repetition ${m.repetition}, session ${m.session} already has message ${m.j} (line ${earlier})`,
      )
    s.lines.set(m.j, line)
    addToSummary(s.summary, m)
  }

  /** The report over everything pushed; throws when there is nothing, or a session has a gap. */
  report(): IntelligibilityReport {
    if (this.reps.size === 0) throw new Error('no messages in the input')
    for (const [rep, sessions] of this.reps)
      for (const [id, s] of sessions) {
        const L = s.summary.length
        if (s.lines.size === L) continue
        let missing = 1
        while (s.lines.has(missing)) missing++
        throw new Error(
          `repetition ${rep}, session ${id}: message ${missing} is missing (the session goes up to message ${L}, line ${s.lines.get(L)})`,
        )
      }
    const bySession = [...this.reps.keys()]
      .sort((a, b) => a - b)
      .map((rep) => [...this.reps.get(rep)!.values()].map((s) => s.summary))
    const L = Math.max(...bySession.map(longestSession))
    return aggregateRepetitions(bySession.map((sessions) => countRepetition(sessions, L)))
  }
}

/** Collects a whole stream of lines (e.g. node:readline over a file). */
export async function pxpStats(lines: AsyncIterable<string> | Iterable<string>): Promise<IntelligibilityReport> {
  const c = new PxpStatsCollector()
  for await (const l of lines) c.push(l)
  return c.report()
}
