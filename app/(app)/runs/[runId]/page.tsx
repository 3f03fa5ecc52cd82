import { formatCount, formatUsd } from '@/lib/format'
import type { Metadata } from 'next'
import Link from 'next/link'
import { LiveRefresh } from '@/components/live/live-refresh'
import { uiFor } from '@/components/protocols/registry'
import { modelChoices } from '@/components/runs/model-choices'
import { changeTargets } from '@/components/runs/change-targets'
import { type ConnectionNames, modelLabel } from '@/components/runs/model-label'
import { ChangeSeatModel, RetryButton, RunControls } from '@/components/runs/run-controls'
import { PreparingNotice, sessionState, StatusBadge } from '@/components/runs/status'
import { Alert, Card, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { hasScope } from '@/lib/server/auth/roles'
import { requirePage } from '@/lib/server/auth/session'
import { type SeatFill, Seats } from '@/lib/server/engine/seats'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listConnections } from '@/lib/server/services/connections'
import { listPresets } from '@/lib/server/services/presets'
import { getRun, SESSION_STATUSES, viewRun } from '@/lib/server/services/runs'

export const metadata: Metadata = { title: 'Run' }

const time = (d: Date) => d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })

const PROGRESS: Array<[keyof typeof LABEL, string]> = [
  ['queued', 'Queued'],
  ['waiting', 'Waiting for the previous session'],
  ['running', 'Running'],
  ['awaiting', 'Awaiting a person'],
  ['stalled', 'Stalled'],
  ['done', 'Done'],
  ['cancelled', 'Cancelled'],
]
const LABEL = { queued: 0, waiting: 0, running: 0, awaiting: 0, stalled: 0, done: 0, cancelled: 0 }

/** Who fills a seat of the run's template, in words, naming each model and its connection. */
function fillLabel(fill: SeatFill | undefined, connections: ConnectionNames): string {
  if (!fill) return '—'
  if (fill.kind === 'human') return fill.claimable ? 'a person (claimable by members)' : 'a person (per session)'
  const helpers = Object.entries(fill.helpers)
    .map(([name, ref]) => ` · ${name}: ${modelLabel(ref, connections)}`)
    .join('')
  if (fill.kind === 'llm') return `LLM ${modelLabel(fill.model, connections)}${helpers}`
  if (fill.kind === 'proxy') return `the ground-truth proxy${helpers}`
  return `program ${fill.program}${helpers}`
}

/**
 * A run of any protocol: what it is doing and what blocks it, its controls, progress by status,
 * tokens and cost, exports, its sessions with their honest state, then the protocol's own part.
 */
