'use client'

import {
  Bar,
  BarChart,
  CartesianGrid,
  LabelList,
  Legend,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts'

export interface MethodBar {
  method: string
  /** ×100: R above zero, λ·C drawn below zero, T = R + λ·C the whole column. */
  R: number
  cost: number
  T: number
  hir: number
}

/**
 * Figure 2 of Feng et al.: per method a column whose part above zero is R and whose part below zero is
 * λ·C (drawn as −λ·C), so the column's whole height is T = R + λ·C; HIR is printed on the bar.
 */
export function MethodsChart({ bars, lambda }: { bars: MethodBar[]; lambda: number }) {
  if (!bars.length) return <p className="text-sm text-stone-500">Appears when trajectories have finished.</p>
  const data = bars.map((b) => ({
    method: b.method,
    R: round(b.R),
    negCost: round(-b.cost),
    T: round(b.T),
    hirLabel: `HIR ${b.hir.toFixed(1)}`,
  }))
  return (
    <figure aria-label={`R and λ·C per method at λ = ${lambda}`} className="h-80 w-full">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={data} stackOffset="sign" margin={{ top: 24, right: 16, bottom: 24, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e7e5e4" />
          <XAxis dataKey="method" interval={0} tick={{ fontSize: 11 }} />
          <YAxis />
          <Tooltip
            formatter={(value, name) =>
              name === 'negCost' ? [Number(value) * -1, `λ·C (below zero)`] : [value, String(name)]
            }
          />
          <Legend verticalAlign="top" formatter={(v) => (v === 'negCost' ? 'λ·C (below zero)' : 'R')} />
          <ReferenceLine y={0} stroke="#57534e" />
          <Bar dataKey="R" stackId="t" fill="#0f766e" isAnimationActive={false}>
            <LabelList dataKey="hirLabel" position="top" style={{ fontSize: 11, fill: '#44403c' }} />
          </Bar>
          <Bar dataKey="negCost" stackId="t" fill="#b45309" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
      <figcaption className="mt-1 text-xs text-stone-500">
        Column height = T (×100) = R + λ·C; R above zero, λ·C below zero; HIR (×100) on each bar.
      </figcaption>
    </figure>
  )
}

const round = (x: number) => Math.round(x * 100) / 100
