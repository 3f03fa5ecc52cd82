import { z } from 'zod'
import type { ImportedSession, SessionImport } from '@/lib/server/sdk'
import { SessionImportError } from '@/lib/server/sdk'
import {
  DEFAULT_THRESHOLD,
  endsEpisode,
  MAX_THRESHOLD,
  type RehacMessage,
  type TaskKind,
} from '@/protocols/rehac/core/protocol'
import { parseTrajectory, type RehacLine, rehacLine, TrajectoryParseError } from '@/protocols/rehac/core/trajectory'

/**
 * The authors' released trajectory files as finished sessions of a study (the engine's session import,
 * lib/server/engine/session-import.ts): one imported episode per JSON line, every step three ReHAC
 * messages (the decision from its `<solver>` marker, the step, the observation), each accepted by the
 * protocol's `apply`. Each step keeps its lines as the file wrote them (`written`), so the run's
 * trajectories export gives back the file's trajectory strings byte for byte; T and EM are the line's
 * `f1` and `em` (the session's `imported` reward: no gold answer came with the file).
 *
 * - `rehac-training`: training trajectories (`{idx, trajectory, em, f1}`, e.g. dataset/gpt4/strategyqa.jsonl).
 * - `rehac-results-qa`: evaluation trajectories of a QA set (`{trajectory, em, f1}`, no idx).
 * - `rehac-results-sql`: evaluation trajectories of InterCode-SQL (game instructions before the question,
 *   no Thought lines, a "reward = …" line after the last step).
 *
 * The seats say the episodes were played elsewhere: the decider is the program `imported` (its choices are
 * the markers), agent and human are proxies with `{imported: true}`, the environment the program it always is.
 */

/** The seats of an imported episode. */
export const IMPORTED_SEATS = {
  decider: { kind: 'program', program: 'imported', helpers: {}, params: {} },
  agent: { kind: 'proxy', helpers: {}, params: { imported: true } },
  human: { kind: 'proxy', helpers: {}, params: { imported: true } },
  environment: { kind: 'program', program: 'environment', helpers: {}, params: {} },
} as const

const QaOptions = z.object({
  /** yes/no questions (StrategyQA, threshold 5) or open answers (HotpotQA, threshold 7). */
  questions: z.enum(['yesno', 'qa']).default('yesno'),
  taskSet: z.string().trim().max(100).optional(),
})
const SqlOptions = z.object({ taskSet: z.string().trim().max(100).optional() })

/** One JSON line of a released file → the session's instance, config and messages (throws on a bad line). */
export function importedEpisode(
  line: RehacLine,
  lineNo: number,
  kind: TaskKind,
  taskSet: string | undefined,
): ImportedSession {
  let t: ReturnType<typeof parseTrajectory>
  try {
    t = parseTrajectory(line.trajectory, kind === 'sql' ? 'sql' : 'qa')
  } catch (err) {
    if (err instanceof TrajectoryParseError) throw new SessionImportError(lineNo, err.message)
    throw err
  }
  const pre = t.preamble.split('\n')
  const q = pre.findIndex((l) => l.startsWith('Question: '))
  if (q === -1) throw new SessionImportError(lineNo, 'the trajectory has no "Question: " line before its first step')
  const preamble = pre.slice(0, q).join('\n')
  if (q > 0 && preamble === '')
    throw new SessionImportError(lineNo, 'the trajectory starts with blank lines before its question')
  const question = pre.slice(q).join('\n').slice('Question: '.length)
  const n = t.steps.length
  const last = t.steps[n - 1]
  if (!last) throw new SessionImportError(lineNo, 'the trajectory has no step')
  // The last step ends the episode by its action (Finish, submit), by SQL whose result was the gold one
  // (InterCode's "reward = 1" after it), or by the step threshold.
  const sqlDone = kind === 'sql' && last.action.type === 'sql' && /^reward = 1(\.0*)?\b/.test(t.epilogue ?? '')
  const finished = endsEpisode(last.action as never) || sqlDone
  const threshold = finished ? Math.max(DEFAULT_THRESHOLD[kind], n) : n
  if (threshold > MAX_THRESHOLD)
    throw new SessionImportError(lineNo, `the trajectory has ${n} steps, more than ${MAX_THRESHOLD}`)
  const raw = line.trajectory.split('\n')
  const messages: Array<{ message: RehacMessage; meta?: Record<string, unknown> }> = []
  // The text of each step after its marker line: its Thought/Action lines, then its Observation lines
  // (with the blank lines after it and, after the last step, the epilogue), split where the Observation starts.
  const markers = raw.flatMap((l, i) => (l.startsWith('<solver>') ? [i] : []))
  t.steps.forEach((s, k) => {
    const from = (markers[k] as number) + 1
    const to = k + 1 < n ? (markers[k + 1] as number) : raw.length
    const body = raw.slice(from, to)
    const obsAt = body.findIndex((l) => /^Observation [1-9]\d*: /.test(l))
    const written = body.slice(0, obsAt).join('\n')
    const writtenObservation = body.slice(obsAt).join('\n')
    const step = k + 1
    const seq = messages.length + 1
    messages.push({ message: { seq, sender: 'decider', kind: 'decide', t: step, solver: s.solver, pHuman: null } })
    messages.push({
      message: {
        seq: seq + 1,
        sender: s.solver,
        kind: 'step',
        t: step,
        thought: s.thought,
        action: s.action,
        suggestion: null,
        ms: null,
        written,
      },
    })
    messages.push({
      message: {
        seq: seq + 2,
        sender: 'environment',
        kind: 'observation',
        t: step,
        text: s.observation,
        finished: k === n - 1 ? finished : false,
        written: writtenObservation,
      },
    })
  })
  const id = line.idx !== undefined ? String(line.idx) : `line ${lineNo}`
  return {
    line: lineNo,
    instance: {
      input: { id, kind, question, ...(preamble ? { preamble } : {}), ...(taskSet ? { taskSet } : {}) },
      prediction: '',
      explanation: '',
      meta: { kind, imported: true, ...(line.idx !== undefined ? { idx: line.idx } : {}) },
    },
    seats: IMPORTED_SEATS as never,
    config: {
      ...(threshold !== DEFAULT_THRESHOLD[kind] ? { threshold } : {}),
      imported: {
        T: line.f1,
        em: typeof line.em === 'boolean' ? line.em : line.em === 1,
        line: lineNo,
        ...(line.idx !== undefined ? { idx: line.idx } : {}),
      },
    },
    messages,
  }
}

