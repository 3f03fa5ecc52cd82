/**
 * ReHAC trajectory text (the authors' released JSONL, rehac.md §1.3 and §5.4) ⇄ steps.
 *
 *   <preamble>                  "Question: …" (QA), or InterCode's game instructions then "Question: …"
 *   <solver> agent|human        one marker line per step: who produced it (0 agent, 1 human)
 *   Thought n: …                zero or more (none in InterCode; twice in a few simulated-human steps)
 *   Action n: …                 exactly one
 *   Observation n: …            exactly one
 *   (blank lines)               some steps end with blank lines; every released trajectory ends with one
 *   reward = x                  InterCode only: a last line after the last step (the epilogue)
 *
 * Exports rebuild the state text the policy reads, so `renderTrajectory(parseTrajectory(text)) === text`
 * byte for byte on every released line. A field's text may span several lines: a line that does not
 * start a new part (e.g. a lone "Observation" the simulated human wrote past its stop sequence) continues
 * the part before it, so such steps parse and render unchanged instead of being rejected.
 */
import { z } from 'zod'
import { type JsonlOptions, parseJsonlRows } from '@/lib/tasks/jsonl'
import type { Solver } from './protocol'
export type PartLabel = 'Thought' | 'Action' | 'Observation'

/** One labelled part of a step as written: `${label} ${n}: ${text}` (text may contain '\n'). */
export interface StepPart {
  label: PartLabel
  n: number
  text: string
}

/**
 * The task action read off the Action text. QA: Search / Lookup / Finish with its bracketed argument;
 * text that is not one of them (a truncated `Finish[false`, an invented `Thought[…]`) is `invalid`
 * with the whole text as arg, as the environment saw it. SQL: a statement, or `submit`.
 */
export type TrajectoryActionType = 'search' | 'lookup' | 'finish' | 'invalid' | 'sql' | 'submit'
export interface TrajectoryAction {
  type: TrajectoryActionType
  arg: string
}

export interface TrajectoryStep {
  solver: Solver
  /** The Action's step number. */
  n: number
  /** The Thought text (several Thought parts joined with '\n'); null when the step has none (SQL). */
  thought: string | null
  action: TrajectoryAction
  observation: string
  /** The parts in order as written; rendering uses these, so odd steps survive unchanged. */
  parts: StepPart[]
  /** Blank lines after the step's last part. */
  blankLines: number
}

export type TrajectoryKind = 'qa' | 'sql'

export interface ParsedTrajectory {
  kind: TrajectoryKind
  /** Everything before the first marker (without its final newline). */
  preamble: string
  /** The text of the preamble's "Question: " line, or null when it has none. */
  question: string | null
  steps: TrajectoryStep[]
  /** Text after the last step (InterCode's "reward = 1" and the blank lines after it), or null. */
  epilogue: string | null
}

export class TrajectoryParseError extends Error {
  constructor(
    message: string,
    /** 1-based line number inside the trajectory text. */
    readonly line: number,
    /** 1-based step number (0: the preamble). */
    readonly step: number,
  ) {
    super(`trajectory line ${line}${step > 0 ? ` (step ${step})` : ''}: ${message}`)
    this.name = 'TrajectoryParseError'
  }
}

const MARKER = /^<solver> (agent|human)$/
const PART = /^(Thought|Action|Observation) ([1-9]\d*): /
const QA_ACTION = /^(Search|Lookup|Finish)\[([\s\S]*)\]$/
const EPILOGUE = /^reward = /

/** QA action text → type and argument (anything else is `invalid`, as the WikiEnv answers it). */
export function parseQaAction(text: string): TrajectoryAction {
  const m = QA_ACTION.exec(text)
  if (!m) return { type: 'invalid', arg: text }
  return { type: (m[1] as string).toLowerCase() as 'search' | 'lookup' | 'finish', arg: m[2] as string }
}

