import { db } from '@/lib/server/db'
import type { ContractFixture } from '../../tests/engine/fixtures/types'

const SMILES = ['CCO', 'CCN', 'CCC', 'CCCl', 'CCBr', 'CCS', 'COC', 'CC=O', 'CCCO', 'CCCN']

/** DRUG sessions whose generator is always wrong, so every session runs to its bound or a REJECT. */
export const pxpFixture: ContractFixture = {
  async dataset(w, n) {
    const ds = await db.dataset.create({
      data: {
        studyId: w.studyId,
        name: 'contract drug',
        kind: 'drug',
        source: 'inline',
        instances: {
          create: Array.from({ length: n }, (_, index) => {
            const s = SMILES[index % SMILES.length] as string
            return { index, input: { smiles: `${s}C(=O)OC` }, prediction: `${s}.OC`, explanation: `Ester of ${s}.` }
          }),
        },
      },
    })
    return ds.id
  },
  // The one create-run shape: the machine is the generator with the AGREE checker, the tester the proxy.
  setup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    seats: {
      m: {
        kind: 'llm',
        model: { connectionId: w.connectionId, model: 'gen' },
        helpers: { checker: { connectionId: w.connectionId, model: 'judge' } },
      },
      h: { kind: 'proxy', helpers: { checker: { connectionId: w.connectionId, model: 'judge' } } },
    },
    config: { n: 4, k: 2 },
    options: { carryOver: false },
  }),
  humanSetup: (w, datasetId) => {
    const setup = pxpFixture.setup(w, datasetId) as { seats: Record<string, unknown> }
    return { ...setup, seats: { ...setup.seats, h: { kind: 'human', userId: w.expert.userId } } }
  },
  script: (latencyMs = 20) => [
    { match: { model: 'gen' }, replies: [{ text: 'Prediction: O\nPathway: Water.', latencyMs }] },
    { match: { model: 'judge' }, replies: [{ text: 'No', latencyMs }] },
  ],
  failing: () => [{ match: { model: 'gen' }, replies: [{ fault: '500' }] }],
  humanTurn: () => ({
    matchPrev: 'false',
    agreePrev: 'false',
    prediction: 'CCO.OC',
    explanation: 'An esterification of the acid with methanol.',
  }),
  demoSetup: (w, datasetId, demo) => ({
    ...pxpFixture.setup(w, datasetId),
    seats: {
      m: { kind: 'llm', model: { connectionId: demo }, helpers: { checker: { connectionId: demo } } },
      h: { kind: 'proxy', helpers: { checker: { connectionId: demo } } },
    },
    config: { n: 10, k: 3 },
  }),
}

export default pxpFixture
