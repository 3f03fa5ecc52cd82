import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Prisma } from '@/lib/generated/prisma/client'
import { db } from '@/lib/server/db'
import { parsePagesJsonl, parseQuestionsJsonl } from '@/protocols/rehac/core/qa-env'
import type { ContractFixture } from '../../tests/engine/fixtures/types'

const demo = (name: string) => readFileSync(path.join(import.meta.dirname, 'demo', name), 'utf8')

/** The demo QA tasks with their corpus, as the `rehac-qa` import stores them (n of them, cycling). */
export async function rehacQaDataset(studyId: string, n: number): Promise<string> {
  const pages = parsePagesJsonl(demo('corpus.jsonl'))
  const questions = parseQuestionsJsonl(demo('questions.jsonl'))
  const ds = await db.dataset.create({
    data: {
      studyId,
      name: 'contract ReHAC tasks',
      kind: 'rehac-qa',
      source: 'inline',
      instances: {
        create: Array.from({ length: n }, (_, index) => {
          const q = questions[index % questions.length]!
          return {
            index,
            input: {
              id: `${q.id}-${index}`,
              kind: q.type,
              question: q.question,
              taskSet: 'velmora',
              pages,
            } as unknown as Prisma.InputJsonValue,
            prediction: q.answer,
            explanation: '',
            meta: { kind: q.type, taskSet: 'velmora' },
          }
        }),
      },
    },
  })
  return ds.id
}

/** The agent searches, then finishes at step 2 (every task ends in two steps). */
export const rehacScript = (latencyMs = 20) => [
  {
    match: { model: 'gen', contains: 'Observation 1:' },
    replies: [{ text: 'Thought 2: The page answers it.\nAction 2: Finish[Halvard Brenn]', latencyMs }],
  },
  {
    match: { model: 'gen' },
    replies: [{ text: 'Thought 1: I need the lighthouse first.\nAction 1: Search[Calder Lighthouse]', latencyMs }],
  },
]

export const rehacFixture: ContractFixture = {
  dataset: (w, n) => rehacQaDataset(w.studyId, n),
  setup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    seats: {
      decider: { kind: 'program', program: 'agent-only' },
      agent: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } },
      human: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } },
    },
  }),
  humanSetup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    seats: {
      decider: { kind: 'program', program: 'human-only' },
      agent: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } },
      human: { kind: 'human', userId: w.expert.userId },
    },
  }),
  script: rehacScript,
  // Agent-only episodes reach no state with both actions: no advantage or imitation rows.
  emptyTables: ['advantages', 'imitation'],
  failing: () => [{ match: { model: 'gen' }, replies: [{ fault: '500' }] }],
  humanTurn: (s) =>
    s.ask?.kind === 'decide'
      ? { solver: 'agent' }
      : { thought: 'I look for the lighthouse.', action: { type: 'search', arg: 'Calder Lighthouse' } },
  demoSetup: (_w, datasetId, demoConnection) => ({
    name: 'demo',
    datasetId,
    seats: {
      decider: { kind: 'program', program: 'agent-only' },
      agent: { kind: 'llm', model: { connectionId: demoConnection } },
      human: { kind: 'llm', model: { connectionId: demoConnection } },
    },
  }),
}

export default rehacFixture
