/**
 * A toy protocol for the agent runtime's tests (tests/engine/runtime.test.ts): a program seat, the
 * runner, writes `steps` messages, each the output of a real child process it runs through `ctx.exec`.
 * Pure, like every protocol; nothing outside this folder knows it (the tests register its plugin).
 */
import { z } from 'zod'
import { type Ask, type Done, type Protocol, ProtocolError } from '@/lib/protocols/types'

export const execConfig = z.object({ steps: z.number().int().min(1).max(20).default(3) })
export const execInstance = z.object({ label: z.string() })
export const execMessage = z.object({
  seq: z.number().int().min(1),
  sender: z.literal('runner'),
  kind: z.literal('ran'),
  /** What the program printed. */
  output: z.unknown(),
})
export type ExecMessage = z.output<typeof execMessage>
export type ExecConfig = z.output<typeof execConfig>
export type ExecInstance = z.output<typeof execInstance>

export interface ExecState {
  config: ExecConfig
  messages: ExecMessage[]
}

type ExecAsk = Ask<'runner', string, 'ran'>

function next(s: ExecState): ExecAsk | Done<'finished'> {
  if (s.messages.length >= s.config.steps) return { done: true, reason: 'finished' }
  return { done: false, seat: 'runner', j: s.messages.length + 1, kind: 'ran' }
}

function apply(s: ExecState, raw: ExecMessage): ExecState {
  const m = execMessage.parse(raw)
  const ask = next(s)
  if (ask.done) throw new ProtocolError('toy-exec', 'over', 'The session is over.')
  if (m.seq !== ask.j) throw new ProtocolError('toy-exec', 'out-of-turn', `Expected message ${ask.j}.`)
  return { ...s, messages: [...s.messages, m] }
}

export const toyExec: Protocol<ExecConfig, ExecState, ExecMessage, ExecInstance, ExecAsk, Done<string>> = {
  id: 'toy-exec',
  version: '1',
  label: 'Run a program (test toy)',
  config: execConfig,
  message: execMessage,
  instance: execInstance,
  seats: [{ name: 'runner', label: 'Runner', kinds: ['program'], programs: ['tick'] }],
  init: (config) => ({ config, messages: [] }),
  next,
  apply,
}
