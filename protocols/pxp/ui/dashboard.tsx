import Link from 'next/link'
import { BoundChart, SequenceChart } from '@/protocols/pxp/ui/dashboard-charts'
import type { DashboardProps } from '@/components/protocols/types'
import { Alert, Card, EmptyState } from '@/components/ui/card'
import { Pagination, Table, Td } from '@/components/ui/table'
import type { pxpDashboard, SESSION_CLASSES } from '@/protocols/pxp/server/dashboard'

type Data = Awaited<ReturnType<typeof pxpDashboard>>

type Spread = { median: number; min: number; max: number }

export const FIG4_ROWS: Array<{
  key: string
  label: string
  definition: string
  pick: (r: any) => Spread
  prop: (p: any) => number
}> = [
  {
    key: 'oneWay-human',
    label: 'One-way, human (h)',
    definition: 'h sent a RATIFY or REVISE and never a REJECT (Definition 1).',
    pick: (r) => r.oneWay.human,
    prop: (p) => p.oneWay.human,
  },
  {
    key: 'oneWay-machine',
    label: 'One-way, machine (m)',
    definition: 'm sent a RATIFY or REVISE and never a REJECT (Definition 1).',
    pick: (r) => r.oneWay.machine,
    prop: (p) => p.oneWay.machine,
  },
  {
    key: 'twoWay',
    label: 'Two-way',
    definition: 'One-way for both agents.',
    pick: (r) => r.twoWay,
    prop: (p) => p.twoWay,
  },
  {
    key: 'strong-human',
    label: 'Strong, human',
    definition: 'Every tag h sent after INIT is RATIFY or REVISE, and there is at least one (Definition 2).',
    pick: (r) => r.strong.human,
    prop: (p) => p.strong.human,
  },
  {
    key: 'strong-machine',
    label: 'Strong, machine',
    definition: 'Every tag m sent after INIT is RATIFY or REVISE, and there is at least one (Definition 2).',
    pick: (r) => r.strong.machine,
    prop: (p) => p.strong.machine,
  },
  {
    key: 'ultraStrong-human',
    label: 'Ultra-strong, human',
    definition: 'Strong for h, with at least one REVISE (Definition 2).',
    pick: (r) => r.ultraStrong.human,
    prop: (p) => p.ultraStrong.human,
  },
  {
    key: 'ultraStrong-machine',
    label: 'Ultra-strong, machine',
    definition: 'Strong for m, with at least one REVISE (Definition 2).',
    pick: (r) => r.ultraStrong.machine,
    prop: (p) => p.ultraStrong.machine,
  },
]

const CLASS_LABELS: Record<keyof typeof SESSION_CLASSES, string> = {
  'one-way-h': 'one-way h',
  'one-way-m': 'one-way m',
  'two-way': 'two-way',
  'strong-h': 'strong h',
  'strong-m': 'strong m',
  'ultra-strong-h': 'ultra-strong h',
  'ultra-strong-m': 'ultra-strong m',
  'not-intelligible': 'neither',
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1))

/**
 * The intelligibility dashboard of a PXP run: the paper's Fig. 4 table with the definitions beside
 * the numbers, the Fig. 5 curves, the most frequent tag sequences and the sessions by class.
 */
