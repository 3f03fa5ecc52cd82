import { z } from 'zod'
import { db } from '@/lib/server/db'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import type { Seats } from '@/lib/server/engine/seats'
import { type SlotsMessage, type SlotsState, toySlots } from './protocol'

/**
 * The toy's plugin: a person's label is the only turn. A run has `slots` repetitions of the dataset
 * (N annotator slots per item), each session's annotator seat claimable by any member who takes part,
 * or named for one person (`annotator`), to show that a named seat stays theirs.
 */
export const toySlotsPlugin: ProtocolPlugin<typeof toySlots> = {
  protocol: toySlots,
  agents: {},
  human: {
    input: z.object({ label: z.enum(['yes', 'no']) }),
    toMessage: (_ctx, input: { label: 'yes' | 'no' }) => ({
      message: { seq: 1, sender: 'annotator', kind: 'label', label: input.label } satisfies SlotsMessage,
    }),
  },
  project: (m: SlotsMessage) => ({ receiver: 'annotator', tag: m.kind, prediction: m.label }),
  setup: {
    input: z.object({
      studyId: z.string(),
      name: z.string().min(1),
      datasetId: z.string(),
      slots: z.number().int().min(1).max(10),
      /** A person named for every annotator seat instead of claimable seats. */
      annotator: z.string().optional(),
    }),
    async plan(_actor, _studyId, input, tools) {
      const seats: Seats = {
        annotator: input.annotator
          ? { kind: 'human', userId: input.annotator, claimable: false }
          : { kind: 'human', claimable: true },
      }
      await tools.dataset(input.datasetId)
      return {
        name: input.name,
        task: 'labels',
        datasetId: input.datasetId,
        config: {},
        seats,
        repetitions: input.slots,
      }
    },
    snapshot: (row) => row.input,
  },
  views: { session: (ctx) => ({ labelled: (ctx.state as SlotsState).messages.length > 0 }) },
  title: (instance) => `item ${(instance as { text?: string })?.text ?? '?'}`,
}

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
