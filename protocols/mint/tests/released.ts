// Helpers for the tests on the authors' released MINT subset (../shared/datasets/mint, never copied here).
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import {
  type MintConfig,
  type MintInstance,
  type MintMessage,
  type MintMessageBody,
  mintConfig,
  mintInstance,
} from '@/protocols/mint/core/protocol'
import {
  type MintRecord,
  type MintTaskLine,
  parseRecord,
  parseRunPath,
  parseTaskLines,
  type RunPath,
  referenceText,
} from '@/protocols/mint/core/results'
import { sharedDir } from '../../../tests/support/shared'

export const MINT_DIR = sharedDir('datasets', 'mint')
export const OUTPUTS = path.join(MINT_DIR, 'outputs')

export interface Released {
  file: string
  line: number
  run: RunPath
  record: MintRecord
  config: MintConfig
  instance: MintInstance
}

const tasksCache = new Map<string, MintTaskLine[]>()
export function tasksOf(dataset: string): MintTaskLine[] {
  let t = tasksCache.get(dataset)
  if (!t) {
    const f = path.join(MINT_DIR, 'tasks', dataset, 'test_prompts.json')
    t = parseTaskLines(readFileSync(f, 'utf8'), f)
    tasksCache.set(dataset, t)
  }
  return t
}

/** Every released record, with the config of its run and the instance built from test_prompts.json. */
export function releasedRecords(): Released[] {
  const files = (readdirSync(OUTPUTS, { recursive: true }) as string[])
    .filter((f) => f.endsWith('results.jsonl'))
    .sort()
  const out: Released[] = []
  for (const file of files) {
    const run = parseRunPath(file)
    const lines = readFileSync(path.join(OUTPUTS, file), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
    lines.forEach((l, i) => {
      const record = parseRecord(l, `${file}:${i + 1}`)
      const task = run.dataset === 'alfworld' ? null : tasksOf(run.dataset).find((t) => t.id === record.task.task_id)
      if (run.dataset !== 'alfworld' && !task)
        throw new Error(`${file}:${i + 1}: task ${record.task.task_id} not in tasks/`)
      const instance = mintInstance.parse({
        id: String(record.task.task_id),
        dataset: run.dataset,
        // ALFWorld's prompt comes from the game (not released in tasks/): the record's own prompt
        prompt: task ? task.prompt : record.task.prompt,
        reference: referenceText(task ? task.reference : record.task.reference),
        answerType: task?.answer_type,
        alfworldType: (record.task.metadata as { task_type?: string }).task_type,
      })
      const config = mintConfig.parse({
        k: run.k,
        p: run.p,
        feedback: run.feedback
          ? { mode: run.phf?.form ?? 'textual', groundTruth: run.phf?.groundTruth ?? false, frequency: 'dense' }
          : { mode: 'none' },
      })
      out.push({ file, line: i + 1, run, record, config, instance })
    })
  }
  return out
}

/** The observation inside a released user message (between "Observation:\n" and the countdown line). */
export function observationOf(userContent: string): string {
  const body = userContent.slice('Observation:\n'.length)
  const cut = body.search(/\nYou have -?\d+ steps left and -?\d+ chances to propose solution left\.\n/)
  return cut < 0 ? body : body.slice(0, cut)
}

/** The expert feedback inside a released user message ('' when none). */
export function feedbackOf(userContent: string): string {
  const k = userContent.indexOf('\nExpert feedback:\n')
  return k < 0 ? '' : userContent.slice(k + '\nExpert feedback:\n'.length).replace(/\n$/, '')
}

/**
 * The message log that replays a released record: per assistant message the agent's reply; the tool's
 * output or the env's verdict (correct only for the proposal that ended with task_success); the feedback.
 */
export function messagesOf(r: Released): MintMessage[] {
  const h = r.record.state.history
  const msgs: MintMessage[] = []
  const push = (m: MintMessageBody) => msgs.push({ ...m, seq: msgs.length + 1 } as MintMessage)
  for (let i = 1; i < h.length; i++) {
    const m = h[i] as { role: string; content: string }
    if (m.role !== 'assistant') continue
    const reply = m.content.replace(/\n$/, '')
    push({ sender: 'agent', kind: 'turn', content: reply, error: null })
    const next = h[i + 1]
    const last = next === undefined
    const success = last && r.record.state.terminate_reason === 'task_success'
    if (reply.includes('<solution>')) {
      if (extractNonEmpty(reply)) push({ sender: 'env', kind: 'verdict', correct: success })
    } else if (extractCode(reply)) {
      push({ sender: 'tool', kind: 'observation', output: next ? observationOf(next.content) : '', done: success })
    }
    if (next && feedbackOf(next.content) !== '')
      push({ sender: 'feedback', kind: 'feedback', text: feedbackOf(next.content) })
  }
  if (r.record.state.terminate_reason === 'error')
    push({ sender: 'agent', kind: 'turn', content: '', error: r.record.state.error ?? 'error' })
  return msgs
}

const tagged = (s: string, tag: string) =>
  [...`\n${s}\n`.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => (m[1] ?? '').trim()).join('\n')
const extractNonEmpty = (s: string) => tagged(s, 'solution') !== ''
const extractCode = (s: string) => tagged(s, 'execute') !== ''
