import type { ReactNode } from 'react'
import Link from 'next/link'
import type { StudyPageProps, StudyPanelProps } from '@/components/protocols/types'
import { Alert, Badge, Card, EmptyState, PageHeader } from '@/components/ui/card'
import { Table, Td } from '@/components/ui/table'
import type { MethodsPageData, TrainPageData, TrajectoryView, TreePageData } from '@/protocols/rehac/server/methods'
import { actionLabel, pct } from '@/protocols/rehac/ui/format'
import { MethodsChart } from '@/protocols/rehac/ui/methods-chart'
import { RehacTrainForm } from '@/protocols/rehac/ui/train-form'

/**
 * ReHAC's pages under a study (protocols/rehac/server/methods.ts): the method comparison (Table 4 and
 * Figure 2 of Feng et al.) with its λ control and tree coverage, and one question's trajectory tree.
 * Everything is text rendered by React (escaped); nothing is injected as HTML.
 */
export function RehacStudyPage({ study, title, data }: StudyPageProps) {
  const d = data as MethodsPageData | TreePageData | TrainPageData
  if (d.kind === 'methods') return <MethodsPage studyId={study.id} studyName={study.name} title={title} d={d} />
  if (d.kind === 'train') return <TrainPage studyId={study.id} studyName={study.name} title={title} d={d} />
  return <TreePage studyId={study.id} title={title} d={d} />
}

/** The study card: a link to the method comparison (none when the study has no ReHAC run). */
export function RehacStudyPanel({ studyId, data }: StudyPanelProps) {
  const { runs, canTrain } = (data ?? { runs: 0, canTrain: false }) as { runs: number; canTrain: boolean }
  if (!runs) return null
  return (
    <Card
      title="ReHAC methods"
      description="Deciders side by side: HIR, T, C and R at λ (Table 4), the R / λ·C columns (Figure 2), tree coverage."
    >
      <p className="text-sm">
        <Link href={`/studies/${studyId}/p/rehac/methods`} className="font-medium text-brand-700 underline">
          Compare the {runs} ReHAC run{runs === 1 ? '' : 's'}
        </Link>
        {canTrain ? (
          <>
            {' · '}
            <Link href={`/studies/${studyId}/p/rehac/train`} className="font-medium text-brand-700 underline">
              Train a policy
            </Link>
          </>
        ) : null}
      </p>
    </Card>
  )
}

/** Training a policy on the study's trees (`rehac.train`); nothing is stored. */
function TrainPage({
  studyId,
  studyName,
  title,
  d,
}: {
  studyId: string
  studyName: string
  title: string
  d: TrainPageData
}) {
  return (
    <div className="space-y-6">
      <StudyHeader studyId={studyId} studyName={studyName} title={title}>
        : the paper's objective (Eq. 7–8, importance weight clipped to [0.7, 1.3] against the 0.5/0.5 collection policy,
        entropy bonus) over the advantage rows of the chosen runs' ended episodes at λ. Whole questions are held out by
        the seed and scored offline. Nothing is stored: copy the model into a new run&apos;s trained-policy decider.
      </StudyHeader>
      <RehacTrainForm studyId={studyId} runs={d.runs} />
    </div>
  )
}

/** A ReHAC page's header: its title, then the study (a link back) and what the page shows. */
function StudyHeader({
  studyId,
  studyName,
  title,
  children,
}: {
  studyId: string
  studyName: string
  title: string
  children: ReactNode
}) {
  return (
    <PageHeader
      title={title}
      description={
        <>
          <Link href={`/studies/${studyId}`} className="underline">
            {studyName}
          </Link>
          {children}
        </>
      }
    />
  )
}

function LambdaControl({
  base,
  lambda,
  input,
  presets,
  error,
}: {
  base: string
  lambda: number
  input: string
  presets: readonly number[]
  error: string | null
}) {
  return (
    <div className="space-y-2">
      {error && (
        <Alert>
          λ = “{input.slice(0, 40)}” is not allowed: {error} Showing λ = {lambda}.
        </Alert>
      )}
      <form method="get" action={base} className="flex flex-wrap items-end gap-3 text-sm">
        <span className="text-stone-600">λ (cost per human step):</span>
        {presets.map((p) => (
          <Link
            key={p}
            href={`${base}?lambda=${p}`}
            aria-current={p === lambda ? 'page' : undefined}
            className={p === lambda ? 'font-semibold text-stone-900' : 'text-brand-700 underline'}
          >
            {p.toFixed(2)}
          </Link>
        ))}
        <label className="flex items-center gap-1">
          <span className="sr-only">λ</span>
          <input
            type="number"
            name="lambda"
            min={0}
            max={1}
            step="any"
            defaultValue={error ? '' : String(lambda)}
            className="w-24 rounded border border-stone-300 px-2 py-1"
          />
        </label>
        <button type="submit" className="rounded border border-stone-300 px-2 py-1 hover:bg-stone-50">
          Apply
        </button>
      </form>
    </div>
  )
}

