'use client'

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'

const COLORS = ['#0f766e', '#b45309', '#7c3aed', '#be123c', '#1d4ed8', '#4d7c0f', '#0369a1', '#a16207']

/**
 * SR_k against the budget k, one line per model and feedback setting; each point is the separate run
 * with that budget (never a prefix of a longer run).
 */
export function SrByKChart({
  curves,
}: {
  curves: Array<{ series: string; points: Array<{ k: number; sr: number }> }>
}) {
  const ks = [...new Set(curves.flatMap((c) => c.points.map((p) => p.k)))].sort((a, b) => a - b)
  const data = ks.map((k) => {
    const row: Record<string, number> = { k }
    for (const c of curves) {
      const p = c.points.find((x) => x.k === k)
      if (p) row[c.series] = p.sr
    }
    return row
  })
  if (!data.length) return <p className="text-sm text-stone-500">Appears when runs have finished episodes.</p>
  return (
    <figure aria-label="Success rate against the interaction budget k" className="h-80 w-full">
      <ResponsiveContainer width="100%" height="100%">
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 20, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e7e5e4" />
          <XAxis
            dataKey="k"
            allowDecimals={false}
            label={{ value: 'budget k (turns)', position: 'insideBottom', offset: -10 }}
          />
          <YAxis domain={[0, 100]} unit="%" />
          <Tooltip />
          <Legend verticalAlign="top" />
          {curves.map((c, i) => (
            <Line
              key={c.series}
              type="linear"
              dataKey={c.series}
              stroke={COLORS[i % COLORS.length]}
              dot
              connectNulls
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  )
}
