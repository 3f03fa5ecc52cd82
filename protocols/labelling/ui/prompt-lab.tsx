import Link from 'next/link'
import type { StudyPageProps } from '@/components/protocols/types'
import { Alert, Card, EmptyState, PageHeader } from '@/components/ui/card'
import { Table, Td } from '@/components/ui/table'
import { type Cell, COLUMNS, type Column } from '@/protocols/labelling/core/prompt-lab'
import { FEATURE_NAMES, FEATURES } from '@/protocols/labelling/core/variants'
import type { PromptLabData } from '@/protocols/labelling/server/prompt-lab'
import { KappaStripChart, type StripPoint } from '@/protocols/labelling/ui/prompt-lab-chart'
import { LabRunStatus } from '@/protocols/labelling/ui/lab-run-status'
import { PromptLabForm } from '@/protocols/labelling/ui/prompt-lab-form'

const COLUMN_LABEL: Record<Column, string> = {
  mae: 'MAE (binary) ↓',
  kappa: 'κ (binarised)',
  auc: 'AUC',
  rboQuery: 'RBO queries (φ 0.9)',
  rboSystem: 'RBO systems (φ 0.7)',
}
const f3 = (x: number | null) => (x === null ? '—' : x.toFixed(3))

function CellText({ cell, best }: { cell: Cell | null; best: boolean }) {
  if (!cell) return <>—</>
  return (
    <span className="whitespace-nowrap">
      {f3(cell.estimate)}
      {best ? <span title="significantly best (one-sided t-test vs the next best, p < 0.05)">†</span> : null}
      <span className="text-xs text-stone-500">
        {' '}
        [{f3(cell.lo)}, {f3(cell.hi)}]
      </span>
    </span>
  )
}

