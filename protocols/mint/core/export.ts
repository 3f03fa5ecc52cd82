/**
 * MINT episodes written out in the authors' layout (pure), so a Parley run reads like a released one:
 * - `runFolder`: the authors' relative path of a run's results file,
 *   `<model>/F=<feedback|None>/[PHF=<GT|no_GT>-<textual|binary>/]max<k>_p<p>+tool+cd/<type>/<dataset>/results.jsonl`
 *   (the exact inverse of `parseRunPath`);
 * - `resultRecord`: one line of results.jsonl, `{state: {history, finished, success, latest_output,
 *   agent_action_count, token_counter, terminate_reason, error}, task}`, keys in the released order.
 *
 * `state.history` is `chatHistory` (byte for byte the released history, see the released-data tests).
 * `latest_output` is the last turn's step output ({observation, feedback, feedback_type, success, content})
 * as the authors' StepOutput names its fields; the released files keep a stale value there (the previous
 * step's, or the instruction prompt) that no reader of theirs uses, so it is not reproduced.
 */
import { instructionPrompt } from './prompts'
import {
  chatHistory as chatHistoryOf,
  DATASETS,
  type Dataset,
  type MintState,
  TASK_TYPE_OF,
  type TaskType,
  userMessage,
} from './protocol'
import { type MintRecord, mintRecord, type RunPath } from './results'

export interface RunFolderInput {
  model: string
  /** The feedback model (e.g. gpt-4-0613), null without feedback (F=None). */
  feedback: string | null
  /** Ground truth or not, textual or binary; null without feedback. */
  phf: RunPath['phf']
  k: number
  p: number
  taskType: TaskType
  dataset: Dataset
}

/** A path part the authors' layout can hold: no separator, not empty, not "." or "..". */
function part(name: string, what: string): string {
  if (name === '' || name === '.' || name === '..' || /[\\/]/.test(name))
    throw new Error(`${what} ${JSON.stringify(name)} cannot be a folder name of the authors' layout.`)
  return name
}

/** The authors' relative path of a run's results file (the inverse of `parseRunPath`). */
export function runFolder(r: RunFolderInput): string {
  if (!(DATASETS as readonly string[]).includes(r.dataset)) throw new Error(`Unknown MINT data set ${r.dataset}.`)
  if (TASK_TYPE_OF[r.dataset] !== r.taskType) throw new Error(`${r.dataset} is not a ${r.taskType} data set.`)
  if (r.feedback === null && r.phf !== null) throw new Error('PHF= needs a feedback provider.')
  if (r.feedback === 'None') throw new Error('"None" is the authors’ name for no feedback; pass null.')
  if (!Number.isInteger(r.k) || !Number.isInteger(r.p) || r.k < 1 || r.p < 1)
    throw new Error('k and p are whole numbers ≥ 1.')
  if (r.model.startsWith('F=')) throw new Error('A model name cannot start with "F=".')
  const parts = [
    part(r.model, 'The model'),
    `F=${r.feedback === null ? 'None' : part(r.feedback, 'The feedback model')}`,
  ]
  if (r.phf) parts.push(`PHF=${r.phf.groundTruth ? 'GT' : 'no_GT'}-${r.phf.form}`)
  parts.push(`max${r.k}_p${r.p}+tool+cd`, r.taskType, r.dataset, 'results.jsonl')
  return parts.join('/')
}

/** The feedback setting of a Parley run as the authors name it (F=…, PHF=…), for `runFolder`. */
export function feedbackFolder(
  state: Pick<MintState, 'config'>,
  feedbackModel: string | null,
): Pick<RunFolderInput, 'feedback' | 'phf'> {
  const f = state.config.feedback
  if (f.mode === 'none') return { feedback: null, phf: null }
  return { feedback: feedbackModel ?? 'human', phf: { groundTruth: f.groundTruth, form: f.mode } }
}

export interface RecordTask {
  task_name: string
  task_id: number | string
  prompt: string
  reference: string | number | boolean | number[]
  metadata: Record<string, unknown>
}

/** The released `task.task_name` of a data set: "reasoning" for the five reasoning sets, else the set's name. */
export function taskNameOf(dataset: Dataset, alfworldType?: string): string {
  if (TASK_TYPE_OF[dataset] === 'reasoning') return 'reasoning'
  if (dataset === 'alfworld') return alfworldType ? `alfworld/${alfworldType}` : 'alfworld'
  return dataset
}

/** One record of results.jsonl for a finished (or stopped) episode, keys in the released order. */
export function resultRecord(
  state: MintState,
  extra: { task: RecordTask; tokenCounter: Record<string, number> },
): MintRecord {
  const last = state.turns[state.turns.length - 1]
  const feedbackType =
    state.config.feedback.mode === 'none'
      ? 'no_feedback'
      : state.config.feedback.groundTruth
        ? 'feedback_w_gt'
        : 'feedback_wo_gt'
  const latest = last
    ? {
        observation: last.observation,
        feedback: last.feedback ?? '',
        feedback_type: feedbackType,
        success: last.correct === true,
        content: userMessage(last),
      }
    : null
  const record = {
    state: {
      history: chatHistory(state),
      finished: state.finished,
      success: state.success,
      latest_output: latest,
      agent_action_count: {
        propose_solution: state.counts.propose_solution,
        use_tool: state.counts.use_tool,
        invalid_action: state.counts.invalid_action,
      },
      token_counter: { ...extra.tokenCounter },
      terminate_reason: state.reason ?? 'error',
      error: state.error,
    },
    task: {
      task_name: extra.task.task_name,
      task_id: extra.task.task_id,
      prompt: extra.task.prompt,
      reference: extra.task.reference,
      metadata: extra.task.metadata,
    },
  }
  // The record is what parseRecord reads back (the same zod schema): a state that cannot be one throws.
  mintRecord.parse(record)
  return record
}

function chatHistory(state: MintState) {
  return chatHistoryOf(state, instructionPrompt(state.config, state.instance))
}

/**
 * Python's `json.dumps(value)` with its defaults (the authors write each record so): ", " and ": "
 * separators, every non-ASCII character as \\uXXXX (ensure_ascii), exponents with two digits. A whole
 * number is written as an int (JSON.parse does not tell 1.0 from 1); the released subset has none.
 */
export function pyJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity'
    return String(value).replace(/e([+-])(\d)$/, 'e$10$2')
  }
  if (typeof value === 'string')
    return JSON.stringify(value).replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    )
  if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${pyJson(k)}: ${pyJson(v)}`)
    .join(', ')}}`
}

/** results.jsonl text of records (one Python-style JSON object per line, each ending in a newline). */
export function resultsJsonl(records: readonly MintRecord[]): string {
  return records.map((r) => `${pyJson(r)}\n`).join('')
}
