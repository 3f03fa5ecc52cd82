import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Prisma } from '@/lib/generated/prisma/client'
import { db } from '@/lib/server/db'
import { parseTaskLines, referenceText } from '@/protocols/mint/core/results'
import type { ContractFixture } from '../../tests/engine/fixtures/types'

/** The demo tasks (GSM8K-style word problems written by us), as the `mint-tasks` import stores them. */
export const demoTasks = () =>
  parseTaskLines(readFileSync(path.join(import.meta.dirname, 'demo', 'tasks.jsonl'), 'utf8'), 'demo/tasks.jsonl')

/** A `mint-tasks` dataset of the study: `n` demo tasks (cycling), or the tasks given (a code task …). */
export async function mintDataset(
  studyId: string,
  n: number,
  tasks: Array<{ id: string; dataset: string; prompt: string; reference: string; answerType?: string }> = [],
): Promise<string> {
  const demo = demoTasks()
  const rows = tasks.length
    ? tasks
    : Array.from({ length: n }, (_, i) => {
        const t = demo[i % demo.length]!
        return { id: `${t.id}-${i}`, dataset: 'gsm8k', prompt: t.prompt, reference: referenceText(t.reference) }
      })
  const ds = await db.dataset.create({
    data: {
      studyId,
      name: 'contract MINT tasks',
      kind: 'mint-tasks',
      source: 'inline',
      instances: {
        create: rows.map(({ reference, ...input }, index) => ({
          index,
          input: input as unknown as Prisma.InputJsonValue,
          prediction: reference,
          explanation: '',
          meta: { dataset: input.dataset },
        })),
      },
    },
  })
  return ds.id
}

/** The model runs one cell, then proposes what it printed (a wrong answer for every demo task: the episode ends on its proposals). */
export const mintScript = (latencyMs = 20) => [
  {
    match: { model: 'gen', contains: 'parley-contract 42' },
    replies: [
      { text: '<thought> The tool printed it. </thought>\nThe answer is <solution> 42 </solution>.', latencyMs },
    ],
  },
  {
    match: { model: 'gen' },
    replies: [
      { text: '<thought> I compute it. </thought>\n<execute> print("parley-contract", 6 * 7) </execute>', latencyMs },
    ],
  },
]

const llm = (connectionId: string, model?: string) => ({
  kind: 'llm',
  model: { connectionId, ...(model ? { model } : {}) },
})

export const mintFixture: ContractFixture = {
  dataset: (w, n) => mintDataset(w.studyId, n),
  setup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    seats: { agent: llm(w.connectionId, 'gen'), feedback: { kind: 'program', program: 'no-feedback' } },
  }),
  humanSetup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    config: { feedback: { mode: 'textual' } },
    seats: { agent: llm(w.connectionId, 'gen'), feedback: { kind: 'human', userId: w.expert.userId } },
  }),
  script: mintScript,
  failing: () => [{ match: { model: 'gen' }, replies: [{ fault: '500' }] }],
  humanTurn: () => ({ text: 'The code ran. Now read what it printed and propose it.' }),
  demoSetup: (_w, datasetId, demoConnection) => ({
    name: 'demo',
    datasetId,
    config: { feedback: { mode: 'textual', groundTruth: false, frequency: 'dense' } },
    seats: { agent: llm(demoConnection), feedback: llm(demoConnection) },
  }),
}

export default mintFixture

/** One record of the authors' released results.jsonl (a solved GSM8K task), for import probes. */
export const releasedRecordLine = () =>
  JSON.stringify({
    state: {
      history: [{ role: 'user', content: 'P' }],
      finished: true,
      success: true,
      latest_output: {},
      agent_action_count: { propose_solution: 1, use_tool: 0, invalid_action: 0 },
      token_counter: {},
      terminate_reason: 'task_success',
      error: null,
    },
    task: { task_name: 'reasoning', task_id: 1, prompt: 'p', reference: '1', metadata: {} },
  })
