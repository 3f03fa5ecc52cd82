import { FIG4_ROWS } from '@/protocols/pxp/ui/dashboard'
import type { CompareProps } from '@/components/protocols/types'
import { Delta } from '@/components/runs/delta'
import { Card } from '@/components/ui/card'
import { Table, Td } from '@/components/ui/table'
import type { PxpCompare } from '@/protocols/pxp/server/dashboard'

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1))
type Side = PxpCompare['a']

function Cell({ side, pick, prop }: { side: Side; pick: (r: any) => any; prop: (p: any) => number }) {
  if (!side.report || !side.proportions) return <span className="text-stone-500">no messages</span>
  const s = pick(side.report)
  return (
    <span className="tabular-nums">
      {fmt(s.median)}
      {side.report.repetitions > 1 ? ` (${fmt(s.min)}–${fmt(s.max)})` : ''}{' '}
      <span className="text-stone-500">· {prop(side.proportions).toFixed(2)}</span>
    </span>
  )
}

/** Two PXP runs' Fig. 4 tables side by side, with B − A for the median count and the proportion. */
export function PxpCompareView({ a, b, data }: CompareProps) {
  const d = data as PxpCompare
  const sessions = (s: Side) => (s.report ? `${fmt(s.report.sessions)} sessions × ${s.report.repetitions} rep.` : '—')
  return (
    <Card
      title="Intelligibility (Fig. 4), A vs B"
      description="Sessions: median (min–max) over repetitions · proportion of the median number of sessions. The last two columns are B − A."
    >
      <Table
        caption="Fig. 4 of both runs"
        head={['Property', `A: ${a.name}`, `B: ${b.name}`, 'Δ sessions', 'Δ proportion']}
      >
        <tr>
          <Td className="text-stone-500">Sessions</Td>
          <Td className="text-stone-500">{sessions(d.a)}</Td>
          <Td className="text-stone-500">{sessions(d.b)}</Td>
          <Td>
            <Delta a={d.a.report?.sessions ?? null} b={d.b.report?.sessions ?? null} digits={1} />
          </Td>
          <Td />
        </tr>
        {FIG4_ROWS.map((row) => (
          <tr key={row.key} data-testid={`compare-${row.key}`}>
            <Td className="font-medium">{row.label}</Td>
            <Td>
              <Cell side={d.a} pick={row.pick} prop={row.prop} />
            </Td>
            <Td>
              <Cell side={d.b} pick={row.pick} prop={row.prop} />
            </Td>
            <Td>
              <Delta
                a={d.a.report ? row.pick(d.a.report).median : null}
                b={d.b.report ? row.pick(d.b.report).median : null}
                digits={1}
              />
            </Td>
            <Td>
              <Delta
                a={d.a.proportions ? row.prop(d.a.proportions) : null}
                b={d.b.proportions ? row.prop(d.b.proportions) : null}
                digits={2}
              />
            </Td>
          </tr>
        ))}
      </Table>
    </Card>
  )
}