function MethodsPage({
  studyId,
  studyName,
  title,
  d,
}: {
  studyId: string
  studyName: string
  title: string
  d: MethodsPageData
}) {
  const base = `/studies/${studyId}/p/rehac/methods`
  const withData = d.rows.filter((r) => r.n > 0)
  return (
    <div className="space-y-6">
      <StudyHeader studyId={studyId} studyName={studyName} title={title}>
        : one row per ReHAC run (its decider is the method), as Table 4 of Feng et al. Only finished trajectories count
        (sessions that ended; running, waiting, stalled and cancelled ones are left out).
      </StudyHeader>
      <LambdaControl base={base} lambda={d.lambda} input={d.lambdaInput} presets={d.presets} error={d.error} />
      {d.rows.length === 0 ? (
        <EmptyState title="This study has no ReHAC run yet.">
          Start a ReHAC run; its finished trajectories appear here.
        </EmptyState>
      ) : (
        <>
          <Table
            caption={`ReHAC methods at λ = ${d.lambda}`}
            head={['Method', 'Run', 'HIR', 'T', 'C', 'R', 'Trajectories']}
          >
            {d.rows.map((r) => (
              <tr key={r.runId} data-testid="rehac-method-row">
                <Td className="font-medium">{r.method}</Td>
                <Td>
                  <Link href={`/runs/${r.runId}`} className="text-brand-700 underline">
                    {r.name}
                  </Link>{' '}
                  <span className="text-xs text-stone-500">{r.status}</span>
                </Td>
                <Td>{pct(r.hir, 2)}</Td>
                <Td>{pct(r.T, 2)}</Td>
                <Td>{r.C === null ? '—' : r.C.toFixed(2)}</Td>
                <Td>{pct(r.R, 2)}</Td>
                <Td>{r.n}</Td>
              </tr>
            ))}
          </Table>
          <p className="text-xs text-stone-500">
            HIR = Σ human steps / Σ steps ×100 (pooled); T = mean task reward ×100 (token F1, or the SQL reward); C =
            mean human steps per trajectory; R = mean(T − λ·C) ×100.
          </p>
          <Card title={`R and λ·C per method (λ = ${d.lambda})`}>
            <MethodsChart
              lambda={d.lambda}
              bars={withData.map((r) => ({
                method: r.method,
                R: (r.R ?? 0) * 100,
                cost: d.lambda * (r.C ?? 0) * 100,
                T: (r.T ?? 0) * 100,
                hir: (r.hir ?? 0) * 100,
              }))}
            />
          </Card>
        </>
      )}
      <Card
        title="Trees per question"
        description="Per run and question: of the states (choice prefixes) its finished trajectories reached, how many have both branches (agent and human) and how many one. A collection run forks episodes to cover both; follow a question to its tree."
      >
        {d.coverage.length === 0 ? (
          <EmptyState title="No finished trajectories yet." />
        ) : (
          <div className="space-y-4">
            {d.coverage.map((c) => (
              <div key={c.runId}>
                <h3 className="text-sm font-semibold">
                  {c.name}{' '}
                  <span className="font-normal text-stone-500">
                    ({c.method}
                    {c.forks ? ', forks episodes' : ''})
                  </span>
                </h3>
                <CoverageList studyId={studyId} runId={c.runId} lambda={d.lambda} questions={c.questions} />
              </div>
            ))}
          </div>
        )}
      </Card>
    </div>
  )
}

type CoverageQuestion = MethodsPageData['coverage'][number]['questions'][number]
const COVERAGE_SHOWN = 12

/** A run's questions with their coverage: the first dozen, the rest behind a disclosure (an imported file has hundreds). */
function CoverageList({
  studyId,
  runId,
  lambda,
  questions,
}: {
  studyId: string
  runId: string
  lambda: number
  questions: CoverageQuestion[]
}) {
  const item = (q: CoverageQuestion) => (
    <li key={q.instanceId} className="flex items-center justify-between gap-3 py-1.5">
      <Link
        href={`/studies/${studyId}/p/rehac/tree/${encodeURIComponent(runId)}/${encodeURIComponent(q.instanceId)}?lambda=${lambda}`}
        className="min-w-0 flex-1 truncate text-brand-700 underline"
        title={q.question}
      >
        {q.instanceId}: {q.question.slice(0, 200)}
      </Link>
      <span className="shrink-0 text-stone-600">
        {q.trajectories} trajector{q.trajectories === 1 ? 'y' : 'ies'} · {q.states} states: {q.both} both branches,{' '}
        {q.one} one
      </span>
    </li>
  )
  const rest = questions.slice(COVERAGE_SHOWN)
  return (
    <>
      <ul className="mt-1 divide-y divide-stone-100 text-sm">{questions.slice(0, COVERAGE_SHOWN).map(item)}</ul>
      {rest.length ? (
        <details className="text-sm">
          <summary className="cursor-pointer py-1 text-brand-700">
            {rest.length} more question{rest.length === 1 ? '' : 's'}
          </summary>
          <ul className="divide-y divide-stone-100">{rest.map(item)}</ul>
        </details>
      ) : null}
    </>
  )
}

const fmt = (x: number | null, digits = 3) => (x === null ? '—' : x.toFixed(digits))

