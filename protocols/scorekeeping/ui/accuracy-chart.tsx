'use client'

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'

const COLORS = ['#0f766e', '#b45309', '#7c3aed', '#be123c', '#1d4ed8', '#4d7c0f', '#0369a1', '#a16207']

/**
 * Turn-level accuracy: the mean share of probes answered right in each probing round, per player and
 * experiment (straight segments between rounds; rounds are whole numbers).
 */
export function AccuracyChart({
  curves,
}: {
  curves: Array<{ series: string; points: Array<{ round: number; accuracy: number; n: number }> }>
}) {
  const rounds = [...new Set(curves.flatMap((c) => c.points.map((p) => p.round)))].sort((a, b) => a - b)
  const data = rounds.map((round) => {
    const row: Record<string, number> = { round }
    for (const c of curves) {
      const p = c.points.find((x) => x.round === round)
      if (p) row[c.series] = Math.round(p.accuracy * 1000) / 1000
    }
    return row
  })
  if (!data.length) return <p className="text-sm text-stone-500">Appears when episodes have finished.</p>
  return (
    <figure aria-label="Accuracy per probing round" className="h-72 w-full">
      <ResponsiveContainer width="100%" height="100%">
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 20, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e7e5e4" />
          <XAxis
            dataKey="round"
            allowDecimals={false}
            label={{ value: 'probing round', position: 'insideBottom', offset: -10 }}
          />
          <YAxis domain={[0, 1]} ticks={[0, 0.25, 0.5, 0.75, 1]} />
          <Tooltip />
          <Legend verticalAlign="top" />
          {curves.map((c, i) => (
            <Line
              key={c.series}
              type="linear"
              dataKey={c.series}
              stroke={COLORS[i % COLORS.length]}
              dot
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  )
}
