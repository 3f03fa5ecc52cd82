import type { CompareProps } from '@/components/protocols/types'
import { Delta } from '@/components/runs/delta'
import { Card } from '@/components/ui/card'
import { Table, Td } from '@/components/ui/table'
import type { EvinceCompareView as Data } from '@/protocols/evince/server/plugin'

const pct = (x: number) => `${(x * 100).toFixed(1)}%`
type Side = Data['a']
type Row = Side['accuracy']['rows'][number]

function Cell({ row, value }: { row: Row | undefined; value: (r: Row) => string }) {
  return row ? <span className="tabular-nums">{value(row)}</span> : <span className="text-stone-500">—</span>
}

/** Debates left out because their logs break the rules (see the run pages), if any. */
function excludedNote(a: number, b: number): string {
  if (!a && !b) return ''
  return ` Left out because their logs hold a message the rules refuse: ${a} in A, ${b} in B (their run pages name them).`
}

/**
 * Two debate runs' accuracy tables side by side (each with its own label merges): top-1, top-k and
 * MRR with 95 % intervals per predictor, and B − A in percentage points (MRR in its own units).
 */
export function EvinceCompareView({ a, b, data }: CompareProps) {
  const d = data as Data
  const keys = [...new Set([...d.a.accuracy.rows.map((r) => r.key), ...d.b.accuracy.rows.map((r) => r.key)])]
  const find = (s: Side, key: string) => s.accuracy.rows.find((r) => r.key === key)
  const sameK = d.a.k === d.b.k
  return (
    <Card
      title="Accuracy, A vs B"
      description={`A (${a.name}): ${d.a.accuracy.n} of ${d.a.cases} cases scored (k = ${d.a.k}); B (${b.name}): ${d.b.accuracy.n} of ${d.b.cases} (k = ${d.b.k}). Δ is B − A, in percentage points for top-1 and top-k.${sameK ? '' : ' The runs use different k, so their top-k columns are not comparable.'}${excludedNote(d.a.accuracy.excluded, d.b.accuracy.excluded)}`}
    >
      <Table
        caption="Accuracy of both runs"
        head={[
          'Predictor',
          'Top-1 A',
          'Top-1 B',
          'Δ top-1',
          'Top-k A',
          'Top-k B',
          'Δ top-k',
          'MRR A',
          'MRR B',
          'Δ MRR',
        ]}
      >
        {keys.map((key) => {
          const ra = find(d.a, key)
          const rb = find(d.b, key)
          const ci = (v: number, c: [number, number]) => `${pct(v)} (${pct(c[0])}–${pct(c[1])})`
          return (
            <tr key={key} data-testid={`compare-${key}`}>
              <Td className="font-medium">{(ra ?? rb)?.label}</Td>
              <Td>
                <Cell row={ra} value={(r) => ci(r.top1, r.top1Ci)} />
              </Td>
              <Td>
                <Cell row={rb} value={(r) => ci(r.top1, r.top1Ci)} />
              </Td>
              <Td>
                <Delta a={ra ? ra.top1 * 100 : null} b={rb ? rb.top1 * 100 : null} digits={1} unit=" pp" />
              </Td>
              <Td>
                <Cell row={ra} value={(r) => ci(r.topk, r.topkCi)} />
              </Td>
              <Td>
                <Cell row={rb} value={(r) => ci(r.topk, r.topkCi)} />
              </Td>
              <Td>
                {sameK ? (
                  <Delta a={ra ? ra.topk * 100 : null} b={rb ? rb.topk * 100 : null} digits={1} unit=" pp" />
                ) : (
                  <span className="text-stone-500">k differs</span>
                )}
              </Td>
              <Td>
                <Cell row={ra} value={(r) => r.mrr.toFixed(3)} />
              </Td>
              <Td>
                <Cell row={rb} value={(r) => r.mrr.toFixed(3)} />
              </Td>
              <Td>
                <Delta a={ra?.mrr ?? null} b={rb?.mrr ?? null} digits={3} />
              </Td>
            </tr>
          )
        })}
      </Table>
      {d.a.accuracy.n === 0 || d.b.accuracy.n === 0 ? (
        <p className="mt-2 text-xs text-stone-500">
          A run without finished cases that have a ground truth has no accuracy yet.
        </p>
      ) : null}
    </Card>
  )
}
