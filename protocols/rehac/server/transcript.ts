import type { TranscriptContext, TranscriptTurn } from '@/lib/server/sdk'
import type { rehac } from '@/protocols/rehac/core/protocol'
import { renderAction } from '@/protocols/rehac/core/trajectory'

/**
 * A ReHAC episode as a transcript (annotators labelling collaboration trajectories): per step, who
 * acted (Agent or Human) with its Thought and Action, then the Environment's Observation. The
 * decider's choice is not a turn of its own: the actor's name says it.
 */
export function rehacTranscript(ctx: TranscriptContext<typeof rehac>): TranscriptTurn[] {
  const turns: TranscriptTurn[] = []
  for (const { body: m } of ctx.messages) {
    if (m.kind === 'decide') continue
    if (m.kind === 'step') {
      const lines = [m.thought ? `Thought ${m.t}: ${m.thought}` : null, `Action ${m.t}: ${renderAction(m.action)}`]
      turns.push({
        index: turns.length,
        who: m.sender === 'human' ? 'Human' : 'Agent',
        text: lines.filter((l): l is string => l !== null).join('\n'),
      })
    } else {
      turns.push({
        index: turns.length,
        who: 'Environment',
        text: `Observation ${m.t}: ${m.text}${m.finished ? '\n(The episode ends here.)' : ''}`,
      })
    }
  }
  return turns
}
