import type { Prisma } from '@/lib/generated/prisma/client'
import { db } from '@/lib/server/db'
import type { LabelItem } from '@/protocols/labelling/core'
import type { ContractFixture } from '../../tests/engine/fixtures/types'

/**
 * Short query–document items written by us (a few lines each), with a gold grade kept in the
 * instance's prediction as the import keeps it. The labelling seat's LLM agent is the LLM labeller
 * (server/llm-labeller.ts); the machine set-ups below name it, so the cases that run a model need it wired.
 */
export const FIXTURE_ITEMS: Array<LabelItem & { gold: number }> = [
  {
    kind: 'query-doc',
    id: 'q1-d1',
    topicId: 'q1',
    query: 'how do bees make honey',
    description: 'How nectar becomes honey in a hive.',
    docId: 'd1',
    document:
      'Forager bees carry nectar to the hive, where house bees pass it mouth to mouth and fan it with their wings until most of the water has gone; the ripe honey is capped with wax.',
    gold: 2,
  },
  {
    kind: 'query-doc',
    id: 'q1-d2',
    topicId: 'q1',
    query: 'how do bees make honey',
    docId: 'd2',
    document: 'A recipe for honey cake: flour, eggs, butter and 200 g of honey; bake for forty minutes.',
    gold: 0,
  },
  {
    kind: 'query-doc',
    id: 'q2-d3',
    topicId: 'q2',
    query: 'tide times explained',
    docId: 'd3',
    document:
      'Tides rise and fall twice a day mostly because of the Moon; the times shift by about fifty minutes each day.',
    gold: 2,
  },
  {
    kind: 'query-doc',
    id: 'q2-d4',
    topicId: 'q2',
    query: 'tide times explained',
    docId: 'd4',
    document: 'Our harbour café opens at high tide and serves fish soup. The Moon is also mentioned in our menu.',
    gold: 1,
  },
  {
    kind: 'query-doc',
    id: 'q3-d5',
    topicId: 'q3',
    query: 'why is the sky blue',
    docId: 'd5',
    document: 'Sunlight is scattered by the molecules of the air, and blue light is scattered more than red.',
    gold: 2,
  },
]

/** A `labelling-items` dataset of the first n fixture items (cycling), gold in the prediction. */
export async function labellingDataset(studyId: string, n: number, name = 'contract items'): Promise<string> {
  const ds = await db.dataset.create({
    data: {
      studyId,
      name,
      kind: 'labelling-items',
      source: 'inline',
      instances: {
        create: Array.from({ length: n }, (_, index) => {
          const { gold, ...base } = FIXTURE_ITEMS[index % FIXTURE_ITEMS.length] as LabelItem & { gold: number }
          const item = { ...base, id: n > FIXTURE_ITEMS.length ? `${base.id}-${index}` : base.id }
          return {
            index,
            input: item as unknown as Prisma.InputJsonValue,
            prediction: JSON.stringify(gold),
            explanation: '',
            meta: { itemId: item.id, kind: item.kind },
          }
        }),
      },
    },
  })
  return ds.id
}

export const labellingFixture: ContractFixture = {
  dataset: (w, n) => labellingDataset(w.studyId, n),
  setup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    config: { preset: 'relevance-0-2' },
    seats: { annotator: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } } },
  }),
  humanSetup: (w, datasetId) => ({
    name: 'contract',
    datasetId,
    config: { preset: 'relevance-0-2' },
    seats: { annotator: { kind: 'human', userId: w.expert.userId } },
  }),
  // The LLM labeller's reply format is its own; a JSON array of the overall grade serves its parser.
  script: (latencyMs = 20) => [{ match: { model: 'gen' }, replies: [{ text: '[{"O": 1}]', latencyMs }] }],
  // The fixture's items are query–document pairs: no transcript, so no per-turn labels.
  emptyTables: ['turn-labels'],
  failing: () => [{ match: { model: 'gen' }, replies: [{ fault: '500' }] }],
  humanTurn: (s) => {
    const v = s.view as { schema: { questions: Array<{ id: string; options: Array<{ value: number | string }> }> } }
    return { answers: Object.fromEntries(v.schema.questions.map((q) => [q.id, q.options[0]?.value])), elapsedMs: 1200 }
  },
  demoSetup: (_w, datasetId, demo) => ({
    name: 'demo',
    datasetId,
    config: { preset: 'relevance-0-2' },
    seats: { annotator: { kind: 'llm', model: { connectionId: demo } } },
  }),
}

export default labellingFixture
