/**
 * A toy protocol for the seat-lease suite (tests/engine/leases.test.ts): "label the item". One seat,
 * an annotator (a person), answers once with a label; then the session is done. A run gives each item
 * N such sessions (its repetitions: N annotator slots per item), each with a claimable seat. Pure,
 * like every protocol; nothing outside this folder knows it (the suite registers its plugin).
 */
import { z } from 'zod'
import { type Ask, type Done, type Protocol, ProtocolError } from '@/lib/protocols/types'

export const slotsConfig = z.object({})
export const slotsInstance = z.object({ text: z.string().min(1).max(200) })
export const slotsMessage = z.object({
  seq: z.literal(1),
  sender: z.literal('annotator'),
  kind: z.literal('label'),
  label: z.enum(['yes', 'no']),
})
export type SlotsMessage = z.output<typeof slotsMessage>

export interface SlotsState {
  instance: z.output<typeof slotsInstance>
  messages: SlotsMessage[]
}

type SlotsAsk = Ask<'annotator', string, 'label'>

function next(s: SlotsState): SlotsAsk | Done<'labelled'> {
  return s.messages.length
    ? { done: true, reason: 'labelled' }
    : { done: false, seat: 'annotator', j: 1, kind: 'label' }
}

function apply(s: SlotsState, raw: SlotsMessage): SlotsState {
  const m = slotsMessage.parse(raw)
  if (next(s).done) throw new ProtocolError('toy-slots', 'over', 'The item is labelled.')
  return { ...s, messages: [...s.messages, m] }
}

export const toySlots: Protocol<
  z.output<typeof slotsConfig>,
  SlotsState,
  SlotsMessage,
  z.output<typeof slotsInstance>,
  SlotsAsk,
  Done<string>
> = {
  id: 'toy-slots',
  version: '1',
  label: 'Label the item (test toy)',
  config: slotsConfig,
  message: slotsMessage,
  instance: slotsInstance,
  seats: [{ name: 'annotator', label: 'Annotator', kinds: ['human'] }],
  init: (_config, instance) => ({ instance, messages: [] }),
  next,
  apply,
}
