'use client'

import { LineLegend } from '@/components/charts/line-legend'
import { integerTicks, niceTicks, tickText } from '@/lib/chart-ticks'
import type { RoundPoint } from '@/protocols/evince/core'
import { CartesianGrid, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'

const SERIES: Array<{
  title: string
  unit: string
  lines: Array<{ key: keyof RoundPoint; name: string; color: string; dash?: string }>
}> = [
  {
    title: 'Entropy of each agent',
    unit: 'bits',
    lines: [
      { key: 'entropyA', name: 'H(A)', color: '#0d9488' },
      { key: 'entropyB', name: 'H(B)', color: '#d97706', dash: '5 3' },
    ],
  },
  {
    title: 'KL divergence, both ways (ε-smoothed)',
    unit: 'bits',
    lines: [
      { key: 'klAB', name: 'KL(A‖B)', color: '#0d9488' },
      { key: 'klBA', name: 'KL(B‖A)', color: '#d97706', dash: '5 3' },
    ],
  },
  {
    title: 'Cross-entropy, both ways (ε-smoothed)',
    unit: 'bits',
    lines: [
      { key: 'crossEntropyAB', name: 'H(A,B)', color: '#0d9488' },
      { key: 'crossEntropyBA', name: 'H(B,A)', color: '#d97706', dash: '5 3' },
    ],
  },
  {
    title: 'Agreement: JSD, WD (0/1 metric), normalised MI',
    unit: '0–1',
    lines: [
      { key: 'jsd', name: 'JSD', color: '#7c3aed' },
      { key: 'wd', name: 'WD', color: '#dc2626', dash: '5 3' },
      { key: 'nmi', name: 'NMI', color: '#2563eb', dash: '2 2' },
    ],
  },
  {
    title: 'Mutual information (maximal-agreement coupling)',
    unit: 'bits',
    lines: [{ key: 'mi', name: 'MI', color: '#2563eb' }],
  },
  {
    title: 'Argument quality (CRIT Γ) and contentiousness Δ',
    unit: '0–1',
    lines: [
      { key: 'critA', name: 'CRIT A', color: '#0d9488' },
      { key: 'critB', name: 'CRIT B', color: '#d97706', dash: '5 3' },
      { key: 'delta', name: 'Δ', color: '#57534e', dash: '2 2' },
    ],
  },
]

/**
 * The moderator's metrics per round, one small chart per family, with the stopping round marked.
 * Honest axes: rounds are integers, the values are joined by straight segments (nothing happens
 * between rounds, so no curve is drawn there), the y ticks are evenly spaced round values written
 * with the decimals their step needs, the legend sits above the plot in HTML and the stop label in
 * the margin above the plot, clear of the lines.
 */
export function MetricCharts({ points, stopRound }: { points: RoundPoint[]; stopRound: number | null }) {
  const rounds = points.map((p) => p.round)
  const xTicks = integerTicks(Math.min(1, ...rounds), Math.max(1, ...rounds))
  return (
    <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3" data-testid="metric-charts">
      {SERIES.map((s) => {
        const values = points.flatMap((p) =>
          s.lines.map((l) => p[l.key]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v)),
        )
        const ticks = niceTicks(Math.min(0, ...values), Math.max(0, ...values))
        return (
          <figure key={s.title} aria-label={s.title} className="rounded-md border border-stone-200 bg-white p-2">
            <figcaption className="px-1 text-xs font-medium text-stone-700">
              {s.title} <span className="text-stone-500">({s.unit})</span>
            </figcaption>
            <LineLegend items={s.lines} className="gap-x-3 px-1 pt-1 text-[11px]" />
            <div className="h-48">
              <ResponsiveContainer width="100%" height="100%">
                <LineChart data={points} margin={{ top: 18, right: 12, bottom: 4, left: 4 }}>
                  <CartesianGrid strokeDasharray="3 3" stroke="#e7e5e4" />
                  <XAxis
                    dataKey="round"
                    type="number"
                    domain={[xTicks[0] ?? 1, xTicks.at(-1) ?? 1]}
                    ticks={xTicks}
                    allowDecimals={false}
                    tickFormatter={(r) => `R${r}`}
                  />
                  <YAxis
                    domain={[ticks[0] ?? 0, ticks.at(-1) ?? 1]}
                    ticks={ticks}
                    interval={0}
                    tickFormatter={(v: number) => tickText(v, ticks)}
                    width={44}
                  />
                  <Tooltip
                    formatter={(v) => (typeof v === 'number' ? v.toFixed(4) : String(v))}
                    labelFormatter={(r) => `Round ${r}`}
                  />
                  {stopRound ? (
                    <ReferenceLine
                      x={stopRound}
                      stroke="#a8a29e"
                      strokeDasharray="4 4"
                      label={{ value: 'stop', position: 'top', fontSize: 10, fill: '#78716c' }}
                    />
                  ) : null}
                  {s.lines.map((l) => (
                    <Line
                      key={l.key}
                      type="linear"
                      dataKey={l.key}
                      name={l.name}
                      stroke={l.color}
                      strokeDasharray={l.dash}
                      dot={{ r: 3 }}
                      connectNulls
                      isAnimationActive={false}
                    />
                  ))}
                </LineChart>
              </ResponsiveContainer>
            </div>
          </figure>
        )
      })}
    </div>
  )
}
