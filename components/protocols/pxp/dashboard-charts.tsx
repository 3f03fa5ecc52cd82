'use client'

import {
  Bar,
  BarChart,
  CartesianGrid,
  ErrorBar,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts'

type Spread = { median: number; min: number; max: number }

/**
 * Fig. 5: one-way intelligible sessions against the message bound j, per agent; the line is the
 * median over repetitions and the error bars span min–max.
 */
export function BoundChart({ byBound }: { byBound: Array<{ j: number; oneWayHuman: Spread; oneWayMachine: Spread }> }) {
  const data = byBound.map((b) => ({
    j: b.j,
    human: b.oneWayHuman.median,
    humanErr: [b.oneWayHuman.median - b.oneWayHuman.min, b.oneWayHuman.max - b.oneWayHuman.median],
    machine: b.oneWayMachine.median,
    machineErr: [b.oneWayMachine.median - b.oneWayMachine.min, b.oneWayMachine.max - b.oneWayMachine.median],
  }))
  return (
    <figure aria-label="One-way intelligible sessions by message bound j" className="h-72 w-full">
      <ResponsiveContainer width="100%" height="100%">
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 16, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e7e5e4" />
          <XAxis dataKey="j" label={{ value: 'message bound j', position: 'insideBottom', offset: -8 }} />
          <YAxis allowDecimals={false} />
          <Tooltip />
          <Legend verticalAlign="top" />
          <Line type="monotone" dataKey="human" name="one-way for h (human)" stroke="#0f766e" isAnimationActive={false}>
            <ErrorBar dataKey="humanErr" width={4} stroke="#0f766e" />
          </Line>
          <Line
            type="monotone"
            dataKey="machine"
            name="one-way for m (machine)"
            stroke="#b45309"
            strokeDasharray="5 3"
            isAnimationActive={false}
          >
            <ErrorBar dataKey="machineErr" width={4} stroke="#b45309" />
          </Line>
        </LineChart>
      </ResponsiveContainer>
    </figure>
  )
}

/** The most frequent tag sequences, as horizontal bars. */
export function SequenceChart({ sequences }: { sequences: Array<{ sequence: string; sessions: number }> }) {
  return (
    <figure aria-label="Most frequent tag sequences" style={{ height: Math.max(120, sequences.length * 28 + 40) }}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={sequences} layout="vertical" margin={{ top: 4, right: 16, bottom: 4, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e7e5e4" />
          <XAxis type="number" allowDecimals={false} />
          <YAxis type="category" dataKey="sequence" width={320} tick={{ fontSize: 11 }} />
          <Tooltip />
          <Bar dataKey="sessions" fill="#0f766e" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  )
}
