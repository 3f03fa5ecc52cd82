import type { AnyProtocol } from '@/lib/protocols/types'
import type { MessageOf, ProtocolPlugin } from '@/lib/server/engine/plugin'
import type { Seats } from '@/lib/server/engine/seats'

/**
 * A session as a transcript: its messages in order as turns (who, what), what a labelling project
 * over sessions shows an annotator. A protocol may render its own (`views.transcript`, e.g. ReHAC's
 * Thought / Action / Observation per step); every other protocol gets the generic one built from its
 * messages' projections and seat labels. Text is plain text (the page escapes it), bounded here.
 */

/** One turn of a transcript: its number, who spoke (a label, not an id), what was said. */
export interface TranscriptTurn {
  index: number
  who: string
  text: string
}

/** What a protocol's `views.transcript` gets: the session's messages in seq order and its seats. */
export interface TranscriptContext<P extends AnyProtocol = AnyProtocol> {
  messages: Array<{ body: MessageOf<P>; meta?: Record<string, unknown> }>
  seats: Seats
  /** A seat's label as the protocol names it ("Expert", "Agent"); the name itself when unknown. */
  seatLabel(seat: string): string
}

/** The bounds of a transcript (those of a labelling item: turns, a turn's text, a speaker, the whole). */
export const TRANSCRIPT_LIMITS = { turns: 500, turnText: 20_000, who: 100, total: 200_000 } as const

/** The generic transcript: one turn per message, its sender's seat label, its projections as text. */
export function genericTranscript<P extends AnyProtocol>(
  plugin: Pick<ProtocolPlugin<P>, 'project'>,
  ctx: TranscriptContext<P>,
): TranscriptTurn[] {
  return ctx.messages.map((m, index) => {
    const p = plugin.project(m.body, m.meta, ctx.seats)
    const head = [p.label, p.value].filter((x): x is string => typeof x === 'string' && x.trim() !== '')
    const parts = [head.join(': '), p.detail ?? ''].filter((x) => x.trim() !== '')
    const sender = (m.body as { sender?: unknown }).sender
    return {
      index,
      who: typeof sender === 'string' ? ctx.seatLabel(sender) : 'Unknown',
      // A message with no projections still says something: its fields beside seq and sender.
      text: parts.length ? parts.join('\n\n') : bodyText(m.body),
    }
  })
}

function bodyText(body: unknown): string {
  if (!body || typeof body !== 'object') return String(body ?? '')
  const { seq: _s, sender: _f, ...rest } = body as Record<string, unknown>
  return JSON.stringify(rest)
}

/** Control characters other than tab and newline: dropped from every turn. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g

/**
 * A session's transcript: the protocol's own (`views.transcript`) or the generic one, bounded (at most
 * TRANSCRIPT_LIMITS: turns kept from the start, a long text cut with "…", the whole cut to fit) and
 * cleaned of control characters. Numbered from 0 in order.
 */
export async function sessionTranscript<P extends AnyProtocol>(
  plugin: ProtocolPlugin<P>,
  ctx: TranscriptContext<P>,
): Promise<TranscriptTurn[]> {
  const views = await plugin.views()
  const turns = views.transcript ? views.transcript(ctx) : genericTranscript(plugin, ctx)
  return boundTranscript(turns)
}

/** Bounds and cleans turns (see `sessionTranscript`); empty texts become "(nothing)". */
export function boundTranscript(turns: TranscriptTurn[]): TranscriptTurn[] {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s)
  const out: TranscriptTurn[] = []
  let total = 0
  for (const t of turns.slice(0, TRANSCRIPT_LIMITS.turns)) {
    const room = TRANSCRIPT_LIMITS.total - total
    if (room <= 1) break
    const text = cut(t.text.replace(CONTROL, '').trim() || '(nothing)', Math.min(TRANSCRIPT_LIMITS.turnText, room))
    total += text.length
    out.push({
      index: out.length,
      who: cut(t.who.replace(CONTROL, '').trim() || 'Unknown', TRANSCRIPT_LIMITS.who),
      text,
    })
  }
  return out
}

/** A stored session as a transcript: what a labelling item of kind `transcript` is made of. */
export interface SessionTranscript {
  sessionId: string
  protocol: string
  title: string
  turns: TranscriptTurn[]
}

/**
 * The transcripts of stored sessions (in the order asked; ids not found are left out): each through
 * its protocol's plugin, its messages in seq order (the stored bodies, as researchers see them).
 */
export async function loadSessionTranscripts(sessionIds: string[]): Promise<SessionTranscript[]> {
  const [{ db }, { pluginFor, sessionTitle }] = await Promise.all([
    import('@/lib/server/db'),
    import('@/lib/server/engine/plugins'),
  ])
  const rows = await db.protocolSession.findMany({
    where: { id: { in: sessionIds } },
    select: {
      id: true,
      protocol: true,
      task: true,
      position: true,
      instance: true,
      seats: true,
      messages: { orderBy: { seq: 'asc' }, select: { body: true } },
    },
  })
  const byId = new Map(rows.map((r) => [r.id, r]))
  const out: SessionTranscript[] = []
  for (const sessionId of sessionIds) {
    const r = byId.get(sessionId)
    if (!r) continue
    const plugin = await pluginFor(r.protocol)
    const seats = (r.seats ?? {}) as Seats
    const turns = await sessionTranscript(plugin, {
      messages: r.messages.map((m) => ({ body: m.body as MessageOf<AnyProtocol> })),
      seats,
      seatLabel: (s) => plugin.protocol.seats.find((d) => d.name === s)?.label ?? s,
    })
    const title = sessionTitle(plugin, r.instance, r.task) ?? `#${r.position + 1}`
    out.push({ sessionId, protocol: r.protocol, title: `${plugin.protocol.label}: ${title}`.slice(0, 300), turns })
  }
  return out
}
