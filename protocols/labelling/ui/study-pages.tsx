import Link from 'next/link'
import type { ReactNode } from 'react'
import type { StudyPageProps, StudyPanelProps } from '@/components/protocols/types'
import { Badge, Card, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import type { AdjudicationPageData } from '@/protocols/labelling/server/adjudication'
import type { AgreementPageData, ProjectPageData, VersusGold } from '@/protocols/labelling/server/pages'
import { AdjudicateForm } from '@/protocols/labelling/ui/adjudicate-form'

/**
 * Labelling's pages under a study (protocols/labelling/server/pages.ts and adjudication.ts): the
 * project (progress, label browser), agreement and adjudication. Staff only (the server refuses
 * others). Everything is text rendered by React; nothing is injected as HTML.
 */
export function LabellingStudyPage({ study, title, data }: StudyPageProps) {
  const d = data as ProjectPageData | AgreementPageData | AdjudicationPageData
  const head = (
    <PageHeader
      title={title}
      description={
        <>
          <Link href={`/studies/${study.id}`} className="underline">
            {study.name}
          </Link>
          {' · '}
          <Tabs studyId={study.id} runId={d.run.id} current={d.kind} pseudo={d.pseudo} />
        </>
      }
    />
  )
  return (
    <div className="space-y-6">
      {head}
      {d.kind === 'project' ? <ProjectPage studyId={study.id} d={d} /> : null}
      {d.kind === 'agreement' ? <AgreementPage studyId={study.id} d={d} /> : null}
      {d.kind === 'adjudicate' ? <AdjudicatePage studyId={study.id} d={d} /> : null}
    </div>
  )
}

/**
 * The study card: the prompt lab, and each labelling run with its three pages (staff); agreement and
 * adjudication only for a study adjudicator; else no card.
 */
export function LabellingStudyPanel({ studyId, data }: StudyPanelProps) {
  const { staff, adjudicator, runs } = (data ?? { staff: false, runs: [] }) as {
    staff?: boolean
    adjudicator?: boolean
    runs: Array<{ id: string; name: string; status: string }>
  }
  if (!staff && !adjudicator) return null
  return (
    <Card title="Labelling projects" description="Progress, agreement (κ, α, against gold) and adjudication per run.">
      {staff ? (
        <>
          <p className="mb-2 text-sm">
            <Link className="text-brand-700 underline" href={`/studies/${studyId}/p/labelling/prompt-lab`}>
              Prompt lab
            </Link>{' '}
            <span className="text-stone-600">
              : compare the LLM labeller&apos;s prompt variants against gold (Thomas et al., Table 2).
            </span>
          </p>
          <p className="mb-2 text-sm">
            <Link className="text-brand-700 underline" href={`/studies/${studyId}/p/labelling/import-sessions`}>
              Import sessions
            </Link>{' '}
            <span className="text-stone-600">: pick sessions of this study and label them as transcripts.</span>
          </p>
        </>
      ) : null}
      {runs.length ? null : <p className="text-sm text-stone-600">No labelling runs in this study yet.</p>}
      <ul className="space-y-1 text-sm">
        {runs.map((r) => (
          <li key={r.id}>
            <span className="font-medium">{r.name}</span> <Badge>{r.status}</Badge>{' '}
            {staff ? (
              <>
                <Link className="text-brand-700 underline" href={`/studies/${studyId}/p/labelling/project/${r.id}`}>
                  Project
                </Link>
                {' · '}
              </>
            ) : null}
            <Link className="text-brand-700 underline" href={`/studies/${studyId}/p/labelling/agreement/${r.id}`}>
              Agreement
            </Link>
            {' · '}
            <Link className="text-brand-700 underline" href={`/studies/${studyId}/p/labelling/adjudicate/${r.id}`}>
              Adjudication
            </Link>
          </li>
        ))}
      </ul>
    </Card>
  )
}

function Tabs({
  studyId,
  runId,
  current,
  pseudo,
}: {
  studyId: string
  runId: string
  current: string
  pseudo: boolean
}) {
  const tab = (kind: string, label: string) => (
    <Link
      key={kind}
      href={`/studies/${studyId}/p/labelling/${kind}/${runId}${pseudo ? '?pseudo=1' : ''}`}
      aria-current={current === kind ? 'page' : undefined}
      className={current === kind ? 'font-semibold text-stone-900' : 'text-brand-700 underline'}
    >
      {label}
    </Link>
  )
  return (
    <span className="space-x-3">
      {tab('project', 'Project')}
      {tab('agreement', 'Agreement')}
      {tab('adjudicate', 'Adjudication')}
    </span>
  )
}

const f3 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(3))
const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)} %`)
const secs = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(1)} s`)
const show = (v: unknown) => (v === null || v === undefined ? '—' : String(v))

