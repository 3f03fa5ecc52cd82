import { z } from 'zod'
import { db } from '@/lib/server/db'
import { definePlugin } from '@/lib/server/engine/plugin'

import { type SlotsMessage, toySlots } from './protocol'

/**
 * The toy's plugin: a person's label is the only turn. A run has `slots` repetitions of the dataset
 * (N annotator slots per item), each session's annotator seat claimable by any member who takes part,
 * or named for one person (`annotator`), to show that a named seat stays theirs.
 */
export const toySlotsPlugin = definePlugin(toySlots, {
  agents: {},
  human: {
    input: z.object({ label: z.enum(['yes', 'no']) }),
    toMessage: (_ctx, input: { label: 'yes' | 'no' }) => ({
      message: { seq: 1, sender: 'annotator', kind: 'label', label: input.label } satisfies SlotsMessage,
    }),
  },
  project: (m: SlotsMessage) => ({ receiver: 'annotator', tag: m.kind, prediction: m.label }),
  // The one run-create shape: the annotator seat (claimable, or a named person); repetitions are the slots.
  setup: {
    async plan(_actor, _studyId, input, tools) {
      const ds = await tools.dataset(input.datasetId ?? '')
      return {
        name: input.name,
        task: 'labels',
        datasetId: ds.id,
        config: {},
        seats: input.seats,
        repetitions: input.repetitions,
      }
    },
    snapshot: (row) => row.input,
  },
  views: { session: (ctx) => ({ labelled: ctx.state.messages.length > 0 }) },
  title: (instance) => `item ${instance.text ?? '?'}`,
})

/** A dataset of `n` items in the study, for toy-slots runs; returns its id. */
export async function slotsDataset(studyId: string, n: number): Promise<string> {
  const ds = await db.dataset.create({
    data: {
      studyId,
      name: 'items to label',
      kind: 'generic',
      source: 'inline',
      instances: {
        create: Array.from({ length: n }, (_, index) => ({
          index,
          input: { text: `item ${index + 1}` },
          prediction: '',
          explanation: '',
        })),
      },
    },
  })
  return ds.id
}
