/**
 * A toy protocol written only for the engine's lineage tests: "walk a binary tree". One seat, the
 * walker (a program), takes `depth` steps, each left or right; the session ends at a leaf. Its
 * scheduler (plugin.ts) forks a finished walk at every turn it did not take until every leaf has been
 * reached, as ReHAC's coverage scheduler grows a trajectory tree. Pure; nothing outside this folder
 * knows it (the tests register its plugin at run time).
 */
import { z } from 'zod'
import { type Ask, type Done, type Protocol, ProtocolError } from '@/lib/protocols/types'

export const treeConfig = z.object({})
export const treeInstance = z.object({ depth: z.number().int().min(1).max(8) })
export const treeMessage = z.object({
  seq: z.number().int().min(1),
  sender: z.literal('walker'),
  kind: z.literal('step'),
  dir: z.enum(['L', 'R']),
})
export type TreeMessage = z.output<typeof treeMessage>
export type TreeInstance = z.output<typeof treeInstance>

export interface TreeState {
  instance: TreeInstance
  messages: TreeMessage[]
}

type TreeAsk = Ask<'walker', string, 'step'>

function next(s: TreeState): TreeAsk | Done<'leaf'> {
  if (s.messages.length >= s.instance.depth) return { done: true, reason: 'leaf' }
  return { done: false, seat: 'walker', j: s.messages.length + 1, kind: 'step' }
}

function apply(s: TreeState, raw: TreeMessage): TreeState {
  const m = treeMessage.parse(raw)
  const ask = next(s)
  if (ask.done) throw new ProtocolError('tree', 'over', 'The walk is at a leaf.')
  if (m.seq !== ask.j) throw new ProtocolError('tree', 'out-of-turn', `Expected step ${ask.j}.`)
  return { ...s, messages: [...s.messages, m] }
}

/** The leaf a walk reached (or the branch so far): its turns as a string, e.g. "LRL". */
export const pathOf = (messages: readonly unknown[]) =>
  messages.map((m) => String((m as { dir?: unknown }).dir)).join('')

export const tree: Protocol<
  z.output<typeof treeConfig>,
  TreeState,
  TreeMessage,
  TreeInstance,
  TreeAsk,
  Done<string>
> = {
  id: 'tree',
  version: '1',
  label: 'Walk a tree (test toy)',
  config: treeConfig,
  message: treeMessage,
  instance: treeInstance,
  seats: [{ name: 'walker', label: 'Walker', kinds: ['program'], programs: ['walk'] }],
  init: (_config, instance) => ({ instance, messages: [] }),
  next,
  apply,
}
