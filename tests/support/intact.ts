import { expect } from 'vitest'
import { replay } from '@/lib/protocols/types'
import { db } from '@/lib/server/db'
import { pluginFor } from '@/lib/server/engine/plugins'

/** Every session's log replays through its protocol to Done, j = 1..N with no gap, one C row per M row. */
export async function expectIntact(runId: string) {
  const sessions = await db.protocolSession.findMany({
    where: { runId: runId },
    include: { messages: { orderBy: { seq: 'asc' } }, contexts: { orderBy: { seq: 'asc' } } },
  })
  for (const s of sessions) {
    expect(s.status).toBe('done')
    const seqs = s.messages.map((m) => m.seq)
    expect(seqs).toEqual(seqs.map((_, i) => i + 1))
    expect(s.contexts.map((c) => c.seq)).toEqual(seqs)
    const plugin = await pluginFor(s.protocol)
    const config = plugin.sessionConfig
      ? plugin.sessionConfig(s.config, s.task).config
      : plugin.protocol.config.parse(s.config)
    const state = replay(
      plugin.protocol,
      config,
      plugin.protocol.instance.parse(s.instance),
      s.messages.map((m) => m.body),
    )
    const end = plugin.protocol.next(state) as { done: boolean; reason?: string }
    expect(end.done).toBe(true)
    expect(s.stopReason).toBe(end.reason)
  }
  return sessions
}