export function PxpDashboard({ runId, data, params: sp, basePath: base, canInspect }: DashboardProps) {
  const d = data as Data
  const { report, proportions } = d
  return (
    <>
      <p className="mb-4 max-w-3xl text-sm text-stone-600">
        Counts are sessions; over R repetitions the number shown is the median with the min–max range; the proportion is
        the median count over the median number of sessions (the paper's Fig. 4).
      </p>
      {d.unfinished > 0 && report && (
        <div className="mb-4">
          <Alert tone="info">
            {d.unfinished} session{d.unfinished === 1 ? ' is' : 's are'} not finished yet; they are counted as they
            stand.
          </Alert>
        </div>
      )}
      {!report || !proportions ? (
        <EmptyState title="No messages yet.">The numbers appear as soon as sessions have messages.</EmptyState>
      ) : (
        <div className="space-y-6">
          <Card
            title="Intelligibility (Fig. 4)"
            description={`${report.repetitions} repetition${report.repetitions === 1 ? '' : 's'}, ${fmt(report.sessions)} sessions per repetition (median).`}
          >
            <Table
              caption="Intelligible sessions"
              head={['Property', 'Sessions: median (min–max)', 'Proportion', 'Definition']}
            >
              {FIG4_ROWS.map((row) => {
                const s = row.pick(report)
                return (
                  <tr key={row.key}>
                    <Td className="font-medium">{row.label}</Td>
                    <Td>
                      <span data-testid={`fig4-${row.key}`} data-median={s.median} data-min={s.min} data-max={s.max}>
                        {fmt(s.median)}
                        {report.repetitions > 1 ? ` (${fmt(s.min)}–${fmt(s.max)})` : ''}
                      </span>
                    </Td>
                    <Td>{row.prop(proportions).toFixed(2)}</Td>
                    <Td className="text-xs text-stone-600">{row.definition}</Td>
                  </tr>
                )
              })}
            </Table>
            <p className="mt-2 text-xs text-stone-500">
              T_a is the sequence of tags agent a sent, INIT excluded. Invariants: two-way ≤ min(one-way h, one-way m);
              ultra-strong ⊆ strong ⊆ one-way.
            </p>
          </Card>
          <div className="grid gap-6 xl:grid-cols-2">
            <Card
              title="One-way intelligibility by message bound (Fig. 5)"
              description="Sessions one-way intelligible for each agent when only messages 1..j are counted. A later REJECT can lower a curve."
            >
              <BoundChart byBound={report.byBound} />
            </Card>
            <Card title="Tag sequences" description="The most frequent dialogues, tag_sender in message order.">
              <SequenceChart sequences={d.sequences} />
            </Card>
          </div>
          <section aria-labelledby="drill">
            <div className="mb-2 flex flex-wrap items-center justify-between gap-2">
              <h2 id="drill" className="text-lg font-semibold">
                Sessions
              </h2>
              <nav aria-label="Filter sessions by class" className="flex flex-wrap gap-1 text-xs">
                <Link
                  href={base}
                  aria-current={!sp.class ? 'page' : undefined}
                  className={`rounded-full border px-2 py-0.5 ${!sp.class ? 'border-brand-600 bg-brand-50' : 'border-stone-300 bg-white'}`}
                >
                  all
                </Link>
                {Object.entries(CLASS_LABELS).map(([k, label]) => (
                  <Link
                    key={k}
                    href={`${base}?class=${k}`}
                    aria-current={sp.class === k ? 'page' : undefined}
                    className={`rounded-full border px-2 py-0.5 ${sp.class === k ? 'border-brand-600 bg-brand-50' : 'border-stone-300 bg-white'}`}
                  >
                    {label}
                  </Link>
                ))}
              </nav>
            </div>
            {d.sessions.total === 0 ? (
              <EmptyState title="No session in this class." />
            ) : (
              <>
                <Table
                  caption="Sessions and their intelligibility"
                  head={['Session', 'Tags', 'One-way', 'Strong', 'Ultra-strong', '']}
                >
                  {d.sessions.items.map((s) => (
                    <tr key={s.id}>
                      <Td>
                        {s.repetition}.{s.position + 1}
                      </Td>
                      <Td className="font-mono text-xs">{s.sequence}</Td>
                      <Td>{[s.oh && 'h', s.om && 'm'].filter(Boolean).join(', ') || '—'}</Td>
                      <Td>{[s.sh && 'h', s.sm && 'm'].filter(Boolean).join(', ') || '—'}</Td>
                      <Td>{[s.uh && 'h', s.um && 'm'].filter(Boolean).join(', ') || '—'}</Td>
                      <Td>
                        {canInspect && (
                          <Link href={`/runs/${runId}/sessions/${s.id}`} className="text-brand-700 underline">
                            Inspect
                          </Link>
                        )}
                      </Td>
                    </tr>
                  ))}
                </Table>
                <Pagination {...d.sessions} params={sp} basePath={base} />
              </>
            )}
          </section>
        </div>
      )}
    </>
  )
}
