/**
 * Readers of the authors' released files (pure: they parse text a caller has read; the CLI reads files).
 * - a run's path: `<model>/F=<feedback>/[PHF=<GT|no_GT>-<textual|binary>/]max<k>_p<p>+tool+cd/<type>/<dataset>/results.jsonl`
 * - a results record (state.history, success, agent_action_count, terminate_reason …)
 * - a task line of `test_prompts.json` (JSON Lines despite the name), ALFWorld's gamefile_id.txt
 */
import { z } from 'zod'
import { DATASETS, type Dataset, TASK_TYPE_OF, TASK_TYPES, type TaskType } from './protocol'

export const MAX_RECORD_CHARS = 5_000_000

export interface RunPath {
  model: string
  /** The feedback model, null for F=None. */
  feedback: string | null
  /** PHF=…: ground truth (GT) or not, textual or binary; null without feedback. */
  phf: { groundTruth: boolean; form: 'textual' | 'binary' } | null
  k: number
  p: number
  taskType: TaskType
  dataset: Dataset
  /** The run's folder relative to the model's: "F=None/max5_p2+tool+cd". */
  run: string
}

const runPathSchema = z.object({
  model: z.string().min(1),
  feedback: z.string().min(1).nullable(),
  phf: z.object({ groundTruth: z.boolean(), form: z.enum(['textual', 'binary']) }).nullable(),
  k: z.number().int().min(1).max(10),
  p: z.number().int().min(1).max(10),
  taskType: z.enum(TASK_TYPES),
  dataset: z.enum(DATASETS),
  run: z.string(),
})

