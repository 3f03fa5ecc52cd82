'use client'

import { LineLegend } from '@/components/charts/line-legend'
import {
  Area,
  CartesianGrid,
  ComposedChart,
  Line,
  ResponsiveContainer,
  Tooltip,
  type TooltipContentProps,
  XAxis,
  YAxis,
} from 'recharts'
import { integerTicks, niceTicks } from '@/lib/chart-ticks'

type Spread = { median: number; min: number; max: number }

const SERIES = [
  { key: 'human', name: 'one-way for h (human)', color: '#0f766e', dash: undefined },
  { key: 'machine', name: 'one-way for m (machine)', color: '#b45309', dash: '5 3' },
] as const

type Point = { j: number; human: Spread; machine: Spread; humanMedian: number; machineMedian: number } & Record<
  'humanRange' | 'machineRange',
  [number, number]
>

/** The values at one bound: each agent's median with its min–max over the repetitions. */
function BoundTooltip({ active, payload }: Partial<TooltipContentProps<number, string>>) {
  const p = payload?.[0]?.payload as Point | undefined
  if (!active || !p) return null
  return (
    <div className="rounded border border-stone-200 bg-white px-3 py-2 text-xs shadow" data-testid="fig5-tooltip">
      <p className="mb-1 font-medium">messages 1–{p.j}</p>
      {SERIES.map((s) => (
        <p key={s.key} style={{ color: s.color }} data-series={s.key}>
          {s.name}: median {p[s.key].median} (min {p[s.key].min}, max {p[s.key].max})
        </p>
      ))}
    </div>
  )
}

/**
 * Fig. 5: one-way intelligible sessions against the message bound j, per agent: the median over
 * repetitions as a line, the min–max over repetitions as a shaded band behind it, and every value of
 * a bound in the tooltip. The count only changes at whole message bounds, so both are drawn as steps
 * at the integer bounds (no smoothing between them), with a tick per bound, whole-number counts, and
 * the legend above the plot in HTML, where no tick can collide with it.
 */
export function BoundChart({ byBound }: { byBound: Array<{ j: number; oneWayHuman: Spread; oneWayMachine: Spread }> }) {
  const data: Point[] = byBound.map((b) => ({
    j: b.j,
    human: b.oneWayHuman,
    machine: b.oneWayMachine,
    humanMedian: b.oneWayHuman.median,
    machineMedian: b.oneWayMachine.median,
    humanRange: [b.oneWayHuman.min, b.oneWayHuman.max],
    machineRange: [b.oneWayMachine.min, b.oneWayMachine.max],
  }))
  const last = Math.max(1, ...byBound.map((b) => b.j))
  const top = Math.max(1, ...byBound.flatMap((b) => [b.oneWayHuman.max, b.oneWayMachine.max]))
  const yTicks = niceTicks(0, top).filter((v) => Number.isInteger(v))
  return (
    <figure aria-label="One-way intelligible sessions by message bound j" className="w-full" data-testid="fig5">
      <LineLegend items={SERIES} className="gap-x-4 px-1 pb-1 text-xs" swatch={18} />
      <div className="h-72">
        <ResponsiveContainer width="100%" height="100%">
          <ComposedChart data={data} margin={{ top: 8, right: 16, bottom: 20, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e7e5e4" />
            <XAxis
              dataKey="j"
              type="number"
              domain={[1, last]}
              ticks={integerTicks(1, last)}
              allowDecimals={false}
              label={{ value: 'message bound j', position: 'insideBottom', offset: -12 }}
            />
            <YAxis
              allowDecimals={false}
              domain={[0, yTicks.at(-1) ?? top]}
              ticks={yTicks.length > 1 ? yTicks : undefined}
              width={40}
            />
            <Tooltip content={<BoundTooltip />} />
            {SERIES.map((s) => (
              <Area
                key={`${s.key}-range`}
                type="stepAfter"
                dataKey={`${s.key}Range`}
                name={`${s.name}: min–max`}
                stroke="none"
                fill={s.color}
                fillOpacity={0.15}
                activeDot={false}
                isAnimationActive={false}
              />
            ))}
            {SERIES.map((s) => (
              <Line
                key={s.key}
                type="stepAfter"
                dataKey={`${s.key}Median`}
                name={s.name}
                stroke={s.color}
                strokeWidth={2}
                strokeDasharray={s.dash}
                dot={{ r: 2 }}
                isAnimationActive={false}
              />
            ))}
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="px-1 text-xs text-stone-500">
        Lines: the median over the repetitions; shaded: their min–max. Hover a bound for its values.
      </figcaption>
    </figure>
  )
}

/**
 * The most frequent tag sequences as a table with bars: the whole sequence wraps in its cell (no
 * truncation at any width), the bar and the count beside it.
 */
export function SequenceChart({ sequences }: { sequences: Array<{ sequence: string; sessions: number }> }) {
  const most = Math.max(1, ...sequences.map((s) => s.sessions))
  return (
    <table className="w-full table-fixed text-xs" data-testid="tag-sequences">
      <caption className="sr-only">Most frequent tag sequences</caption>
      <thead>
        <tr className="text-left text-stone-500">
          <th scope="col" className="w-3/5 pb-1 font-medium">
            Tag sequence
          </th>
          <th scope="col" className="pb-1 font-medium">
            Sessions
          </th>
        </tr>
      </thead>
      <tbody className="divide-y divide-stone-100">
        {sequences.map((s) => (
          <tr key={s.sequence} data-sessions={s.sessions}>
            <td className="break-words py-1 pr-3 font-mono text-[11px] leading-snug text-stone-800">{s.sequence}</td>
            <td className="py-1">
              <div className="flex items-center gap-2">
                <div className="h-3 flex-1 rounded bg-stone-100" aria-hidden="true">
                  <div className="h-3 rounded bg-teal-700" style={{ width: `${(s.sessions / most) * 100}%` }} />
                </div>
                <span className="w-8 text-right tabular-nums">{s.sessions}</span>
              </div>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