/** Query-string links that keep the page's other parameters. */
function hrefWith(base: string, params: Record<string, string | number | boolean | null | undefined>) {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params))
    if (v !== null && v !== undefined && v !== false && v !== '') q.set(k, v === true ? '1' : String(v))
  const s = q.toString()
  return s ? `${base}?${s}` : base
}

function PseudoToggle({
  base,
  params,
  pseudo,
}: {
  base: string
  params: Record<string, string | number | boolean | null | undefined>
  pseudo: boolean
}) {
  return (
    <Link className="text-sm text-brand-700 underline" href={hrefWith(base, { ...params, pseudo: !pseudo })}>
      {pseudo ? 'Show annotator names' : 'Pseudonymise annotators (Annotator 1…N)'}
    </Link>
  )
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="space-y-2">
      <h2 className="text-lg font-semibold text-stone-900">{title}</h2>
      {children}
    </section>
  )
}

// ───────────────────────────── project ─────────────────────────────

function ProjectPage({ studyId, d }: { studyId: string; d: ProjectPageData }) {
  const base = `/studies/${studyId}/p/labelling/project/${d.run.id}`
  const params = {
    annotator: d.filters.annotator,
    item: d.filters.item,
    disagree: d.filters.disagree,
    short: d.filters.short,
    pseudo: d.pseudo,
  }
  const str = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === true ? '1' : v ? String(v) : undefined]))
  return (
    <>
      <div className="flex flex-wrap items-center gap-4 text-sm">
        <span>
          <strong>{d.totals.labels}</strong> labels on <strong>{d.totals.items}</strong> items ({d.run.slots} per item):{' '}
          <strong>{d.totals.complete}</strong> complete,{' '}
          <strong className={d.totals.short ? 'text-amber-700' : ''}>{d.totals.short}</strong> short
        </span>
        <PseudoToggle base={base} params={params} pseudo={d.pseudo} />
      </div>
      <Section title="Annotators">
        {d.annotators.length ? (
          <Table
            caption="Progress per annotator"
            head={['Annotator', 'Labels', 'Median time per item', 'Last activity', '']}
          >
            {d.annotators.map((a) => (
              <tr key={a.key}>
                <Td>{a.name}</Td>
                <Td>{a.labels}</Td>
                <Td>{secs(a.medianMs)}</Td>
                <Td>{formatDate(a.lastAt)}</Td>
                <Td>
                  <Link className="text-brand-700 underline" href={hrefWith(base, { ...params, annotator: a.key })}>
                    Their labels
                  </Link>
                </Td>
              </tr>
            ))}
          </Table>
        ) : (
          <EmptyState title="No labels yet">Annotators appear here with their first label.</EmptyState>
        )}
      </Section>
      <Section title="Items">
        <form method="get" action={base} className="flex flex-wrap items-end gap-3 text-sm">
          {d.pseudo ? <input type="hidden" name="pseudo" value="1" /> : null}
          <label>
            <span className="block text-stone-600">Item id</span>
            <input
              name="item"
              defaultValue={d.filters.item ?? ''}
              className="rounded-md border border-stone-300 px-2 py-1"
            />
          </label>
          <label>
            <span className="block text-stone-600">Annotator</span>
            <select
              name="annotator"
              defaultValue={d.filters.annotator ?? ''}
              className="rounded-md border border-stone-300 px-2 py-1"
            >
              <option value="">Everyone</option>
              {d.annotators.map((a) => (
                <option key={a.key} value={a.key}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
          <label className="flex items-center gap-1">
            <input type="checkbox" name="disagree" value="1" defaultChecked={d.filters.disagree} /> Disagreements only
          </label>
          <label className="flex items-center gap-1">
            <input type="checkbox" name="short" value="1" defaultChecked={d.filters.short} /> Too few labels only
          </label>
          <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1 hover:bg-stone-100">
            Filter
          </button>
        </form>
        {d.items.rows.length ? (
          <Table caption="Progress per item" head={['#', 'Item', 'Labels', 'Status', 'Overall answers']}>
            {d.items.rows.map((it) => (
              <tr key={it.position} className={it.status === 'short' ? 'bg-amber-50' : ''}>
                <Td>{it.position + 1}</Td>
                <Td>
                  <Link className="text-brand-700 underline" href={hrefWith(base, { ...params, item: it.itemId })}>
                    {it.itemId}
                  </Link>
                </Td>
                <Td>
                  {it.labels} / {d.run.slots}
                </Td>
                <Td>
                  <Badge tone={it.status === 'complete' ? 'green' : 'amber'}>
                    {it.status === 'complete' ? 'complete' : 'too few labels'}
                  </Badge>
                </Td>
                <Td>{it.disagree ? <Badge tone="red">disagree</Badge> : it.labels ? <Badge>agree</Badge> : '—'}</Td>
              </tr>
            ))}
          </Table>
        ) : (
          <EmptyState title="No items match">Clear the filters to see every item.</EmptyState>
        )}
        <Pagination
          page={d.items.page}
          pageCount={Math.max(1, Math.ceil(d.items.total / d.items.pageSize))}
          total={d.items.total}
          params={str({ ...params, lpage: d.labels.page })}
          basePath={base}
        />
      </Section>
      <Section title="Labels">
        {d.labels.rows.length ? (
          <Table
            caption="Label browser"
            head={['Item', 'Annotator', ...d.schema.questions.map((q) => q.id), 'Rationale', 'Schema', 'Time', 'At']}
          >
            {d.labels.rows.map((l) => (
              <tr key={l.sessionId}>
                <Td>{l.itemId}</Td>
                <Td>{l.annotator}</Td>
                {d.schema.questions.map((q) => (
                  <Td key={q.id}>{show(l.answers[q.id])}</Td>
                ))}
                <Td className="max-w-md whitespace-pre-wrap">{l.rationale ?? '—'}</Td>
                <Td>v{show(l.schemaVersion)}</Td>
                <Td>{secs(l.elapsedMs)}</Td>
                <Td>{formatDate(l.createdAt)}</Td>
              </tr>
            ))}
          </Table>
        ) : (
          <EmptyState title="No labels yet">Labels appear here as annotators send them.</EmptyState>
        )}
        <Pagination
          page={d.labels.page}
          pageCount={Math.max(1, Math.ceil(d.labels.total / d.labels.pageSize))}
          total={d.labels.total}
          params={str({ ...params, page: d.items.page })}
          basePath={base}
          pageParam="lpage"
        />
      </Section>
    </>
  )
}

// ───────────────────────────── agreement ─────────────────────────────

/** A κ cell shaded by its value (−1 … 1: red to green). */
function shade(k: number | null): string {
  if (k === null) return 'bg-stone-50 text-stone-400'
  if (k >= 0.8) return 'bg-green-200'
  if (k >= 0.6) return 'bg-green-100'
  if (k >= 0.4) return 'bg-lime-50'
  if (k >= 0.2) return 'bg-amber-50'
  return 'bg-red-100'
}

function VersusTable({ caption, rows }: { caption: string; rows: VersusGold[] }) {
  return (
    <Table
      caption={caption}
      head={[
        'Who',
        'n',
        'Confusion (m0g0 m0g1 / m1g0 m1g1)',
        'Accuracy',
        'Cohen κ [95 % CI]',
        'MAE binary',
        'MAE graded',
        'P(agree | 0)',
        'P(agree | 1)',
        'AUC [95 % CI]',
      ]}
    >
      {rows.map((r) => (
        <tr key={r.who}>
          <Td>{r.who}</Td>
          <Td>{r.n}</Td>
          <Td className="font-mono text-xs">
            {r.confusion.model0_gold0} {r.confusion.model0_gold1} / {r.confusion.model1_gold0}{' '}
            {r.confusion.model1_gold1}
          </Td>
          <Td>{pct(r.accuracy)}</Td>
          <Td>
            {f3(r.kappa.estimate)} [{f3(r.kappa.lo)}, {f3(r.kappa.hi)}]
          </Td>
          <Td>{f3(r.maeBinary)}</Td>
          <Td>{f3(r.maeGraded)}</Td>
          <Td>{pct(r.pAgreeModel0)}</Td>
          <Td>{pct(r.pAgreeModel1)}</Td>
          <Td>
            {f3(r.auc.estimate)} [{f3(r.auc.lo)}, {f3(r.auc.hi)}]
          </Td>
        </tr>
      ))}
    </Table>
  )
}

function AgreementPage({ studyId, d }: { studyId: string; d: AgreementPageData }) {
  const base = `/studies/${studyId}/p/labelling/agreement/${d.run.id}`
  const params = {
    question: d.question,
    level: d.level,
    compare: d.compare.run?.id,
    resamples: d.resamples,
    seed: d.seed,
    pseudo: d.pseudo,
  }
  return (
    <>
      <form method="get" action={base} className="flex flex-wrap items-end gap-3 text-sm">
        {d.pseudo ? <input type="hidden" name="pseudo" value="1" /> : null}
        <label>
          <span className="block text-stone-600">Question</span>
          <select name="question" defaultValue={d.question} className="rounded-md border border-stone-300 px-2 py-1">
            {d.questions.map((q) => (
              <option key={q.id} value={q.id}>
                {q.id} ({q.type}): {q.text.slice(0, 60)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="block text-stone-600">α level</span>
          <select name="level" defaultValue={d.level} className="rounded-md border border-stone-300 px-2 py-1">
            {['nominal', 'ordinal', 'interval', 'ratio'].map((l) => (
              <option key={l}>{l}</option>
            ))}
          </select>
        </label>
        <label>
          <span className="block text-stone-600">Compare with run</span>
          <select
            name="compare"
            defaultValue={d.compare.run?.id ?? ''}
            className="rounded-md border border-stone-300 px-2 py-1"
          >
            <option value="">None</option>
            {d.runs.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="block text-stone-600">Bootstrap resamples</span>
          <input
            type="number"
            name="resamples"
            min={1}
            max={1000}
            defaultValue={d.resamples}
            className="w-24 rounded-md border border-stone-300 px-2 py-1"
          />
        </label>
        <label>
          <span className="block text-stone-600">Seed</span>
          <input
            type="number"
            name="seed"
            min={0}
            defaultValue={d.seed}
            className="w-24 rounded-md border border-stone-300 px-2 py-1"
          />
        </label>
        <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1 hover:bg-stone-100">
          Compute
        </button>
        <PseudoToggle base={base} params={params} pseudo={d.pseudo} />
      </form>
      {d.labels === 0 ? (
        <EmptyState title="No labels yet">Agreement appears once items have two labels or more.</EmptyState>
      ) : (
        <>
          <Section title="Overall">
            <dl className="grid grid-cols-2 gap-4 text-sm md:grid-cols-4">
              <div>
                <dt className="text-stone-500">Fleiss’ κ</dt>
                <dd className="text-xl font-semibold">{f3(d.fleiss.kappa)}</dd>
                <dd className="text-xs text-stone-500">
                  {d.fleiss.note ?? `${d.fleiss.items} items with all ${d.fleiss.raters} labels`}
                </dd>
              </div>
              <div>
                <dt className="text-stone-500">Krippendorff’s α ({d.level})</dt>
                <dd className="text-xl font-semibold">{f3(d.alpha.alpha)}</dd>
                <dd className="text-xs text-stone-500">{d.alpha.pairable} pairable values</dd>
              </div>
              <div>
                <dt className="text-stone-500">Items / labels</dt>
                <dd className="text-xl font-semibold">
                  {d.items} / {d.labels}
                </dd>
              </div>
              <div>
                <dt className="text-stone-500">Annotators</dt>
                <dd className="text-xl font-semibold">{d.annotators.length}</dd>
              </div>
            </dl>
          </Section>
          <Section title="Pairwise Cohen’s κ">
            <Table caption="Pairwise κ matrix" head={['', ...d.annotators.map((a) => a.name)]}>
              {d.annotators.map((a, r) => (
                <tr key={a.key}>
                  <Td className="font-medium">{a.name}</Td>
                  {d.annotators.map((b, s) => (
                    <Td key={b.key} className={r === s ? 'text-stone-400' : shade(d.pairwise.kappa[r]?.[s] ?? null)}>
                      {r === s ? '—' : f3(d.pairwise.kappa[r]?.[s])}
                      <span className="block text-xs text-stone-500">n = {d.pairwise.n[r]?.[s] ?? 0}</span>
                    </Td>
                  ))}
                </tr>
              ))}
            </Table>
          </Section>
          <Section title="Each annotator against the rest">
            <Table
              caption="Per-annotator agreement"
              head={['Annotator', 'Mean pairwise κ', 'κ vs the others’ majority', 'n']}
            >
              {d.perAnnotator.map((p) => (
                <tr key={p.name}>
                  <Td>{p.name}</Td>
                  <Td className={shade(p.meanPairwiseKappa)}>{f3(p.meanPairwiseKappa)}</Td>
                  <Td className={shade(p.kappaVsMajority)}>{f3(p.kappaVsMajority)}</Td>
                  <Td>{p.n}</Td>
                </tr>
              ))}
            </Table>
          </Section>
          <Section title="Against gold">
            {d.gold ? (
              <>
                <p className="text-sm text-stone-600">
                  {d.gold.items} items with gold. Binarised at ≥ 1; κ and AUC with a seeded bootstrap ({d.resamples}{' '}
                  resamples, seed {d.seed}).
                </p>
                <VersusTable
                  caption="Against gold"
                  rows={[...d.gold.perAnnotator, ...(d.gold.majority ? [d.gold.majority] : [])]}
                />
              </>
            ) : (
              <EmptyState title="No gold">The dataset holds no gold label for these items.</EmptyState>
            )}
          </Section>
          {d.compare.run ? (
            <Section title={`Run “${d.compare.run.name}”`}>
              {d.compare.vsMajority ? (
                <VersusTable
                  caption="Against this run’s majority"
                  rows={[{ ...d.compare.vsMajority, who: 'vs this run’s majority' }]}
                />
              ) : null}
              {d.compare.vsGold ? (
                <VersusTable caption="Against gold" rows={[{ ...d.compare.vsGold, who: 'vs gold' }]} />
              ) : null}
              {!d.compare.vsMajority && !d.compare.vsGold ? <EmptyState title="No common items with labels" /> : null}
            </Section>
          ) : null}
        </>
      )}
    </>
  )
}

// ───────────────────────────── adjudication ─────────────────────────────

function AdjudicatePage({ studyId, d }: { studyId: string; d: AdjudicationPageData }) {
  const base = `/studies/${studyId}/p/labelling/adjudicate/${d.run.id}`
  const params = { question: d.question, against: d.against, compare: d.compare?.id, pseudo: d.pseudo }
  return (
    <>
      <form method="get" action={base} className="flex flex-wrap items-end gap-3 text-sm">
        {d.pseudo ? <input type="hidden" name="pseudo" value="1" /> : null}
        <label>
          <span className="block text-stone-600">Question</span>
          <select name="question" defaultValue={d.question} className="rounded-md border border-stone-300 px-2 py-1">
            {d.questions.map((q) => (
              <option key={q.id} value={q.id}>
                {q.id}: {q.text.slice(0, 60)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="block text-stone-600">Disagreement</span>
          <select name="against" defaultValue={d.against} className="rounded-md border border-stone-300 px-2 py-1">
            <option value="annotators">among the annotators</option>
            <option value="gold">with gold</option>
            <option value="compare">with another run</option>
          </select>
        </label>
        <label>
          <span className="block text-stone-600">Other run</span>
          <select
            name="compare"
            defaultValue={d.compare?.id ?? ''}
            className="rounded-md border border-stone-300 px-2 py-1"
          >
            <option value="">None</option>
            {d.runs.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1 hover:bg-stone-100">
          Show
        </button>
        <PseudoToggle base={base} params={params} pseudo={d.pseudo} />
      </form>
      <p className="text-sm text-stone-600">{d.total} disputed items.</p>
      {d.items.length ? (
        <ul className="space-y-4">
          {d.items.map((it) => (
            <li key={it.position} className="rounded-lg border border-stone-200 bg-white p-4">
              <div className="flex flex-wrap items-center gap-2 text-sm">
                <span className="font-semibold">{it.itemId}</span>
                <span className="text-stone-500">item {it.position + 1}</span>
                {it.majority !== null ? (
                  <Badge>majority {String(it.majority)}</Badge>
                ) : (
                  <Badge tone="amber">no majority</Badge>
                )}
                {it.gold !== null ? <Badge tone="brand">gold {String(it.gold)}</Badge> : null}
                {it.other.length ? (
                  <Badge tone="brand">
                    {d.compare?.name}: {it.other.map(String).join(', ')}
                  </Badge>
                ) : null}
                {it.final ? (
                  <Badge tone="green">
                    final {String(it.final.value)} by {it.final.adjudicator ?? '?'}
                  </Badge>
                ) : null}
              </div>
              <div className="mt-3 grid gap-3 md:grid-cols-3">
                {it.labels.map((l, i) => (
                  <div
                    key={`${l.annotator}-${i}`}
                    className="rounded-md border border-stone-100 bg-stone-50 p-3 text-sm"
                  >
                    <p className="font-medium">{l.annotator}</p>
                    <p className="text-lg">{show(l.value)}</p>
                    <p className="whitespace-pre-wrap text-stone-600">{l.rationale ?? 'No rationale.'}</p>
                  </div>
                ))}
              </div>
              {it.final ? <p className="mt-2 text-sm text-stone-600">Note: {it.final.note}</p> : null}
              {d.canAdjudicate ? (
                <AdjudicateForm
                  runId={d.run.id}
                  position={it.position}
                  question={d.question}
                  options={d.options}
                  current={it.final}
                />
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <EmptyState title="Nothing to adjudicate">No item is disputed this way (yet).</EmptyState>
      )}
      <Pagination
        page={d.page}
        pageCount={Math.max(1, Math.ceil(d.total / d.pageSize))}
        total={d.total}
        params={Object.fromEntries(
          Object.entries(params).map(([k, v]) => [k, v === true ? '1' : v ? String(v) : undefined]),
        )}
        basePath={base}
      />
    </>
  )
}
