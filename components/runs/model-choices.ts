import type { ModelChoice } from '@/components/protocols/types'

/**
 * The model choices of a set-up form: each preset's latest version, then each connection with its
 * default model; the value is the JSON reference the server action reads (and the server checks).
 */
export function modelChoices(
  presets: ReadonlyArray<{
    name: string
    versions: ReadonlyArray<{
      connectionId: string
      model: string
      temperature: number | null
      vision: boolean
      version: number
    }>
  }>,
  connections: ReadonlyArray<{ id: string; name: string; defaultModel: string; provider: string }>,
): ModelChoice[] {
  return [
    ...presets.flatMap((p) => {
      const v = p.versions[0]
      if (!v) return []
      const ref = {
        connectionId: v.connectionId,
        model: v.model,
        ...(v.temperature !== null ? { temperature: v.temperature } : {}),
        vision: v.vision,
      }
      return [{ value: JSON.stringify(ref), label: `Preset: ${p.name} (${v.model}, v${v.version})` }]
    }),
    ...connections.map((c) => ({
      value: JSON.stringify({ connectionId: c.id }),
      label: `Connection: ${c.name} (${c.defaultModel})${c.provider === 'demo' ? ' — simulated' : ''}`,
    })),
  ]
}
