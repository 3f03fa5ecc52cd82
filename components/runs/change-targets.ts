import { type ConnectionNames, connectionOf, modelLabel, modelOf } from '@/components/runs/model-label'
import type { SeatFill } from '@/lib/server/engine/seats'

/**
 * What Change model can replace in a run, as select options: first every connection the seats use
 * ("every seat on it", value `from:<connectionId>`), then each LLM seat and helper alone (`seat` or
 * `seat/helper`). The one preselected is the connection whose call failed in the last stall, so a
 * stalled run is moved off its broken connection in one submit; else the first.
 */
export function changeTargets(
  fills: Readonly<Record<string, SeatFill>>,
  connections: ConnectionNames,
  label: (seat: string) => string,
  lastStallCall: { connectionId: string } | null,
): { targets: Array<{ value: string; label: string }>; preselected: string | undefined } {
  const places: Array<{ value: string; where: string; ref: { connectionId: string; model?: string } }> = []
  for (const [seat, fill] of Object.entries(fills)) {
    if (fill.kind === 'llm') places.push({ value: seat, where: label(seat), ref: fill.model })
    if (fill.kind !== 'human')
      for (const [helper, ref] of Object.entries(fill.helpers))
        places.push({ value: `${seat}/${helper}`, where: `${label(seat)} · ${helper}`, ref })
  }
  const byConnection = new Map<string, typeof places>()
  for (const p of places) byConnection.set(p.ref.connectionId, [...(byConnection.get(p.ref.connectionId) ?? []), p])
  const groups = [...byConnection].map(([connectionId, ps]) => {
    const models = [...new Set(ps.map((p) => modelOf(p.ref, connections)))].join(', ')
    return {
      value: `from:${connectionId}`,
      label: `Every seat on ${connectionOf({ connectionId }, connections)} (${models}): ${ps.map((p) => p.where).join(', ')}`,
    }
  })
  const singles = places.map((p) => ({ value: p.value, label: `Only ${p.where}: ${modelLabel(p.ref, connections)}` }))
  const targets = [...groups, ...singles]
  const stalled = lastStallCall ? `from:${lastStallCall.connectionId}` : undefined
  return {
    targets,
    preselected: targets.some((t) => t.value === stalled) ? stalled : targets[0]?.value,
  }
}
