import { db } from '@/lib/server/db'
import { redirect } from 'next/navigation'
import type { Metadata } from 'next'
import Link from 'next/link'
import { LiveRefresh } from '@/components/live/live-refresh'
import { RetryButton, RunControls } from '@/components/experiments/run-controls'
import { PreparingNotice, StatusBadge } from '@/components/experiments/status'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { hasScope } from '@/lib/server/auth/roles'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { getExperiment, SESSION_STATUSES } from '@/lib/server/services/experiment-views'

export const metadata: Metadata = { title: 'Experiment' }

const usd = (v: number) => `$${v.toFixed(v < 0.01 ? 6 : 4)}`

function seatLabel(seat: unknown): string {
  const s = seat as { kind?: string; generator?: { model?: string }; userId?: string } | undefined
  if (!s?.kind) return '—'
  if (s.kind === 'llm') return `LLM${s.generator?.model ? ` (${s.generator.model})` : ''}`
  if (s.kind === 'proxy') return 'Proxy over the ground truth'
  if (s.kind === 'human') return 'Assigned experts'
  return s.kind
}

export default async function ExperimentPage({
  params,
  searchParams,
}: {
  params: Promise<{ experimentId: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { experimentId } = await params
  const { actor } = await requirePage('studies:read')
  const sp = await flatParams(searchParams)
  // EVINCE runs are experiments too; their pages are the debate pages.
  const kind = await db.experiment.findUnique({ where: { id: experimentId }, select: { protocol: true } })
  if (kind?.protocol === 'evince') redirect(`/debates/${experimentId}`)
  const { experiment, access, dataset, counts, sessions } = await loadForPage(getExperiment, {
    experimentId,
    page: sp.page,
    status: sp.status || undefined,
    repetition: sp.repetition || undefined,
  })
  const canInspect = hasScope(actor.role, 'work:read-study')
  // Running is write access: the account's scope and the study role (viewers of the study only read).
  const canRun = hasScope(actor.role, 'studies:update') && access.includes('write')
  const config = experiment.config as { n?: number; k?: number }
  const seats = experiment.seats as { m?: unknown; h?: unknown }
  const pct = counts.total ? Math.round((100 * counts.done) / counts.total) : 0
  const live = experiment.status === 'running' && counts.done < counts.total
  return (
    <>
      <PageHeader
        title={
          <>
            {experiment.name} <StatusBadge status={experiment.status} />
          </>
        }
        description={
          <>
            {experiment.protocol.toUpperCase()} over{' '}
            {dataset ? (
              <Link href={`/datasets/${dataset.id}`} className="text-brand-700 hover:underline">
                {dataset.name}
              </Link>
            ) : (
              'a removed dataset'
            )}{' '}
            in{' '}
            <Link href={`/studies/${experiment.study.id}`} className="text-brand-700 hover:underline">
              {experiment.study.name}
            </Link>
            . Created {formatDate(experiment.createdAt)}.
          </>
        }
        actions={
          <>
            {canRun && <RunControls experimentId={experiment.id} status={experiment.status} />}
            <Link
              href={`/experiments/${experiment.id}/dashboard`}
              className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
            >
              Intelligibility dashboard
            </Link>
          </>
        }
      />
      <div className="mb-3">
        <LiveRefresh topic={`experiment:${experiment.id}`} />
      </div>
      <div className="grid gap-6 xl:grid-cols-2">
        <Card title="Progress" description={live ? 'Updates live while the experiment runs.' : undefined}>
          {experiment.status === 'preparing' && (
            <div className="mb-4">
              <PreparingNotice
                planned={experiment.sessionsPlanned}
                created={experiment.sessionsCreated}
                error={experiment.prepareError}
              />
            </div>
          )}
          <div
            role="progressbar"
            aria-label="Sessions done"
            aria-valuemin={0}
            aria-valuemax={counts.total}
            aria-valuenow={counts.done}
            className="h-3 w-full overflow-hidden rounded-full bg-stone-100"
          >
            <div className="h-full bg-brand-600 transition-all" style={{ width: `${pct}%` }} />
          </div>
          <dl className="mt-4 grid grid-cols-2 gap-x-6 gap-y-2 text-sm sm:grid-cols-4" data-testid="experiment-counts">
            <div>
              <dt className="text-stone-500">Done</dt>
              <dd className="text-lg font-semibold" data-testid="count-done">
                {counts.done} / {counts.total}
              </dd>
            </div>
            <div>
              <dt className="text-stone-500">Running</dt>
              <dd className="text-lg font-semibold">{counts.running}</dd>
            </div>
            <div>
              <dt className="text-stone-500">Awaiting a person</dt>
              <dd className="text-lg font-semibold">{counts.awaiting}</dd>
            </div>
            <div>
              <dt className="text-stone-500">Stalled</dt>
              <dd className={`text-lg font-semibold ${counts.stalled ? 'text-red-700' : ''}`}>{counts.stalled}</dd>
            </div>
            <div>
              <dt className="text-stone-500">LLM calls</dt>
              <dd>
                {counts.calls}
                {counts.failedCalls ? ` (${counts.failedCalls} failed attempts)` : ''}
              </dd>
            </div>
            <div>
              <dt className="text-stone-500">Tokens in / out</dt>
              <dd>
                {counts.tokensIn.toLocaleString('en')} / {counts.tokensOut.toLocaleString('en')}
              </dd>
            </div>
            <div>
              <dt className="text-stone-500">Cost so far</dt>
              <dd>{usd(counts.costUsd)}</dd>
            </div>
          </dl>
        </Card>
        <Card title="Set-up">
          <dl className="grid grid-cols-[11rem_1fr] gap-y-1.5 text-sm">
            <dt className="text-stone-500">Task</dt>
            <dd>{experiment.task.toUpperCase()}</dd>
            <dt className="text-stone-500">Message bound n</dt>
            <dd>{config.n ?? '—'}</dd>
            <dt className="text-stone-500">REJECT only after k</dt>
            <dd>{config.k ?? '—'}</dd>
            <dt className="text-stone-500">Repetitions R</dt>
            <dd>{experiment.repetitions}</dd>
            <dt className="text-stone-500">Context carry-over</dt>
            <dd>{experiment.carryOver ? 'On (as in the paper): sessions of a repetition run in order' : 'Off'}</dd>
            <dt className="text-stone-500">Machine</dt>
            <dd>{seatLabel(seats.m)}</dd>
            <dt className="text-stone-500">Tester (human seat)</dt>
            <dd>{seatLabel(seats.h)}</dd>
          </dl>
        </Card>
      </div>

      <section className="mt-6" aria-labelledby="sessions-heading">
        <div className="mb-2 flex flex-wrap items-end justify-between gap-3">
          <h2 id="sessions-heading" className="text-lg font-semibold">
            Sessions
          </h2>
          <form className="flex flex-wrap items-end gap-2 text-sm" role="search">
            <label className="flex flex-col">
              <span className="text-xs text-stone-600">Status</span>
              <select
                name="status"
                defaultValue={sp.status ?? ''}
                className="rounded-md border border-stone-300 bg-white px-2 py-1.5"
              >
                <option value="">Any</option>
                {SESSION_STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
            <label className="flex flex-col">
              <span className="text-xs text-stone-600">Repetition</span>
              <input
                name="repetition"
                type="number"
                min={1}
                max={experiment.repetitions}
                defaultValue={sp.repetition}
                className="w-24 rounded-md border border-stone-300 bg-white px-2 py-1.5"
              />
            </label>
            <button
              type="submit"
              className="rounded-md border border-stone-300 bg-white px-3 py-1.5 hover:bg-stone-100"
            >
              Filter
            </button>
          </form>
        </div>
        {sessions.total === 0 ? (
          <EmptyState title="No sessions match." />
        ) : (
          <>
            <Table
              caption="Sessions of this experiment"
              head={['Repetition', 'Position', 'Status', 'Messages', 'Stop reason / error', 'Human seat', '']}
            >
              {sessions.items.map((s) => (
                <tr key={s.id} data-session-id={s.id}>
                  <Td>{s.repetition}</Td>
                  <Td>{s.position + 1}</Td>
                  <Td>
                    <StatusBadge status={s.status} />
                  </Td>
                  <Td>{s.messages}</Td>
                  <Td className="max-w-md">
                    {s.status === 'stalled' ? (
                      <span className="flex flex-col items-start gap-1">
                        <span className="text-red-700">{s.stallError}</span>
                        {canRun && <RetryButton sessionId={s.id} experimentId={experiment.id} />}
                      </span>
                    ) : (
                      <span className="text-stone-600">{s.stopReason ?? '—'}</span>
                    )}
                  </Td>
                  <Td>{s.assignee ?? 'proxy / LLM'}</Td>
                  <Td>
                    {canInspect && (
                      <Link
                        href={`/experiments/${experiment.id}/sessions/${s.id}`}
                        className="text-brand-700 hover:underline"
                      >
                        Inspect
                      </Link>
                    )}
                  </Td>
                </tr>
              ))}
            </Table>
            <Pagination {...sessions} params={sp} basePath={`/experiments/${experiment.id}`} />
          </>
        )}
      </section>
    </>
  )
}
