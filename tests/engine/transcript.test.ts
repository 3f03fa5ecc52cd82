import { describe, expect, it } from 'vitest'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import type { Seats } from '@/lib/server/engine/seats'
import {
  boundTranscript,
  sessionTranscript,
  TRANSCRIPT_LIMITS,
  type TranscriptContext,
} from '@/lib/server/engine/transcript'
import type { ToyMessage } from './toy/protocol'
import { toyPlugin } from './toy/plugin'

/**
 * The transcript contract: any session is a transcript (one turn per message, who = the sender's
 * seat label, text = its projections) unless its protocol renders its own (`views.transcript`), and
 * every transcript is bounded and cleaned the same way.
 */
const game: ToyMessage[] = [
  { seq: 1, sender: 'guesser', kind: 'guess', value: 50 },
  { seq: 2, sender: 'oracle', kind: 'hint', hint: 'higher' },
  { seq: 3, sender: 'guesser', kind: 'guess', value: 75 },
]
const seats = {} as Seats
const ctx = (messages: ToyMessage[]): TranscriptContext => ({
  messages: messages.map((body) => ({ body })),
  seats,
  seatLabel: (s) => toyPlugin.protocol.seats.find((d) => d.name === s)?.label ?? s,
})
// The toy with projections as most protocols write them (label, value, detail).
const projected: ProtocolPlugin = {
  ...toyPlugin,
  project: (m: ToyMessage) => ({
    receiver: m.sender === 'guesser' ? 'oracle' : 'guesser',
    label: m.kind,
    value: m.kind === 'guess' ? String(m.value) : m.hint,
    detail: m.kind === 'hint' ? 'The oracle compares the guess with the number.' : null,
  }),
}

describe('a session as a transcript', () => {
  it('falls back to the projections: one turn per message, the seat label, label: value then detail', async () => {
    expect(await sessionTranscript(projected, ctx(game))).toEqual([
      { index: 0, who: 'Guesser', text: 'guess: 50' },
      { index: 1, who: 'Oracle', text: 'hint: higher\n\nThe oracle compares the guess with the number.' },
      { index: 2, who: 'Guesser', text: 'guess: 75' },
    ])
  })

  it('a message without projections still shows its fields (beside seq and sender)', async () => {
    const bare: ProtocolPlugin = { ...toyPlugin, project: () => ({ receiver: 'oracle' }) }
    const turns = await sessionTranscript(bare, ctx(game.slice(0, 2)))
    expect(turns.map((t) => t.text)).toEqual(['{"kind":"guess","value":50}', '{"kind":"hint","hint":"higher"}'])
  })

  it('a protocol’s own rendering wins over the fallback', async () => {
    const own: ProtocolPlugin = {
      ...projected,
      views: async () => ({
        session: () => null,
        transcript: (c) =>
          c.messages.map((m, i) => ({
            index: i,
            who: m.body.sender === 'guesser' ? 'Player' : 'Game',
            text: m.body.kind === 'guess' ? `I guess ${m.body.value}.` : `Go ${m.body.hint}.`,
          })),
      }),
    }
    expect(await sessionTranscript(own, ctx(game))).toEqual([
      { index: 0, who: 'Player', text: 'I guess 50.' },
      { index: 1, who: 'Game', text: 'Go higher.' },
      { index: 2, who: 'Player', text: 'I guess 75.' },
    ])
  })

  it('bounds and cleans every transcript: turns, text length, control characters, empty text', () => {
    const many = Array.from({ length: TRANSCRIPT_LIMITS.turns + 10 }, (_, i) => ({ index: i, who: 'A', text: 'x' }))
    expect(boundTranscript(many)).toHaveLength(TRANSCRIPT_LIMITS.turns)
    const [long] = boundTranscript([{ index: 7, who: 'A', text: 'y'.repeat(TRANSCRIPT_LIMITS.turnText + 5) }])
    expect(long?.text).toHaveLength(TRANSCRIPT_LIMITS.turnText)
    expect(long?.text.endsWith('…')).toBe(true)
    expect(long?.index).toBe(0)
    expect(boundTranscript([{ index: 0, who: '\u0007', text: 'a\u0000b\n<b>c</b>' }])).toEqual([
      { index: 0, who: 'Unknown', text: 'ab\n<b>c</b>' },
    ])
    expect(boundTranscript([{ index: 0, who: 'A', text: '   ' }])[0]?.text).toBe('(nothing)')
    // The whole is bounded too: 20 turns of the longest text fit 10 (the total), the last cut.
    const big = Array.from({ length: 20 }, (_, i) => ({
      index: i,
      who: 'A',
      text: 'z'.repeat(TRANSCRIPT_LIMITS.turnText),
    }))
    const kept = boundTranscript(big)
    expect(kept.reduce((n, t) => n + t.text.length, 0)).toBeLessThanOrEqual(TRANSCRIPT_LIMITS.total)
    expect(kept).toHaveLength(TRANSCRIPT_LIMITS.total / TRANSCRIPT_LIMITS.turnText)
  })
})
