import Link from 'next/link'
import type { StudyPageProps, StudyPanelProps } from '@/components/protocols/types'
import { Badge, Card, EmptyState, PageHeader } from '@/components/ui/card'
import { Table, Td } from '@/components/ui/table'
import type {
  LeaderboardData,
  LeaderboardPageData,
  LeaderboardRun,
  MintPanelData,
} from '@/protocols/mint/server/leaderboard'
import { ImportResultsForm } from '@/protocols/mint/ui/import-results-form'
import { SrByKChart } from '@/protocols/mint/ui/leaderboard-chart'

/**
 * MINT's leaderboard under a study (protocols/mint/server/leaderboard.ts): SR_k per run (model ×
 * feedback setting × budget k) micro, per task type and per data set; SR against k per model and
 * setting with the OLS slope and R² over k = 1…5; Δfeedback; the invalid-action ratio (flagged above
 * 20 %); tokens and cost. Imported released runs and Parley's own runs side by side, each labelled.
 */
export function MintLeaderboardPage({ study, title, data }: StudyPageProps) {
  const d = data as LeaderboardPageData
  return (
    <div className="space-y-6">
      <PageHeader
        title={title}
        description={
          <>
            <Link href={`/studies/${study.id}`} className="underline">
              {study.name}
            </Link>
            {' · '}SR_k always comes from the separate run with budget k, never from the turns of a longer run.
          </>
        }
      />
      {d.runs.length === 0 ? (
        <EmptyState title="No MINT results yet">
          Finish a MINT run in this study, or import the authors&apos; released results (a .zip or .tar.gz of
          data/outputs/&lt;model&gt;), and the success rates appear here.
        </EmptyState>
      ) : (
        <Leaderboard d={d} />
      )}
      {d.canImport ? (
        <Card
          title="Import released results"
          description="The authors' released outputs of a model (github.com/xingyaoww/mint-bench data/outputs/<model>), to compare with Parley's runs."
        >
          <ImportResultsForm studyId={study.id} maxUploadMb={d.maxUploadMb} />
        </Card>
      ) : null}
    </div>
  )
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${x.toFixed(2)} %`)
const pp = (x: number | null | undefined) =>
  x === null || x === undefined ? '—' : `${x > 0 ? '+' : ''}${x.toFixed(2)} pp`

function Source({ r }: { r: Pick<LeaderboardRun, 'source'> }) {
  return r.source === 'imported' ? <Badge>released</Badge> : <Badge tone="brand">Parley</Badge>
}

function Leaderboard({ d }: { d: LeaderboardData }) {
  const series = (c: LeaderboardData['curves'][number]) =>
    `${c.model} · ${c.setting}${c.source === 'imported' ? ' (released)' : ''}`
  return (
    <>
      <Card
        title="Success rate by budget k"
        description="One point per run: the run with budget k (the one with most records when there are several)."
      >
        <SrByKChart curves={d.curves.map((c) => ({ series: series(c), points: c.points }))} />
        <div className="mt-4">
          <Table
            caption="Improvement per turn (OLS over k = 1…5)"
            head={['Model', 'Feedback', 'Source', 'SR by k', 'Slope (pp / turn)', 'Intercept', 'R²']}
          >
            {d.curves.map((c) => (
              <tr key={`${c.source}${c.model}${c.setting}`} className="border-b border-stone-100">
                <Td>{c.model}</Td>
                <Td>{c.setting}</Td>
                <Td>
                  <Source r={c} />
                </Td>
                <Td>{c.points.map((p) => `k=${p.k}: ${p.sr.toFixed(2)}`).join(' · ')}</Td>
                <Td>{c.fit ? c.fit.slope.toFixed(3) : '— (needs two budgets)'}</Td>
                <Td>{c.fit ? c.fit.intercept.toFixed(3) : '—'}</Td>
                <Td>{c.fit?.r2 == null ? '—' : c.fit.r2.toFixed(4)}</Td>
              </tr>
            ))}
          </Table>
        </div>
      </Card>

      <Card
        title="SR_k per run"
        description="Micro over all tasks, per task category and per data set. Invalid actions above 20 % of all actions are flagged (the paper's mark)."
      >
        <Table
          caption="Success rate per run"
          head={[
            'Model',
            'Feedback',
            'k / p',
            'Source',
            'Tasks',
            'SR (micro)',
            ...d.taskTypes.map((t) => t.replace('_', ' ')),
            ...d.datasets,
            'Invalid actions',
            'Tokens (in / out)',
            'Cost',
          ]}
        >
          {d.runs.map((r) => (
            <tr key={`${r.source}${r.id}`} className="border-b border-stone-100">
              <Td>
                <span title={r.label}>{r.model}</span>
              </Td>
              <Td>{r.setting}</Td>
              <Td>
                {r.k} / {r.p}
              </Td>
              <Td>
                <Source r={r} />
              </Td>
              <Td>
                {r.records}
                {r.notCounted > 0 ? (
                  <span className="block text-xs text-stone-500">{r.notCounted} not finished or not readable</span>
                ) : null}
              </Td>
              <Td className="font-medium">{pct(r.sr)}</Td>
              {d.taskTypes.map((t) => (
                <Td key={t}>{pct(r.byType[t]?.sr)}</Td>
              ))}
              {d.datasets.map((t) => (
                <Td key={t}>{pct(r.byTask[t]?.sr)}</Td>
              ))}
              <Td>
                {r.invalid.ratio === null ? '—' : `${r.invalid.ratio.toFixed(2)} %`}{' '}
                {r.invalid.flagged ? <Badge tone="red">above {d.invalidFlag} %</Badge> : null}
              </Td>
              <Td>
                {r.tokens
                  ? `${r.tokens.prompt.toLocaleString('en')} / ${r.tokens.completion.toLocaleString('en')}`
                  : '—'}
              </Td>
              <Td>{r.costUsd === null ? '—' : `$${r.costUsd.toFixed(4)}`}</Td>
            </tr>
          ))}
        </Table>
      </Card>

      <Card
        title="Δfeedback"
        description="SR with language feedback − SR without, same model, budget k and proposals p, in percentage points."
      >
        {d.deltas.length === 0 ? (
          <p className="text-sm text-stone-600">Needs a run with feedback and one without at the same k.</p>
        ) : (
          <Table
            caption="Δfeedback per category"
            head={['Model', 'With', 'Without', 'k', 'Micro', ...d.taskTypes.map((t) => t.replace('_', ' '))]}
          >
            {d.deltas.map((x) => (
              <tr key={`${x.with.id}${x.without.id}`} className="border-b border-stone-100">
                <Td>{x.model}</Td>
                <Td>{x.with.label}</Td>
                <Td>{x.without.label}</Td>
                <Td>{x.k}</Td>
                <Td className="font-medium">{pp(x.micro)}</Td>
                {d.taskTypes.map((t) => (
                  <Td key={t}>{pp(x.byType[t])}</Td>
                ))}
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </>
  )
}

/** The study card: a link to the leaderboard, with the runs it compares. */
export function MintStudyPanel({ studyId, data }: StudyPanelProps) {
  const d = (data ?? { runs: 0, importedFiles: 0, importedModels: [] }) as MintPanelData
  return (
    <Card title="MINT leaderboard" description="SR_k per model, category and data set; SR against k; Δfeedback.">
      <p className="text-sm">
        <Link className="text-brand-700 underline" href={`/studies/${studyId}/p/mint/leaderboard`}>
          Open the leaderboard
        </Link>
        <span className="text-stone-600">
          {' '}
          · {d.runs} MINT run{d.runs === 1 ? '' : 's'} of this study
          {d.importedFiles
            ? ` · released results of ${d.importedModels.join(', ')} (${d.importedFiles} files)`
            : ' · no released results imported'}
        </span>
      </p>
    </Card>
  )
}
