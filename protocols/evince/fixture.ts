import { db } from '@/lib/server/db'
import { debateRules, loadDebateFixture } from './tests/support'
import type { ContractFixture } from '../../tests/engine/fixtures/types'

const dengue = loadDebateFixture('dengue')

/** Every case is the paper's Dengue appendix debate, replayed from its recorded answers. */
export const evinceFixture: ContractFixture = {
  async dataset(w, n) {
    const ds = await db.dataset.create({
      data: {
        studyId: w.studyId,
        name: 'contract cases',
        kind: 'cases',
        source: 'inline',
        instances: {
          create: Array.from({ length: n }, (_, index) => ({
            index,
            input: { symptoms: dengue.symptoms },
            prediction: dengue.groundTruth,
            explanation: '',
          })),
        },
      },
    })
    return ds.id
  },
  // The one create-run shape: two debater models and the judge in the moderator seat.
  setup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    seats: {
      A: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen-a' } },
      B: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen-b' } },
      moderator: { kind: 'llm', model: { connectionId: w.connectionId, model: 'judge' } },
    },
    config: { k: dengue.k, maxRounds: dengue.rounds.length },
  }),
  humanSetup: (w, datasetId) => {
    const setup = evinceFixture.setup(w, datasetId) as { seats: Record<string, unknown> }
    return { ...setup, seats: { ...setup.seats, A: { kind: 'human', userId: w.expert.userId } } }
  },
  script: (latencyMs = 20) => debateRules(dengue, { latencyMs }),
  failing: () => [{ match: { model: 'gen-a' }, replies: [{ fault: '500' }] }],
  humanTurn: () => ({
    predictions: [
      { label: 'Dengue Fever', probability: 0.6, justification: 'fever, joint pain, rash' },
      { label: 'Chikungunya', probability: 0.4, justification: 'joint pain' },
    ],
    arguments: ['The pain behind the eyes points to dengue.'],
    counterArguments: [],
  }),
  demoSetup: (w, datasetId, demo) => ({
    ...evinceFixture.setup(w, datasetId),
    seats: {
      A: { kind: 'llm', model: { connectionId: demo, temperature: 0.2 } },
      B: { kind: 'llm', model: { connectionId: demo, temperature: 1 } },
      moderator: { kind: 'llm', model: { connectionId: demo } },
    },
  }),
}

export default evinceFixture