/** SQL action text: `submit`, or the statement itself. */
export function parseSqlAction(text: string): TrajectoryAction {
  return text.trim().toLowerCase() === 'submit' ? { type: 'submit', arg: '' } : { type: 'sql', arg: text }
}

/** The Action text of a task action (inverse of the parsers for every type but `invalid`). */
export function renderAction(a: TrajectoryAction): string {
  switch (a.type) {
    case 'search':
      return `Search[${a.arg}]`
    case 'lookup':
      return `Lookup[${a.arg}]`
    case 'finish':
      return `Finish[${a.arg}]`
    case 'submit':
      return 'submit'
    default:
      return a.arg
  }
}

/**
 * Parses one trajectory. `kind` decides how Action text is read; by default a trajectory whose steps
 * have no Thought at all is SQL (the released InterCode file), any other QA.
 */
export function parseTrajectory(text: string, kind?: TrajectoryKind): ParsedTrajectory {
  const lines = text.split('\n')
  const first = lines.findIndex((l) => l.startsWith('<solver>'))
  if (first === -1)
    throw new TrajectoryParseError('no "<solver> agent|human" marker line: a trajectory has at least one step', 1, 0)
  if (first === 0)
    throw new TrajectoryParseError('the trajectory starts with a marker: the question line is missing', 1, 0)
  const preambleLines = lines.slice(0, first)
  const questionLine = preambleLines.find((l) => l.startsWith('Question: '))

  // The epilogue: a trailing run starting at a "reward = " line after the last Observation.
  let end = lines.length
  for (let i = lines.length - 1; i > first; i--) {
    const l = lines[i] as string
    if (l === '') continue
    if (EPILOGUE.test(l)) end = i
    break
  }

  const raw: { solver: Solver; parts: StepPart[]; blankLines: number; line: number }[] = []
  for (let i = first; i < end; i++) {
    const l = lines[i] as string
    const stepNo = raw.length + (l.startsWith('<solver>') ? 1 : 0)
    if (l.startsWith('<solver>')) {
      const m = MARKER.exec(l)
      if (!m)
        throw new TrajectoryParseError(
          `bad marker ${JSON.stringify(l.slice(0, 40))}: expected "<solver> agent" or "<solver> human"`,
          i + 1,
          stepNo,
        )
      raw.push({ solver: m[1] as Solver, parts: [], blankLines: 0, line: i + 1 })
      continue
    }
    const step = raw[raw.length - 1] as (typeof raw)[number]
    const m = PART.exec(l)
    if (m) {
      if (step.blankLines > 0) {
        // Blank lines between parts belong to the part before them.
        const prev = step.parts[step.parts.length - 1] as StepPart
        prev.text += '\n'.repeat(step.blankLines)
        step.blankLines = 0
      }
      step.parts.push({ label: m[1] as PartLabel, n: Number(m[2]), text: l.slice(m[0].length) })
      continue
    }
    const prev = step.parts[step.parts.length - 1]
    if (!prev)
      throw new TrajectoryParseError(
        `expected "Thought n: " or "Action n: " after the marker, got ${JSON.stringify(l.slice(0, 40))}`,
        i + 1,
        stepNo,
      )
    if (l === '') step.blankLines++
    else {
      prev.text += '\n'.repeat(step.blankLines + 1) + l
      step.blankLines = 0
    }
  }

  const kindOf: TrajectoryKind = kind ?? (raw.some((s) => s.parts.some((p) => p.label === 'Thought')) ? 'qa' : 'sql')
  const steps = raw.map((s, k): TrajectoryStep => {
    const labels = s.parts.map((p) => p.label)
    const a = labels.indexOf('Action')
    const o = labels.indexOf('Observation')
    const fail = (what: string) => {
      throw new TrajectoryParseError(`step ${k + 1} ${what} (parts: ${labels.join(', ') || 'none'})`, s.line, k + 1)
    }
    if (a === -1) fail('has no "Action n: " line')
    if (o === -1) fail('has no "Observation n: " line')
    // Thought* Action Observation, each of the last two once.
    if (
      labels.lastIndexOf('Action') !== a ||
      labels.lastIndexOf('Observation') !== o ||
      o !== a + 1 ||
      o !== labels.length - 1 ||
      labels.slice(0, a).some((l) => l !== 'Thought')
    )
      fail('is not "Thought* Action Observation"')
    const thoughts = s.parts.slice(0, a)
    const actionText = (s.parts[a] as StepPart).text
    return {
      solver: s.solver,
      n: (s.parts[a] as StepPart).n,
      thought: thoughts.length ? thoughts.map((p) => p.text).join('\n') : null,
      action: kindOf === 'sql' ? parseSqlAction(actionText) : parseQaAction(actionText),
      observation: (s.parts[o] as StepPart).text,
      parts: s.parts,
      blankLines: s.blankLines,
    }
  })
  return {
    kind: kindOf,
    preamble: preambleLines.join('\n'),
    question: questionLine === undefined ? null : questionLine.slice('Question: '.length),
    steps,
    epilogue: end < lines.length ? lines.slice(end).join('\n') : null,
  }
}

