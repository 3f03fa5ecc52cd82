import { describe, expect, it } from 'vitest'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import type { Seats } from '@/lib/server/engine/seats'
import { evincePlugin } from '@/protocols/evince/server/plugin'
import { pxpPlugin } from '@/protocols/pxp/server/plugin'
import { scorekeepingPlugin } from '@/protocols/scorekeeping/server/plugin'
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

/** The other protocols: PXP and scorekeeping read acceptably through the fallback; EVINCE has its own. */
const ctxOf = (plugin: ProtocolPlugin, messages: unknown[]) => ({
  messages: messages.map((m) => ({ body: plugin.protocol.message.parse(m) })),
  seats: {} as Seats,
  seatLabel: (s: string) => plugin.protocol.seats.find((d) => d.name === s)?.label ?? s,
})

describe('PXP, scorekeeping and EVINCE sessions as transcripts', () => {
  it('PXP (fallback): Machine / Tester, tag: prediction, then the explanation', async () => {
    const turns = await sessionTranscript(
      pxpPlugin,
      ctxOf(pxpPlugin, [
        { seq: 1, sender: 'm', tag: 'INIT', prediction: 'pneumonia', explanation: 'Opacity in the lower lobe.' },
        { seq: 2, sender: 'h', tag: 'REFUTE', prediction: 'normal', explanation: 'The opacity is a nipple shadow.' },
      ]),
    )
    expect(turns).toEqual([
      { index: 0, who: 'Machine', text: 'INIT: pneumonia\n\nOpacity in the lower lobe.' },
      { index: 1, who: 'Tester', text: 'REFUTE: normal\n\nThe opacity is a nipple shadow.' },
    ])
  })

  it('scorekeeping (fallback): the seat label and kind: text', async () => {
    const turns = await sessionTranscript(
      scorekeepingPlugin,
      ctxOf(scorekeepingPlugin, [
        { seq: 1, sender: 'questioner', kind: 'request', round: 1, slot: 'departure', text: 'DEPARTURE: Where from?' },
        { seq: 2, sender: 'answerer', kind: 'answer', round: 1, text: 'ANSWER: Lisbon' },
      ]),
    )
    expect(turns).toEqual([
      { index: 0, who: 'Questioner (game master)', text: 'request: DEPARTURE: Where from?' },
      { index: 1, who: 'Answerer', text: 'answer: ANSWER: Lisbon' },
    ])
  })

  it('EVINCE (its own): diagnoses with probabilities, arguments, the critique and the report', async () => {
    const turns = await sessionTranscript(
      evincePlugin,
      ctxOf(evincePlugin, [
        {
          seq: 1,
          kind: 'turn',
          sender: 'A',
          round: 1,
          predictions: [
            { label: 'Hepatitis', probability: 0.7 },
            { label: 'Gallstones', probability: 0.3 },
          ],
          arguments: ['Jaundice and raised ALT.'],
        },
        {
          seq: 2,
          kind: 'crit',
          sender: 'moderator',
          round: 1,
          target: 'A',
          score: 0.8,
          reasons: [{ reason: 'ALT fits', validity: 8, credibility: 7 }],
        },
        { seq: 3, kind: 'report', sender: 'moderator', conclusion: 'Hepatitis', labTests: ['Hepatitis serology'] },
      ]),
    )
    expect(turns).toEqual([
      {
        index: 0,
        who: 'Debater A',
        text: 'Round 1: Hepatitis (70%), Gallstones (30%)\nArguments:\n- Jaundice and raised ALT.',
      },
      {
        index: 1,
        who: evincePlugin.protocol.seats.find((d) => d.name === 'moderator')?.label,
        text: 'Round 1, critique of Debater A: score 0.80\nReasons:\n- ALT fits (validity 8, credibility 7)',
      },
      {
        index: 2,
        who: evincePlugin.protocol.seats.find((d) => d.name === 'moderator')?.label,
        text: 'Conclusion: Hepatitis\nLab tests:\n- Hepatitis serology',
      },
    ])
  })
})
