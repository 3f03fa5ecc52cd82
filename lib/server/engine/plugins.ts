import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { setDemoRules } from '@/lib/server/llm/runtime'

/**
 * The engine's view of the plugin registry. The registered protocols live in
 * `lib/server/protocols/registry.ts` (typed: a protocol id without a plugin does not compile); it is
 * loaded on first use, so the engine never names a protocol. Tests may register more (the contract
 * suite's toy protocol), which proves a protocol runs end to end with nothing but its own folder
 * and a registration.
 */
const registered = new Map<string, ProtocolPlugin>()
let builtins: Promise<void> | undefined

function loadBuiltins(): Promise<void> {
  builtins ??= import('@/lib/server/protocols/registry').then((m) => {
    for (const [id, plugin] of Object.entries(m.plugins as Record<string, ProtocolPlugin>))
      if (!registered.has(id)) registered.set(id, plugin)
  })
  return builtins
}

// The offline demo model answers each protocol's requests by its plugin's rules (read per request,
// so plugins registered later count too).
setDemoRules((req) => {
  for (const p of registered.values()) {
    const reply = p.demo?.(req)
    if (reply !== undefined) return reply
  }
  return undefined
})

export function registerPlugin(plugin: ProtocolPlugin): void {
  registered.set(plugin.protocol.id, plugin)
}

/** The plugin of a protocol id; an unknown id throws (nothing defaults to any protocol). */
export async function pluginFor(id: string): Promise<ProtocolPlugin> {
  await loadBuiltins()
  const p = registered.get(id)
  if (!p) throw new UnknownProtocolError(id)
  return p
}

export async function allPlugins(): Promise<ProtocolPlugin[]> {
  await loadBuiltins()
  return [...registered.values()]
}

export class UnknownProtocolError extends Error {
  constructor(readonly protocol: string) {
    super(`Unknown protocol "${protocol}": no plugin is registered for it.`)
    this.name = 'UnknownProtocolError'
  }
}