export default async function RunPage({
  params,
  searchParams,
}: {
  params: Promise<{ runId: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { runId } = await params
  const { actor } = await requirePage('studies:read')
  const sp = await flatParams(searchParams)
  const r = await loadForPage(getRun, {
    runId,
    page: sp.page,
    status: sp.status || undefined,
    repetition: sp.repetition || undefined,
  })
  const { run, counts, sessions, blocked, lastStall } = r
  const ui = uiFor(run.protocol)
  const canInspect = r.can.inspect
  // The study role decides too: a viewer member reads the run but neither runs nor exports it.
  const canRun = hasScope(actor.role, 'studies:update') && r.access.includes('write')
  const canExport = hasScope(actor.role, 'exports:read') && r.access.includes('write')
  const summary = ui?.RunSummary ? await loadForPage(viewRun, { runId, args: sp }) : null
  const seats = Seats.safeParse(run.seats)
  const fills = seats.success ? seats.data : {}
  const open = run.status !== 'done' && run.status !== 'cancelled'
  let models: ReturnType<typeof modelChoices> = []
  if (canRun && open && hasScope(actor.role, 'connections:manage')) {
    const [connections, presets] = await Promise.all([
      loadForPage(listConnections, { studyId: run.studyId }),
      loadForPage(listPresets, { studyId: run.studyId }),
    ])
    models = modelChoices(presets, connections)
  }
  const label = (seat: string) => r.seatDecls.find((d) => d.name === seat)?.label ?? seat
  const change = changeTargets(fills, r.connections, label, r.lastStallCall)
  const pct = counts.total ? Math.round((100 * counts.done) / counts.total) : 0
  // The run's scheduler may report its own goal (e.g. branches covered of all); sessions are then only
  // what it has created so far.
  const schedule = run.schedule as { done?: boolean; progress?: { done: number; total: number } } | null
  const goal = schedule?.progress ?? null
  const goalDone = schedule?.done === true
  const base = `/runs/${run.id}`
  return (
    <>
      <PageHeader
        title={
          <>
            {run.name} <StatusBadge status={run.status} />
          </>
        }
        description={
          <>
            <span data-testid="run-protocol">{run.protocolLabel}</span> over{' '}
            {r.dataset ? (
              <Link href={`/datasets/${r.dataset.id}`} className="text-brand-700 underline">
                {r.dataset.name}
              </Link>
            ) : (
              'a removed dataset'
            )}{' '}
            in{' '}
            <Link href={`/studies/${run.study.id}`} className="text-brand-700 underline">
              {run.study.name}
            </Link>
            . Created {formatDate(run.createdAt)}.
          </>
        }
        actions={
          <div className="flex flex-col items-end gap-2">
            <div className="flex flex-wrap items-center gap-2">
              {canRun && <RunControls runId={run.id} status={run.status} stalled={counts.stalled} />}
              {r.hasDashboard && ui?.Dashboard && hasScope(actor.role, 'dashboards:read') && (
                <Link
                  href={`${base}/dashboard`}
                  className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
                >
                  {ui.dashboardTitle ?? 'Dashboard'}
                </Link>
              )}
              {ui?.Compare && hasScope(actor.role, 'dashboards:read') && (
                <Link
                  href={`/runs/compare?a=${run.id}`}
                  className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
                >
                  Compare with another run
                </Link>
              )}
            </div>
            <LiveRefresh topic={`run:${run.id}`} />
          </div>
        }
      />
      {run.status === 'preparing' && (
        <PreparingNotice planned={run.sessionsPlanned} created={run.sessionsCreated} error={run.prepareError} />
      )}
      {(blocked || lastStall) && (
        <div className="mb-4 space-y-2" data-testid="run-blocked">
          {blocked && <Alert tone={blocked.kind === 'stalled' ? 'error' : 'info'}>{blocked.message}</Alert>}
          {lastStall && (
            <Alert>
              {lastStall.retryCount > 0
                ? `Retry failed again at ${time(lastStall.updatedAt)}: `
                : `Stalled at ${time(lastStall.updatedAt)}: `}
              {lastStall.stallError ?? 'unknown error'}
              {lastStall.retryCount > 1 ? ` (retried ${lastStall.retryCount} times)` : ''}
            </Alert>
          )}
        </div>
      )}
      {counts.total === 1 && sessions.items[0]?.open && (
        <div className="mb-4 flex items-center justify-between gap-3 rounded-md border border-brand-100 bg-brand-50 px-4 py-2 text-sm">
          <span>This run is one session.</span>
          <Link
            href={`/sessions/${sessions.items[0].id}`}
            className="font-medium text-brand-700 underline"
            data-testid="open-single-session"
          >
            Open the session →
          </Link>
        </div>
      )}
      <div className="grid gap-6 xl:grid-cols-2">
        <Card title="Progress" description={run.status === 'running' ? 'Updates live while the run runs.' : undefined}>
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
          <p className="mt-3 text-sm">
            <span className="text-lg font-semibold" data-testid="count-done">
              {formatCount(counts.done)} / {formatCount(counts.total)}
            </span>{' '}
            sessions done
          </p>
          {goal && (
            <p className="mt-1 text-sm" data-testid="schedule-progress">
              <span className="font-semibold">
                {formatCount(goal.done)} / {formatCount(goal.total)}
              </span>{' '}
              toward the scheduler's goal{goalDone ? ' (reached)' : ''}; more sessions may follow
            </p>
          )}
          <dl className="mt-3 grid grid-cols-2 gap-x-6 gap-y-2 text-sm sm:grid-cols-4" data-testid="run-counts">
            {PROGRESS.map(([key, text]) => (
              <div key={key}>
                <dt className="text-stone-500">{text}</dt>
                <dd
                  className={`text-lg font-semibold ${key === 'stalled' && counts.stalled ? 'text-red-700' : ''}`}
                  data-testid={`status-count-${key}`}
                >
                  {formatCount(counts[key])}
                </dd>
              </div>
            ))}
            <div>
              <dt className="text-stone-500">LLM calls</dt>
              <dd>
                {formatCount(counts.calls)}
                {counts.failedCalls ? ` (${formatCount(counts.failedCalls)} failed attempts)` : ''}
              </dd>
            </div>
            <div>
              <dt className="text-stone-500">Tokens in / out</dt>
              <dd data-testid="tokens">
                {formatCount(counts.tokensIn)} / {formatCount(counts.tokensOut)}
              </dd>
            </div>
            <div>
              <dt className="text-stone-500">Cost so far</dt>
              <dd data-testid="cost">{formatUsd(counts.costUsd)}</dd>
            </div>
          </dl>
        </Card>
        <Card
          title="Seats"
          actions={
            canRun && open ? (
              <ChangeSeatModel
                runId={run.id}
                targets={change.targets}
                defaultTarget={change.preselected}
                models={models}
                stalled={counts.stalled}
              />
            ) : null
          }
        >
          <dl className="grid grid-cols-[11rem_1fr] gap-y-1.5 text-sm">
            {r.seatDecls.map((d) => (
              <div key={d.name} className="contents">
                <dt className="text-stone-500">{d.label}</dt>
                <dd data-testid={`seat-${d.name}`}>{fillLabel(fills[d.name], r.connections)}</dd>
              </div>
            ))}
            <dt className="text-stone-500">Repetitions</dt>
            <dd>{run.repetitions}</dd>
            <dt className="text-stone-500">Sessions at once</dt>
            <dd data-testid="max-in-flight">
              {run.maxInFlight ? `At most ${run.maxInFlight} on the workers; the others wait their turn` : 'No limit'}
            </dd>
            {(run.distinctClaimants || run.fillFirst) && (
              <>
                <dt className="text-stone-500">Claimable seats</dt>
                <dd data-testid="claim-options">
                  {[
                    run.distinctClaimants ? 'One person per item' : null,
                    run.fillFirst ? `Items with fewer than ${run.fillFirst} finished sessions offered first` : null,
                  ]
                    .filter(Boolean)
                    .join('; ')}
                </dd>
              </>
            )}
          </dl>
        </Card>
      </div>

      {canExport && (
        <Card title="Export" className="mt-6" description="Streamed files of the blackboard and the protocol's tables.">
          <ul className="flex flex-wrap gap-x-6 gap-y-2 text-sm" data-testid="exports">
            {r.exports.map((e) => (
              <li key={e.table}>
                {e.label}:{' '}
                <a
                  className="text-brand-700 underline"
                  href={`/api/runs/${run.id}/export?table=${e.table}&format=jsonl`}
                >
                  JSONL
                </a>{' '}
                ·{' '}
                <a className="text-brand-700 underline" href={`/api/runs/${run.id}/export?table=${e.table}&format=csv`}>
                  CSV
                </a>
              </li>
            ))}
            {r.files.map((f) => (
              <li key={f.file}>
                <a className="text-brand-700 underline" href={`/api/runs/${run.id}/files/${f.file}`}>
                  {f.label}
                </a>
              </li>
            ))}
          </ul>
        </Card>
      )}

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
            {run.repetitions > 1 && (
              <label className="flex flex-col">
                <span className="text-xs text-stone-600">Repetition</span>
                <input
                  name="repetition"
                  type="number"
                  min={1}
                  max={run.repetitions}
                  defaultValue={sp.repetition}
                  className="w-24 rounded-md border border-stone-300 bg-white px-2 py-1.5"
                />
              </label>
            )}
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
            <Table caption="Sessions of this run" head={['Session', 'State', 'People', 'Messages', 'Updated', '']}>
              {sessions.items.map((s) => (
                <tr key={s.id} data-session-id={s.id}>
                  <Td>
                    {run.repetitions > 1 ? `${s.repetition}.` : ''}
                    {s.position + 1}
                  </Td>
                  <Td className="max-w-md">
                    <span className="flex flex-col items-start gap-1">
                      <StatusBadge status={s.status} />
                      <span
                        className={s.status === 'stalled' ? 'text-red-700' : 'text-stone-600'}
                        data-testid="session-state"
                      >
                        {sessionState(s)}
                        {s.status === 'stalled' && s.retryCount > 0 ? ` (retried ${s.retryCount}×)` : ''}
                      </span>
                      {s.status === 'stalled' && canRun && <RetryButton sessionId={s.id} runId={run.id} />}
                    </span>
                  </Td>
                  <Td>
                    {s.people.length
                      ? s.people
                          .map((p) => `${label(p.seat)}: ${p.user ? p.user.name || p.user.email : 'unclaimed'}`)
                          .join(', ')
                      : '—'}
                  </Td>
                  <Td>{s.messages}</Td>
                  <Td className="whitespace-nowrap text-stone-500">{formatDate(s.updatedAt)}</Td>
                  <Td className="whitespace-nowrap">
                    {[
                      s.open && (
                        <Link key="open" href={`/sessions/${s.id}`} className="text-brand-700 underline">
                          Open
                        </Link>
                      ),
                      canInspect && (
                        <Link key="inspect" href={`${base}/sessions/${s.id}`} className="text-brand-700 underline">
                          Inspect
                        </Link>
                      ),
                    ]
                      .filter(Boolean)
                      .flatMap((link, i) => (i ? [' · ', link] : [link]))}
                  </Td>
                </tr>
              ))}
            </Table>
            <Pagination {...sessions} params={sp} basePath={base} />
          </>
        )}
      </section>

      {ui?.RunSummary && summary && (
        <section className="mt-6" aria-label={`${run.protocolLabel} results`}>
          <ui.RunSummary run={r} data={summary.data} canRun={canRun} params={sp} basePath={base} />
        </section>
      )}
    </>
  )
}
