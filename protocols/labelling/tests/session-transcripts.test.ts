import { describe, expect, it } from 'vitest'
import type { Seats } from '@/lib/server/engine/seats'
import { genericTranscript, sessionTranscript } from '@/lib/server/engine/transcript'
import { type RehacMessage, rehacMessage } from '@/protocols/rehac/core/protocol'
import { rehacPlugin } from '@/protocols/rehac/server/plugin'

/**
 * A ReHAC episode as annotators read it: Thought / Action per step by Agent or Human, then the
 * Environment's Observation; the decider's choice is no turn of its own. The generic fallback on the
 * same messages is shown too, to see what the override adds.
 */
const episode: RehacMessage[] = [
  { seq: 1, sender: 'decider', kind: 'decide', t: 1, solver: 'agent', pHuman: 0.2 },
  {
    seq: 2,
    sender: 'agent',
    kind: 'step',
    t: 1,
    thought: 'I need the birth year of the author.',
    action: { type: 'search', arg: 'Ada Lovelace' },
    suggestion: null,
    ms: null,
  },
  { seq: 3, sender: 'environment', kind: 'observation', t: 1, text: 'Ada Lovelace (1815–1852) was …', finished: false },
  { seq: 4, sender: 'decider', kind: 'decide', t: 2, solver: 'human', pHuman: 0.9 },
  {
    seq: 5,
    sender: 'human',
    kind: 'step',
    t: 2,
    thought: null,
    action: { type: 'finish', arg: '1815' },
    suggestion: 'opened',
    ms: 4200,
  },
  { seq: 6, sender: 'environment', kind: 'observation', t: 2, text: 'Episode finished, reward = 1', finished: true },
].map((m) => rehacMessage.parse(m))
const ctx = {
  messages: episode.map((body) => ({ body })),
  seats: {} as Seats,
  seatLabel: (s: string) => rehacPlugin.protocol.seats.find((d) => d.name === s)?.label ?? s,
}

describe('a ReHAC episode as a transcript', () => {
  it('Agent / Human with Thought and Action, Environment with the Observation; no decider turns', async () => {
    expect(await sessionTranscript(rehacPlugin, ctx)).toEqual([
      {
        index: 0,
        who: 'Agent',
        text: 'Thought 1: I need the birth year of the author.\nAction 1: Search[Ada Lovelace]',
      },
      { index: 1, who: 'Environment', text: 'Observation 1: Ada Lovelace (1815–1852) was …' },
      { index: 2, who: 'Human', text: 'Action 2: Finish[1815]' },
      { index: 3, who: 'Environment', text: 'Observation 2: Episode finished, reward = 1\n(The episode ends here.)' },
    ])
  })

  it('the generic fallback would show every message, the decider’s too, as kind: choice', () => {
    const generic = genericTranscript(rehacPlugin, ctx)
    expect(generic).toHaveLength(6)
    expect(generic[0]?.text).toBe('decide: agent')
    expect(generic[1]?.text).toBe('search: Ada Lovelace\n\nI need the birth year of the author.')
  })
})
