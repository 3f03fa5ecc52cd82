import type { Prisma } from '@/lib/generated/prisma/client'
import { db } from '@/lib/server/db'
import { demoInstances } from '@/protocols/scorekeeping/server/demo'
import type { ContractFixture } from '../../tests/engine/fixtures/types'

/** Games of Parley's own demo experiment; the scripted answerer says "no" to every side question. */
export const scorekeepingFixture: ContractFixture = {
  async dataset(w, n) {
    const ds = await db.dataset.create({
      data: {
        studyId: w.studyId,
        name: 'contract games',
        kind: 'clembench',
        source: 'inline',
        instances: {
          create: demoInstances(n).map((i, index) => ({
            index,
            input: i as unknown as Prisma.InputJsonValue,
            prediction: '',
            explanation: '',
            meta: { experiment: i.experiment ?? '', gameId: i.gameId ?? null },
          })),
        },
      },
    })
    return ds.id
  },
  // The one create-run shape; the questioner (the game master, its only program) needs no naming.
  setup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    seats: { answerer: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } } },
  }),
  humanSetup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    seats: { answerer: { kind: 'human', userId: w.expert.userId } },
  }),
  script: (latencyMs = 20) => [
    {
      match: { model: 'gen', contains: 'Answer this question with yes or no' },
      replies: [{ text: 'ASIDE: no', latencyMs }],
    },
    { match: { model: 'gen' }, replies: [{ text: 'ANSWER: I would rather not say.', latencyMs }] },
  ],
  failing: () => [{ match: { model: 'gen' }, replies: [{ fault: '500' }] }],
  humanTurn: (s) => (s.ask?.kind === 'answer' ? { reply: 'On Monday.' } : { answer: 'no' }),
  demoSetup: (_w, datasetId, demo) => ({
    name: 'demo',
    datasetId,
    seats: { answerer: { kind: 'llm', model: { connectionId: demo } } },
  }),
}

export default scorekeepingFixture
