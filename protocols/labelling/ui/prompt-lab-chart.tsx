'use client'

import { CartesianGrid, ErrorBar, ResponsiveContainer, Scatter, ScatterChart, Tooltip, XAxis, YAxis } from 'recharts'

export interface StripPoint {
  /** The variant (x category). */
  variant: string
  /** The prompt's name (`-DNA-` or `-DNA-/p1`). */
  prompt: string
  kappa: number
  /** [estimate − lo, hi − estimate]. */
  err: [number, number]
  x: number
}

/** κ with its bootstrap interval per prompt, the paraphrases of a variant in one column (§B.5.5). */
export function KappaStripChart({ points, variants }: { points: StripPoint[]; variants: string[] }) {
  if (!points.length) return <p className="text-sm text-stone-500">Appears when an LLM-labeller run has labels.</p>
  return (
    <div
      className="h-72 w-full"
      role="img"
      aria-label="κ with 95 % intervals per prompt, paraphrases beside their variant"
    >
      <ResponsiveContainer>
        <ScatterChart margin={{ top: 10, right: 20, bottom: 30, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis
            type="number"
            dataKey="x"
            domain={[-0.5, variants.length - 0.5]}
            ticks={variants.map((_, i) => i)}
            tickFormatter={(i: number) => variants[i] ?? ''}
            interval={0}
            angle={-45}
            textAnchor="end"
            fontFamily="monospace"
          />
          <YAxis type="number" dataKey="kappa" domain={['auto', 'auto']} name="κ" />
          <Tooltip
            formatter={(v) => (typeof v === 'number' ? v.toFixed(3) : String(v))}
            labelFormatter={() => ''}
            content={({ payload }) => {
              const p = payload?.[0]?.payload as StripPoint | undefined
              return p ? (
                <div className="rounded border border-stone-200 bg-white p-2 text-xs shadow">
                  <span className="font-mono">{p.prompt}</span>: κ {p.kappa.toFixed(3)} [
                  {(p.kappa - p.err[0]).toFixed(3)}, {(p.kappa + p.err[1]).toFixed(3)}]
                </div>
              ) : null
            }}
          />
          <Scatter data={points} fill="#7c3aed">
            <ErrorBar dataKey="err" direction="y" width={4} stroke="#7c3aed" />
          </Scatter>
        </ScatterChart>
      </ResponsiveContainer>
    </div>
  )
}
