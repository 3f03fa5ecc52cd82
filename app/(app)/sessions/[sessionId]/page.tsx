import type { Metadata } from 'next'
import Link from 'next/link'
import { notFound } from 'next/navigation'
import { cache } from 'react'
import { uiFor } from '@/components/protocols/registry'
import { StatusBadge } from '@/components/runs/status'
import { ClaimSeat } from '@/components/sessions/claim-seat'
import { GuidelinesButton } from '@/components/sessions/guidelines'
import { LivePreview } from '@/components/sessions/live-preview'
import { SeatLease } from '@/components/sessions/seat-lease'
import { SessionOver } from '@/components/sessions/session-over'
import { Alert, Card, PageHeader } from '@/components/ui/card'
import { hasScope } from '@/lib/server/auth/roles'
import { getCurrentSession, requirePage } from '@/lib/server/auth/session'
import { execute } from '@/lib/server/operation'
import { pageData } from '@/lib/server/page-data'
import { getSession, nextSessionFor } from '@/lib/server/services/sessions'

/**
 * The session as the signed-in viewer sees it, loaded once per request: the tab title and the page
 * both read it (it was loaded, replayed and drawn twice per page view).
 */
const viewerSession = cache(async (sessionId: string) => {
  const current = await getCurrentSession()
  return current ? execute(getSession, current.actor, { sessionId }) : null
})

/** The tab names the case (the X-ray, the molecule, the game) and the protocol. */
export async function generateMetadata({ params }: { params: Promise<{ sessionId: string }> }): Promise<Metadata> {
  const { sessionId } = await params
  const r = await viewerSession(sessionId)
  return { title: r?.ok ? `${r.data.title ?? 'Session'} · ${r.data.protocolLabel}` : 'Session' }
}

/**
 * One session of any protocol, for the people in it and the researchers of its study: who fills
 * each seat, the protocol's view of the session, and the protocol's turn form when it is the
 * viewer's turn. "Next session" leads to the oldest session awaiting the viewer.
 */
export default async function SessionPage({ params }: { params: Promise<{ sessionId: string }> }) {
  const { sessionId } = await params
  const { actor } = await requirePage('work:read-own')
  const s = pageData(await viewerSession(sessionId))
  const ui = uiFor(s.protocol)
  if (!ui) notFound()
  // The next session awaiting the viewer; with none, a seat they may claim in this run (claim: true).
  const nextRef = s.done || !s.yourTurn ? await nextSessionFor(actor, s.id) : null
  const next = nextRef?.id ?? null
  const canClaim = hasScope(actor.role, 'work:submit') && s.mySeats.length === 0 && s.claimableSeats.length > 0
  const active = !s.done && s.status !== 'cancelled'
  const Live = ui.LivePreview ?? LivePreview
  const seatLabel = (name: string) => s.seats.find((x) => x.name === name)?.label ?? name
  const waitingFor = s.ask && !s.yourTurn ? s.seats.find((x) => x.name === s.ask?.seat) : null
  // Back to where this session is listed for the viewer: their queue when they sit in it (or may
  // claim a seat), else its run (a researcher or viewer reading the session).
  const backTo =
    s.mySeats.length > 0 || canClaim
      ? { href: '/work', label: 'My work' }
      : s.run && hasScope(actor.role, 'studies:read')
        ? { href: `/runs/${s.run.id}`, label: 'The run' }
        : null
  return (
    <div className="space-y-6">
      <PageHeader
        title={
          <>
            {s.title ?? 'Session'} <StatusBadge status={s.status} />
          </>
        }
        description={
          <>
            <span data-testid="session-protocol">{s.protocolLabel}</span> · {s.study.name}
            {s.run && (
              <>
                {' · '}
                {hasScope(actor.role, 'studies:read') ? (
                  <Link href={`/runs/${s.run.id}`} className="text-brand-700 underline">
                    {s.run.name}: all sessions of this run
                  </Link>
                ) : (
                  s.run.name
                )}
              </>
            )}
            {s.run && hasScope(actor.role, 'work:read-study') && (
              <>
                {' · '}
                <Link href={`/runs/${s.run.id}/sessions/${s.id}`} className="text-brand-700 underline">
                  Inspect
                </Link>
              </>
            )}
          </>
        }
        actions={
          <span className="flex items-center gap-3">
            <GuidelinesButton guidelines={s.study.guidelines} />
            {next && (
              <Link
                href={`/sessions/${next}`}
                className="rounded-md bg-brand-600 px-3 py-1.5 text-sm font-medium text-white"
              >
                {nextRef?.claim ? 'Next (to claim)' : 'Next session'}
              </Link>
            )}
            {backTo && (
              <Link href={backTo.href} className="text-sm text-brand-700 underline">
                ← {backTo.label}
              </Link>
            )}
          </span>
        }
      />
      <Card title="Seats">
        <ul className="flex flex-wrap gap-x-8 gap-y-2 text-sm" aria-label="Seats">
          {s.seats.map((seat) => (
            <li key={seat.name} data-testid={`seat-${seat.name}`}>
              <span className="font-medium">{seat.label}:</span>{' '}
              {s.mySeats.includes(seat.name)
                ? 'you'
                : seat.kind === 'human'
                  ? (seat.person ?? (seat.claimable ? 'open to claim' : 'a person'))
                  : seat.kind === 'llm'
                    ? `LLM ${seat.model ?? ''}`.trim()
                    : seat.kind === 'program'
                      ? `program ${seat.program}`
                      : (seat.kindLabel ?? '—')}
              {canClaim && s.claimableSeats.includes(seat.name) && (
                <span className="ml-2">
                  <ClaimSeat sessionId={s.id} seat={seat.name} label={seat.label} />
                </span>
              )}
            </li>
          ))}
        </ul>
        {s.lease && active && (
          <div className="mt-3">
            <SeatLease sessionId={s.id} until={new Date(s.lease.until).toISOString()} seconds={s.lease.seconds} />
          </div>
        )}
      </Card>
      {s.status === 'stalled' && (
        <Alert>
          {s.stallError ? `Stalled: ${s.stallError}. ` : 'Stalled. '}Nothing was lost; a researcher can retry the
          session
          {s.retryCount ? ` (retried ${s.retryCount}× so far)` : ''}.
        </Alert>
      )}
      {s.status === 'cancelled' && <Alert tone="info">This session was cancelled with its run.</Alert>}
      {s.status === 'waiting' && (
        <Alert tone="info">
          This session starts when the previous session of its repetition ends (its context carries over).
        </Alert>
      )}
      {waitingFor && active && s.status !== 'stalled' && s.status !== 'waiting' && (
        <Alert tone="info">
          Waiting for {waitingFor.label}
          {waitingFor.person ? ` (${waitingFor.person})` : waitingFor.model ? ` (${waitingFor.model})` : ''}; this page
          updates by itself.
        </Alert>
      )}
      <ui.SessionView
        session={s}
        turnForm={s.yourTurn ? <ui.TurnForm session={s} /> : null}
        live={<Live sessionId={s.id} lastSeq={s.messages.at(-1)?.seq ?? 0} active={active} />}
      />
      {s.done && s.mySeats.length > 0 && (
        <Card title="This session is over">
          <SessionOver next={next} claim={nextRef?.claim ?? false} runId={s.run?.id ?? null} />
        </Card>
      )}
      {s.yourTurn && s.ask && s.mySeats.length > 1 && (
        <p className="text-xs text-stone-500">You answer as {seatLabel(s.ask.seat)}.</p>
      )}
    </div>
  )
}
