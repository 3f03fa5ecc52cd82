'use client'

import type { RoundPoint } from '@/lib/protocols/evince'
import {
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts'

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

/** The moderator's metrics per round, one small chart per family, with the stopping round marked. */
export function MetricCharts({ points, stopRound }: { points: RoundPoint[]; stopRound: number | null }) {
  return (
    <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3" data-testid="metric-charts">
      {SERIES.map((s) => (
        <figure key={s.title} aria-label={s.title} className="rounded-md border border-stone-200 bg-white p-2">
          <figcaption className="px-1 text-xs font-medium text-stone-700">
            {s.title} <span className="text-stone-400">({s.unit})</span>
          </figcaption>
          <div className="h-48">
            <ResponsiveContainer width="100%" height="100%">
              <LineChart data={points} margin={{ top: 8, right: 12, bottom: 4, left: 4 }}>
                <CartesianGrid strokeDasharray="3 3" stroke="#e7e5e4" />
                <XAxis dataKey="round" allowDecimals={false} tickFormatter={(r) => `R${r}`} />
                <YAxis tickFormatter={(v: number) => (Math.abs(v) >= 10 ? v.toFixed(0) : v.toFixed(2))} width={40} />
                <Tooltip
                  formatter={(v) => (typeof v === 'number' ? v.toFixed(4) : String(v))}
                  labelFormatter={(r) => `Round ${r}`}
                />
                <Legend verticalAlign="top" height={24} iconSize={10} wrapperStyle={{ fontSize: 11 }} />
                {stopRound ? (
                  <ReferenceLine
                    x={stopRound}
                    stroke="#a8a29e"
                    strokeDasharray="4 4"
                    label={{ value: 'stop', fontSize: 10, fill: '#78716c' }}
                  />
                ) : null}
                {s.lines.map((l) => (
                  <Line
                    key={l.key}
                    type="monotone"
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
      ))}
    </div>
  )
}