/** Parses a results file's path (relative, from the model folder on: "gpt-3.5-turbo-0613/F=None/…/results.jsonl"). */
export function parseRunPath(rel: string): RunPath {
  const parts = rel.split(/[\\/]/).filter((s) => s !== '' && s !== '.')
  const bad = (why: string): never => {
    throw new Error(
      `${rel}: not a MINT results path (${why}); expected <model>/F=<feedback>/[PHF=<GT|no_GT>-<textual|binary>/]max<k>_p<p>+tool+cd/<task type>/<dataset>/results.jsonl`,
    )
  }
  if (parts[parts.length - 1] !== 'results.jsonl') bad('it does not end in results.jsonl')
  const [model, f, ...rest] = parts
  if (!model || !f?.startsWith('F=')) bad('the second part is not F=<feedback>')
  const feedbackName = (f as string).slice(2)
  let phf: RunPath['phf'] = null
  let i = 0
  if (rest[0]?.startsWith('PHF=')) {
    const m = /^PHF=(GT|no_GT)-(textual|binary)$/.exec(rest[0])
    if (!m) bad(`${rest[0]} is not PHF=<GT|no_GT>-<textual|binary>`)
    phf = { groundTruth: m?.[1] === 'GT', form: m?.[2] as 'textual' | 'binary' }
    i = 1
  }
  const budget = /^max(\d+)_p(\d+)\+tool\+cd$/.exec(rest[i] ?? '')
  if (!budget) bad(`${rest[i]} is not max<k>_p<p>+tool+cd`)
  if (rest.length !== i + 4) bad('wrong number of parts')
  const taskType = rest[i + 1]
  const dataset = rest[i + 2]
  const parsed = runPathSchema.safeParse({
    model,
    feedback: feedbackName === 'None' ? null : feedbackName,
    phf,
    k: Number(budget?.[1]),
    p: Number(budget?.[2]),
    taskType,
    dataset,
    run: [f, ...rest.slice(0, i + 1)].join('/'),
  })
  if (!parsed.success) bad(parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; '))
  const out = parsed.data as RunPath
  if (TASK_TYPE_OF[out.dataset] !== out.taskType) bad(`${out.dataset} is not a ${out.taskType} data set`)
  if (out.feedback === null && out.phf !== null) bad('PHF= without feedback')
  return out
}

/** A released reference: text, or for TheoremQA a number, a boolean or a list of numbers. */
export const releasedReference = z.union([z.string(), z.number(), z.boolean(), z.array(z.number())])
export type ReleasedReference = z.output<typeof releasedReference>

/** The reference as the instance keeps it: text as it is, anything else as JSON ("[0, 5]" → "[0,5]", false → "false"). */
export function referenceText(ref: ReleasedReference): string {
  return typeof ref === 'string' ? ref : JSON.stringify(ref)
}

const actionCount = z.object({
  propose_solution: z.number().int().min(0),
  use_tool: z.number().int().min(0),
  invalid_action: z.number().int().min(0),
})
export const mintRecord = z.object({
  state: z.object({
    history: z.array(z.object({ role: z.enum(['user', 'assistant', 'system']), content: z.string() })).min(1),
    finished: z.boolean(),
    success: z.boolean(),
    latest_output: z.record(z.string(), z.unknown()).nullable(),
    agent_action_count: actionCount,
    token_counter: z.record(z.string(), z.number()),
    terminate_reason: z.enum(['task_success', 'max_steps', 'max_propose_steps', 'error']),
    error: z.string().nullable(),
  }),
  task: z.object({
    task_name: z.string(),
    task_id: z.union([z.number().int(), z.string()]),
    prompt: z.string(),
    reference: releasedReference,
    metadata: z.record(z.string(), z.unknown()),
  }),
})
export type MintRecord = z.output<typeof mintRecord>

/** One line of a results.jsonl; `where` names it in errors ("file:line"). */
export function parseRecord(line: string, where: string): MintRecord {
  if (line.length > MAX_RECORD_CHARS)
    throw new Error(`${where}: the record is longer than ${MAX_RECORD_CHARS} characters.`)
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch (e) {
    throw new Error(`${where}: not JSON (${(e as Error).message}).`)
  }
  const r = mintRecord.safeParse(json)
  if (!r.success)
    throw new Error(
      `${where}: not a MINT record: ${r.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`,
    )
  return r.data
}

export const mintTaskLine = z.looseObject({
  id: z.number().int().min(0),
  prompt: z.string().min(1),
  reference: releasedReference,
  answer_type: z.string().optional(),
  task_id: z.union([z.string(), z.number()]).optional(),
  entry_point: z.string().optional(),
  test: z.string().optional(),
  test_list: z.array(z.string()).optional(),
  test_setup_code: z.string().optional(),
})
export type MintTaskLine = z.output<typeof mintTaskLine>

/** The lines of a test_prompts.json (JSON Lines); blank lines skipped; at most `max` tasks. */
export function parseTaskLines(text: string, where: string, max = 10_000): MintTaskLine[] {
  const out: MintTaskLine[] = []
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return
    if (out.length >= max) throw new Error(`${where}: more than ${max} tasks.`)
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch (e) {
      throw new Error(`${where}:${i + 1}: not JSON (${(e as Error).message}).`)
    }
    const r = mintTaskLine.safeParse(json)
    if (!r.success)
      throw new Error(
        `${where}:${i + 1}: not a MINT task: ${r.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`,
      )
    out.push(r.data)
  })
  return out
}

export const ALFWORLD_NOTE = 'environment not installed: ALFWorld games cannot be played here (ids only)'

/** ALFWorld's gamefile_id.txt: the game ids, and the sub-type each id's prefix names. */
export function parseGameIds(text: string): { id: string; type: string | null; note: string }[] {
  const prefixes: [string, string][] = [
    ['pick_and_place', 'put'],
    ['pick_clean_then_place', 'clean'],
    ['pick_heat_then_place', 'heat'],
    ['pick_cool_then_place', 'cool'],
    ['look_at_obj', 'examine'],
    ['pick_two_obj', 'puttwo'],
  ]
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((id) => {
      const base = id.split('/').find((p) => prefixes.some(([pre]) => p.startsWith(pre))) ?? id
      return { id, type: prefixes.find(([pre]) => base.startsWith(pre))?.[1] ?? null, note: ALFWORLD_NOTE }
    })
}