/** The JSON lines of a released file (blank lines skipped), each checked; a bad one names its line. */
export function importedLines(text: string, needIdx: boolean): Array<{ line: RehacLine; lineNo: number }> {
  const out: Array<{ line: RehacLine; lineNo: number }> = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string
    if (!l.trim()) continue
    let json: unknown
    try {
      json = JSON.parse(l)
    } catch {
      throw new SessionImportError(i + 1, 'not a JSON object')
    }
    const p = rehacLine.safeParse(json)
    if (!p.success) {
      const issue = p.error.issues[0]
      throw new SessionImportError(i + 1, `${issue?.path.join('.') || 'line'}: ${issue?.message}`)
    }
    if (needIdx && p.data.idx === undefined)
      throw new SessionImportError(i + 1, 'a training trajectory needs its question index "idx"')
    out.push({ line: p.data, lineNo: i + 1 })
  }
  return out
}

const qaKind = (needIdx: boolean): SessionImport<z.output<typeof QaOptions>> => ({
  label: needIdx ? 'ReHAC training trajectories (QA)' : 'ReHAC evaluation trajectories (QA)',
  description: needIdx
    ? 'The authors’ training file as JSON Lines ({"idx", "trajectory", "em", "f1"}, e.g. strategyqa.jsonl): one ended episode per line, T and EM from the file.'
    : 'A released evaluation file as JSON Lines ({"trajectory", "em", "f1"}, e.g. results/hotpotqa_lambda0.08.jsonl): one ended episode per line, T and EM from the file.',
  accepts: '.jsonl',
  task: 'qa',
  options: QaOptions,
  fields: [
    {
      name: 'questions',
      label: 'Questions: yesno (StrategyQA, 5 steps; default) or qa (HotpotQA, 7 steps)',
      placeholder: 'yesno',
    },
    { name: 'taskSet', label: 'Task set name (optional)' },
  ],
  parse: (text, o) =>
    importedLines(text, needIdx).map(({ line, lineNo }) => importedEpisode(line, lineNo, o.questions, o.taskSet)),
})

export const rehacSessionImports: Record<string, SessionImport> = {
  'rehac-training': qaKind(true),
  'rehac-results-qa': qaKind(false),
  'rehac-results-sql': {
    label: 'ReHAC evaluation trajectories (SQL, InterCode)',
    description:
      'A released InterCode evaluation file as JSON Lines ({"trajectory", "em", "f1"}; the game instructions before the question, no Thought lines): one ended episode per line, the reward from the file.',
    accepts: '.jsonl',
    task: 'sql',
    options: SqlOptions,
    fields: [{ name: 'taskSet', label: 'Task set name (optional)' }],
    parse: (text, o: z.output<typeof SqlOptions>) =>
      importedLines(text, false).map(({ line, lineNo }) => importedEpisode(line, lineNo, 'sql', o.taskSet)),
  },
}
