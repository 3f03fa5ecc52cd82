import type { Metadata } from 'next'
import Link from 'next/link'
import { ClaimSeat } from '@/components/sessions/claim-seat'
import { Badge, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { myQueue, QUEUE_FILTERS } from '@/lib/server/services/sessions'

export const metadata: Metadata = { title: 'My work' }

/** Columns a phone leaves out (the session's cell names its protocol, seat and study there instead). */
const WIDE = 'hidden md:table-cell'

const GROUPS: Record<(typeof QUEUE_FILTERS)[number], [string, 'amber' | 'brand' | 'red' | 'green' | 'stone']> = {
  yours: ['awaiting you', 'amber'],
  claimable: ['open to claim', 'brand'],
  others: ['in progress', 'stone'],
  waiting: ['waiting', 'stone'],
  stalled: ['stalled', 'red'],
  done: ['done', 'green'],
}

/**
 * One queue for a person across protocols: every session whose turn is theirs (oldest first), seats
 * they may claim, their other sessions. A researcher gives someone work by naming them on a run's
 * seats (at the run's creation, or later from the study page); it shows here like any other seat.
 */
export default async function WorkPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const params = await flatParams(searchParams)
  const filter = QUEUE_FILTERS.find((f) => f === params.queue)
  // `pageSize` (1–100, default 20) is checked by the operation's input, like `page`.
  const queue = await loadForPage(myQueue, { page: params.page, pageSize: params.pageSize, filter })
  const allCount = Object.values(queue.counts).reduce((a, b) => a + b, 0)
  const tab = (value: string | undefined) => {
    const q = new URLSearchParams()
    if (value) q.set('queue', value)
    return `/work${q.size ? `?${q}` : ''}`
  }
  return (
    <>
      <PageHeader
        title="My work"
        description="Sessions waiting for you in every study and protocol, oldest first, and seats you may claim. Only you see your queue."
        actions={
          queue.next ? (
            <Link
              href={`/sessions/${queue.next}`}
              className="rounded-md bg-brand-600 px-3 py-1.5 text-sm font-medium text-white"
            >
              Next session
            </Link>
          ) : undefined
        }
      />
      <section aria-labelledby="queue-heading" className="mb-8">
        <h2 id="queue-heading" className="mb-2 text-lg font-semibold">
          Sessions
        </h2>
        <nav aria-label="Filter sessions" className="mb-3 flex flex-wrap gap-2 text-sm">
          <Link
            href={tab(undefined)}
            aria-current={!filter ? 'page' : undefined}
            className="rounded-full border border-stone-300 bg-white px-3 py-1 aria-[current=page]:border-brand-600 aria-[current=page]:text-brand-700"
          >
            All ({allCount})
          </Link>
          {QUEUE_FILTERS.map((f) => (
            <Link
              key={f}
              href={tab(f)}
              aria-current={filter === f ? 'page' : undefined}
              data-testid={`queue-${f}`}
              className="rounded-full border border-stone-300 bg-white px-3 py-1 aria-[current=page]:border-brand-600 aria-[current=page]:text-brand-700"
            >
              {GROUPS[f][0]} ({queue.counts[f]})
            </Link>
          ))}
        </nav>
        {queue.total === 0 ? (
          <EmptyState title={filter ? 'No sessions here.' : 'No sessions for you right now.'}>
            When a researcher starts a run with you in a seat, or names you on seats of a run, your sessions appear
            here.
          </EmptyState>
        ) : (
          <>
            <Table
              caption="Your sessions"
              head={[
                'Session',
                ...['Protocol', 'Your seat', 'Study'].map((label) => ({ label, className: WIDE })),
                'State',
                ...['Messages', 'Updated'].map((label) => ({ label, className: WIDE })),
              ]}
            >
              {queue.items.map((s) => {
                const [label, tone] = GROUPS[s.grp as keyof typeof GROUPS] ?? [s.status, 'stone']
                return (
                  <tr key={`${s.id}-${s.seat}`} data-session-id={s.id}>
                    <Td>
                      {s.grp === 'claimable' ? (
                        <span className="flex flex-col items-start gap-1">
                          <span className="font-medium">{s.title}</span>
                          <ClaimSeat sessionId={s.id} seat={s.seat} label={s.seatLabel} open />
                        </span>
                      ) : (
                        <Link href={`/sessions/${s.id}`} className="font-medium text-brand-700 underline">
                          {s.title}
                        </Link>
                      )}
                      {s.runName && (
                        <span className="block text-xs text-stone-500">
                          {s.runName} · #{s.position + 1}
                          {s.repetition > 1 ? ` (rep. ${s.repetition})` : ''}
                          {s.runMine ? (
                            <span data-testid="run-progress">
                              {' '}
                              · {s.runDone} of {s.runMine} done
                            </span>
                          ) : null}
                        </span>
                      )}
                      <span className="block text-xs text-stone-500 md:hidden">
                        {s.protocolLabel} · {s.seatLabel} · {s.studyName}
                      </span>
                    </Td>
                    <Td className={WIDE}>{s.protocolLabel}</Td>
                    <Td className={WIDE}>{s.seatLabel}</Td>
                    <Td className={WIDE}>{s.studyName}</Td>
                    <Td>
                      <Badge tone={tone}>{label}</Badge>
                      {s.waitingFor && (
                        <span className="mt-1 block text-xs text-stone-600" data-testid="waiting-for">
                          for {s.waitingFor.mine ? 'your session ' : 'session '}
                          {s.waitingFor.mine ? (
                            <Link href={`/sessions/${s.waitingFor.id}`} className="text-brand-700 underline">
                              {s.waitingFor.title}
                            </Link>
                          ) : (
                            `#${s.waitingFor.position + 1}`
                          )}
                          {s.waitingFor.yours
                            ? ' (your turn there)'
                            : s.waitingFor.status === 'stalled'
                              ? ' (stalled)'
                              : ' to finish'}
                        </span>
                      )}
                    </Td>
                    <Td className={WIDE}>{s.messages}</Td>
                    <Td className={`whitespace-nowrap text-stone-500 ${WIDE}`}>{formatDate(s.updatedAt)}</Td>
                  </tr>
                )
              })}
            </Table>
            <Pagination {...queue} params={params} basePath="/work" />
          </>
        )}
      </section>
    </>
  )
}