/** The labelling protocol's study pages: the prompt lab (server/prompt-lab.ts). Text only, escaped by React. */
export function PromptLabStudyPage({ study, title, data }: StudyPageProps) {
  const d = data as PromptLabData
  const base = `/studies/${study.id}/p/labelling/prompt-lab`
  const q = (extra: Record<string, string>) =>
    `${base}?${new URLSearchParams({ ...(d.dataset ? { dataset: d.dataset.id } : {}), within: d.args.within, resamples: String(d.args.resamples), ...extra })}`
  // A finished lab run shows its stored tables; otherwise every LLM-labeller run over the dataset, computed now.
  const stored = d.labRun?.status === 'done' ? d.labRun.result : null
  const t = stored?.table ?? d.table
  const variantsInChart = t ? [...new Set(t.rows.map((r) => r.name.split('/')[0]!))] : []
  const points: StripPoint[] = t
    ? t.rows.flatMap((r) => {
        const k = r.kappa
        if (k.estimate === null || k.lo === null || k.hi === null) return []
        const variant = r.name.split('/')[0]!
        const siblings = t.rows.filter((x) => x.name.split('/')[0] === variant)
        const j = siblings.indexOf(r)
        const x = variantsInChart.indexOf(variant) + (siblings.length > 1 ? (j / (siblings.length - 1) - 0.5) * 0.5 : 0)
        return [
          {
            variant,
            prompt: r.name,
            kappa: k.estimate,
            err: [k.estimate - k.lo, k.hi - k.estimate] as [number, number],
            x,
          },
        ]
      })
    : []
  const cost = new Map((stored?.runs ?? d.runs).map((r) => [r.prompt, r]))
  return (
    <div className="space-y-6">
      <PageHeader title={title} />
      <p className="text-sm text-stone-600">
        <Link href={`/studies/${study.id}`} className="text-brand-700 underline">
          {study.name}
        </Link>{' '}
        · LLM-labeller prompts against a gold dataset (Thomas et al.: Table 2, Table 3, split-half stability).
      </p>
      {d.error ? <Alert>{d.error}</Alert> : null}
      {!d.datasets.length ? (
        <EmptyState title="No labelling-items dataset">Import items with gold labels first (Datasets).</EmptyState>
      ) : (
        <nav aria-label="Gold dataset" className="flex flex-wrap gap-2 text-sm">
          {d.datasets.map((ds) => (
            <Link
              key={ds.id}
              href={q({ dataset: ds.id })}
              aria-current={ds.id === d.dataset?.id ? 'page' : undefined}
              className={ds.id === d.dataset?.id ? 'font-semibold' : 'text-brand-700 underline'}
            >
              {ds.name} ({ds.items})
            </Link>
          ))}
        </nav>
      )}
      {d.dataset ? (
        <Card
          title="New lab run"
          description={`On the job queue: one LLM-labeller run per prompt over ${d.dataset.name}, then the tables.`}
        >
          {d.connections.length ? (
            <PromptLabForm
              studyId={study.id}
              datasetId={d.dataset.id}
              variants={d.variants}
              connections={d.connections}
              sample={d.sample}
              args={{
                resamples: String(d.args.resamples),
                seed: String(d.args.seed),
                halves: String(d.args.halves),
                within: d.args.within,
                ...(d.args.runs ? { runs: d.args.runs } : {}),
                ...(d.args.queryRun ? { queryRun: d.args.queryRun } : {}),
              }}
              href={q({})}
            />
          ) : (
            <p className="text-sm">This study has no LLM connection: add one first.</p>
          )}
        </Card>
      ) : null}
      {d.dataset && d.labRuns.length ? (
        <Card
          title="Lab runs"
          description="Each runs on the job queue; its tables are stored when every prompt is labelled."
        >
          <nav aria-label="Lab runs" className="mb-2 flex flex-wrap gap-2 text-xs">
            {d.labRuns.map((l) => (
              <Link
                key={l.id}
                href={q({ lab: l.id })}
                aria-current={l.id === d.labRun?.id ? 'page' : undefined}
                className="rounded border border-stone-300 px-2 py-0.5 aria-[current=page]:bg-stone-100"
                title={l.error ?? undefined}
              >
                {new Date(l.createdAt).toISOString().slice(0, 16).replace('T', ' ')} · {l.prompts.length} prompt
                {l.prompts.length === 1 ? '' : 's'} · {l.status}
              </Link>
            ))}
          </nav>
          {d.labRun ? <LabRunStatus initial={d.labRun} /> : null}
        </Card>
      ) : null}
      {d.dataset && !t ? (
        <EmptyState title="No LLM-labeller run over this dataset yet">Pick variants above and Run.</EmptyState>
      ) : null}
      {t && d.dataset ? (
        <>
          <Card
            title="Table 2: agreement with gold per prompt"
            description={`${d.dataset.withGold} of ${d.dataset.items} items have gold. ${t.level * 100} % bootstrap intervals over documents (${t.resamples} resamples, seed ${t.seed}); † = significantly best in its column (one-sided paired t-test on the replicates vs the next best, p < 0.05). Unparseable replies are dropped and counted. ${d.computeMs ?? 0} ms${d.cached ? ' (cached)' : ''}.`}
          >
            <p className="mb-2 text-sm">
              AUC pairs: {d.args.within === '1' ? 'within topics' : 'across topics'} ·{' '}
              <Link className="text-brand-700 underline" href={q({ within: d.args.within === '1' ? '0' : '1' })}>
                {d.args.within === '1' ? 'pair across topics' : 'pair within topics'}
              </Link>
            </p>
            <form method="get" action={base} className="mb-2 flex flex-wrap items-end gap-2 text-sm">
              {d.dataset ? <input type="hidden" name="dataset" value={d.dataset.id} /> : null}
              <input type="hidden" name="within" value={d.args.within} />
              {d.runDataset ? <input type="hidden" name="runs" value={d.runDataset.id} /> : null}
              {t.queryRun ? <input type="hidden" name="queryRun" value={t.queryRun} /> : null}
              <label>
                Resamples{' '}
                <input
                  className="w-20 rounded border px-1"
                  type="number"
                  name="resamples"
                  min={2}
                  max={1000}
                  defaultValue={d.args.resamples}
                />
              </label>
              <label>
                Seed{' '}
                <input
                  className="w-24 rounded border px-1"
                  type="number"
                  name="seed"
                  min={0}
                  defaultValue={d.args.seed}
                />
              </label>
              <label>
                Split halves{' '}
                <input
                  className="w-24 rounded border px-1"
                  type="number"
                  name="halves"
                  min={0}
                  max={5000}
                  defaultValue={d.args.halves}
                />
              </label>
              <button type="submit" className="rounded border px-2 py-0.5">
                Recompute
              </button>
            </form>
            {d.runDataset ? (
              <p className="mb-2 text-sm">
                Ranking analyses on the runs of {d.runDataset.name} ({d.runDataset.tags.length}): queries ordered by the
                RBP@100 (φ 0.6) of{' '}
                {d.runDataset.tags.map((tag, i) => (
                  <span key={tag}>
                    {i ? ' · ' : ''}
                    {tag === t.queryRun ? (
                      <strong className="font-mono">{tag}</strong>
                    ) : (
                      <Link
                        className="font-mono text-brand-700 underline"
                        href={q({ runs: d.runDataset!.id, queryRun: tag })}
                      >
                        {tag}
                      </Link>
                    )}
                  </span>
                ))}
                ; systems by their mean.
              </p>
            ) : null}
            <Table caption="Table 2" head={['Prompt', 'n', 'Unparseable', ...COLUMNS.map((c) => COLUMN_LABEL[c])]}>
              {t.rows.map((r) => (
                <tr key={r.name} className="border-b border-stone-100">
                  <Td className="font-mono">{r.name}</Td>
                  <Td>{r.n}</Td>
                  <Td>{r.unparseable}</Td>
                  {COLUMNS.map((c) => (
                    <Td key={c}>
                      <CellText cell={r[c]} best={t.best[c]?.best === r.name && !!t.best[c]?.significant} />
                    </Td>
                  ))}
                </tr>
              ))}
            </Table>
            {t.rboNote ? <p className="mt-2 text-sm text-stone-600">RBO columns: {t.rboNote}.</p> : null}
            {d.duplicates.length ? (
              <p className="mt-2 text-sm text-stone-600">
                Older runs with a prompt already shown (left out): {d.duplicates.join(', ')}.
              </p>
            ) : null}
          </Card>
          <Card
            title="κ across paraphrases"
            description="Each prompt's κ with its interval; a variant's paraphrases beside it."
          >
            <KappaStripChart points={points} variants={variantsInChart} />
          </Card>
          <Card
            title="Table 3: main effects on κ"
            description={
              t.factorialComplete
                ? 'Over all 32 variants (a full 2⁵ factorial).'
                : `Over the ${t.variantsPresent} variants present: the factorial is incomplete, so an effect mixes with the others.`
            }
          >
            <Table
              caption="Table 3"
              head={['Feature', 'Effect on κ', 'κ with', 'κ without', 'Variants with / without']}
            >
              {FEATURES.map((f) => {
                const e = t.mainEffects[f]
                return (
                  <tr key={f} className="border-b border-stone-100">
                    <Td>
                      {f} ({FEATURE_NAMES[f]})
                    </Td>
                    <Td>{f3(e?.effect ?? null)}</Td>
                    <Td>{f3(e?.meanOn ?? null)}</Td>
                    <Td>{f3(e?.meanOff ?? null)}</Td>
                    <Td>
                      {e?.nOn ?? 0} / {e?.nOff ?? 0}
                    </Td>
                  </tr>
                )
              })}
            </Table>
          </Card>
          <Card
            title="Split-half selection stability"
            description="Choose the best-κ prompt on a random half, compare it with the baseline ----- on the other half."
          >
            {t.splitHalf ? (
              <>
                <p className="text-sm">
                  {t.splitHalf.iterations.toLocaleString('en')} halves: the chosen prompt beat ----- in{' '}
                  {t.splitHalf.winsOverBaseline} (
                  {((100 * t.splitHalf.winsOverBaseline) / t.splitHalf.iterations).toFixed(1)} %), tied in{' '}
                  {t.splitHalf.tiesWithBaseline}.{t.splitHalfNote ? ` (${t.splitHalfNote}.)` : ''}
                </p>
                <Table caption="How often each prompt was chosen" head={['Prompt', 'Chosen']}>
                  {Object.entries(t.splitHalf.chosen)
                    .filter(([, c]) => c > 0)
                    .sort((a, b) => b[1] - a[1])
                    .map(([p, c]) => (
                      <tr key={p} className="border-b border-stone-100">
                        <Td className="font-mono">{p}</Td>
                        <Td>{c}</Td>
                      </tr>
                    ))}
                </Table>
              </>
            ) : (
              <p className="text-sm">Not computed: {t.splitHalfNote}.</p>
            )}
          </Card>
          <Card
            title="Cost and latency per label"
            description="From the LLM call rows of each run's sessions (a replayed call costs nothing)."
          >
            <Table
              caption="Cost and latency"
              head={[
                'Prompt',
                'Run',
                'Calls',
                'Cost / label (USD)',
                'Latency / call (ms)',
                'Tokens in / label',
                'Tokens out / label',
              ]}
            >
              {t.rows.map((r) => {
                const c = cost.get(r.name)
                return (
                  <tr key={r.name} className="border-b border-stone-100">
                    <Td className="font-mono">{r.name}</Td>
                    <Td>
                      {c ? (
                        <Link className="text-brand-700 underline" href={`/runs/${c.runId}`}>
                          {c.name}
                        </Link>
                      ) : null}{' '}
                      <span className="text-xs text-stone-500">{c?.status}</span>
                    </Td>
                    <Td>{c?.calls ?? 0}</Td>
                    <Td>{c?.costPerLabel == null ? '—' : c.costPerLabel.toFixed(5)}</Td>
                    <Td>{c?.latencyMsPerLabel == null ? '—' : Math.round(c.latencyMsPerLabel)}</Td>
                    <Td>{c?.tokensInPerLabel == null ? '—' : Math.round(c.tokensInPerLabel)}</Td>
                    <Td>{c?.tokensOutPerLabel == null ? '—' : Math.round(c.tokensOutPerLabel)}</Td>
                  </tr>
                )
              })}
            </Table>
          </Card>
        </>
      ) : null}
    </div>
  )
}