/** Builds a step in the canonical form (one Thought when given, Action, Observation, no blank lines). */
export function makeStep(s: {
  solver: Solver
  n: number
  thought?: string | null
  action: TrajectoryAction
  observation: string
  blankLines?: number
}): TrajectoryStep {
  const parts: StepPart[] = []
  if (s.thought != null) parts.push({ label: 'Thought', n: s.n, text: s.thought })
  parts.push({ label: 'Action', n: s.n, text: renderAction(s.action) })
  parts.push({ label: 'Observation', n: s.n, text: s.observation })
  return {
    solver: s.solver,
    n: s.n,
    thought: s.thought ?? null,
    action: s.action,
    observation: s.observation,
    parts,
    blankLines: s.blankLines ?? 0,
  }
}

/** One step's lines joined with '\n' (no newline after the last). */
export function renderStep(step: Pick<TrajectoryStep, 'solver' | 'parts' | 'blankLines'>): string {
  let out = `<solver> ${step.solver}`
  for (const p of step.parts) out += `\n${p.label} ${p.n}: ${p.text}`
  return out + '\n'.repeat(step.blankLines)
}

/** The trajectory text: preamble, steps and epilogue joined with '\n'. */
export function renderTrajectory(t: Pick<ParsedTrajectory, 'preamble' | 'steps' | 'epilogue'>): string {
  const chunks = [t.preamble, ...t.steps.map(renderStep)]
  if (t.epilogue !== null) chunks.push(t.epilogue)
  return chunks.join('\n')
}

/**
 * The choice path of a parsed trajectory: one bit per step, '0' agent, '1' human (the evaluation tree's
 * key, rehac.md §1.3; protocol.ts's choicePath gives the same bits for a live episode).
 */
export function trajectoryPath(t: { steps: readonly Pick<TrajectoryStep, 'solver'>[] }): string {
  let bits = ''
  for (const s of t.steps) bits += s.solver === 'human' ? '1' : '0'
  return bits
}

/** One line of a released file: `idx` only in the training files; `em` a boolean or 0/1; `f1` T in [0, 1]. */
export const rehacLine = z.object({
  idx: z.number().int().min(0).optional(),
  trajectory: z.string().min(1),
  em: z.union([z.boolean(), z.number().min(0).max(1)]),
  f1: z.number().min(0).max(1),
})
export type RehacLine = z.output<typeof rehacLine>

/** How a trajectory file is read: no row limit; an error says "JSONL line N: …". */
export const REHAC_JSONL: JsonlOptions<RehacLine> = {
  what: 'trajectories',
  max: Number.POSITIVE_INFINITY,
  fail: (message) => new Error(`JSONL ${message}`),
}

/** Parses JSONL text into lines (blank lines skipped); an error names the 1-based line. */
export function parseJsonl(text: string): RehacLine[] {
  return parseJsonlRows(text, rehacLine, REHAC_JSONL)
}