function TreePage({ studyId, title, d }: { studyId: string; title: string; d: TreePageData }) {
  const base = `/studies/${studyId}/p/rehac/tree/${encodeURIComponent(d.run.id)}/${encodeURIComponent(d.instance.id)}`
  const byKey = new Map(d.trajectories.map((t) => [t.key, t]))
  return (
    <div className="space-y-6">
      <PageHeader
        title={title}
        description={
          <>
            Run{' '}
            <Link href={`/runs/${d.run.id}`} className="underline">
              {d.run.name}
            </Link>{' '}
            ({d.run.method}) ·{' '}
            <Link href={`/studies/${studyId}/p/rehac/methods?lambda=${d.lambda}`} className="underline">
              all methods
            </Link>
          </>
        }
      />
      <Card title="Question">
        <p className="whitespace-pre-wrap text-sm">{d.instance.question}</p>
        {d.instance.gold !== null && (
          <p className="mt-2 text-sm">
            <span className="text-stone-500">Gold answer:</span> {d.instance.gold}
          </p>
        )}
        <p className="mt-2 text-sm text-stone-600">
          {d.coverage.states} states reached: {d.coverage.both} with both branches, {d.coverage.one} with one.
        </p>
      </Card>
      <LambdaControl base={base} lambda={d.lambda} input={d.lambdaInput} presets={d.presets} error={d.error} />
      <Card
        title="Forks: agent branch / human branch"
        description="At each state (the choices before the step), the finished trajectories that gave the step to the agent and to the human, with their mean T and R at λ. Marked where the human step changed the outcome."
      >
        {d.forks.length === 0 ? (
          <EmptyState title="No finished trajectory yet." />
        ) : (
          <div className="space-y-3">
            {d.forks.map((f) => (
              <div key={f.prefix} className="rounded border border-stone-200 p-3" data-testid="rehac-fork">
                <p className="text-sm font-medium">
                  Step {f.at} after “{f.prefix || '(start)'}”{' '}
                  {f.changed ? (
                    <Badge tone="amber">
                      human step changed the outcome: ΔT {fmt(f.deltaT)}, ΔR {fmt(f.deltaR)}
                    </Badge>
                  ) : f.deltaR !== null ? (
                    <Badge>same outcome</Badge>
                  ) : (
                    <Badge tone="red">one branch only</Badge>
                  )}
                </p>
                <div className="mt-2 grid gap-3 md:grid-cols-2">
                  {(['agent', 'human'] as const).map((side) => (
                    <div key={side}>
                      <p className="text-xs font-semibold uppercase text-stone-500">
                        {side} branch · T {fmt(f[side].T)} · R {fmt(f[side].R)}
                      </p>
                      {f[side].keys.length === 0 ? (
                        <p className="text-sm text-stone-500">not taken</p>
                      ) : (
                        <ul className="text-sm">
                          {f[side].keys.map((k) => (
                            <li key={k}>
                              <a href={`#t-${anchor(k)}`} className="text-brand-700 underline">
                                {byKey.get(k)?.path || k}
                              </a>
                            </li>
                          ))}
                        </ul>
                      )}
                    </div>
                  ))}
                </div>
              </div>
            ))}
          </div>
        )}
      </Card>
      <div className="space-y-4">
        {d.trajectories.map((t) => (
          <Trajectory key={t.sessionId} t={t} />
        ))}
      </div>
    </div>
  )
}

const anchor = (key: string) => key.replace(/[^A-Za-z0-9_-]/g, '_')

function Trajectory({ t }: { t: TrajectoryView }) {
  return (
    <Card
      title={
        <span id={`t-${anchor(t.key)}`}>
          Path “{t.path || '(none)'}” <span className="text-xs font-normal text-stone-500">{t.key}</span>
        </span>
      }
      description={
        t.ended
          ? `T ${fmt(t.T)} · C ${t.C} · R ${fmt(t.R)}${t.forkAt ? ` · forked at step ${t.forkAt} from ${t.parentKey}` : ''}`
          : `${t.status}: not finished, not counted`
      }
      actions={
        <Link href={`/sessions/${t.sessionId}`} className="text-sm text-brand-700 underline">
          Session
        </Link>
      }
    >
      <ol className="space-y-2 text-sm">
        {t.steps.map((s) => (
          <li key={s.t} className="flex gap-2">
            <span className="w-6 shrink-0 text-stone-500">{s.t}</span>
            <span className="shrink-0 self-start">
              <Badge tone={s.solver === 'human' ? 'amber' : 'brand'}>{s.solver === 'human' ? 'Human' : 'Agent'}</Badge>
            </span>
            <div className="min-w-0">
              {s.thought && <p className="text-stone-700">{s.thought}</p>}
              {s.action && <p className="font-mono text-xs">{actionLabel(s.action)}</p>}
              {s.observation !== null && <p className="text-xs text-stone-500">{s.observation.slice(0, 400)}</p>}
            </div>
          </li>
        ))}
      </ol>
      {t.answer !== null && <p className="mt-2 text-sm">Answer: {t.answer || '(none)'}</p>}
    </Card>
  )
}
