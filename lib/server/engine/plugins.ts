import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { setDemoRules } from '@/lib/server/llm/runtime'
import { crossCopy } from '@/lib/cross-copy'

/**
 * The engine's view of the plugin registry. The registered protocols live in
 * `lib/server/protocols/registry.ts` (typed: a protocol id without a plugin does not compile); the
 * engine never imports it. Each process's entry point binds it (`import '@/lib/server/protocols/bind'`:
 * instrumentation.ts for the web processes, the CLI and `parley worker`, the seed script, the benches,
 * vitest's setup), and it is loaded on first use. Tests may register more (the contract suite's toy
 * protocol), which proves a protocol runs end to end with nothing but its own folder and a registration.
 *
 * The registry is process-wide state, so it lives on `globalThis`: Next bundles this module once per
 * server layer (pages, route handlers, instrumentation), and a copy of its own per layer meant that
 * the demo rules the last-loaded copy installed read a registry nobody had filled, so every new run
 * on the simulated model got the generic fallback replies (tests/engine/plugins.test.ts).
 */
type Loader = () => Promise<Record<string, ProtocolPlugin>>
type Registry = { plugins: Map<string, ProtocolPlugin>; loader?: Loader; builtins?: Promise<void> }
const g = globalThis as unknown as { parleyPlugins?: Registry }
const registry = (): Registry => {
  g.parleyPlugins ??= { plugins: new Map() }
  return g.parleyPlugins
}

/** Bind the built-in plugins (a process's entry point does, through lib/server/protocols/bind.ts). */
export function bindPlugins(loader: Loader): void {
  registry().loader ??= loader
}

function loadBuiltins(): Promise<void> {
  const r = registry()
  if (!r.loader) return Promise.resolve()
  const loader = r.loader
  r.builtins ??= loader()
    .then((plugins) => {
      for (const [id, plugin] of Object.entries(plugins)) if (!r.plugins.has(id)) r.plugins.set(id, plugin)
    })
    .catch((err) => {
      r.builtins = undefined
      throw err
    })
  return r.builtins
}

// The offline demo model answers each protocol's requests by its plugin's rules (read per request
// from the one registry, so plugins registered later count too, whichever copy of this module
// installed the rules).
setDemoRules((req) => {
  for (const p of registry().plugins.values()) {
    const reply = p.demo?.(req)
    if (reply !== undefined) return reply
  }
  return undefined
})

export function registerPlugin(plugin: ProtocolPlugin): void {
  registry().plugins.set(plugin.protocol.id, plugin)
}

/** The plugin of a protocol id; an unknown id throws (nothing defaults to any protocol). */
export async function pluginFor(id: string): Promise<ProtocolPlugin> {
  await loadBuiltins()
  const p = registry().plugins.get(id)
  if (!p) throw new UnknownProtocolError(id, !registry().loader)
  return p
}

export async function allPlugins(): Promise<ProtocolPlugin[]> {
  await loadBuiltins()
  return [...registry().plugins.values()]
}

/**
 * A session's title from its stored instance snapshot: the plugin's `title` gets the instance parsed
 * by its protocol's schema, as every hook does. A snapshot the schema refuses (written before a rule
 * existed, or by hand) and a plugin without `title` give null, so a list shows `#n` instead of failing.
 */
export function sessionTitle(plugin: ProtocolPlugin | undefined, snapshot: unknown, task: string): string | null {
  if (!plugin?.title) return null
  const parsed = plugin.protocol.instance.safeParse(snapshot)
  return parsed.success ? plugin.title(parsed.data, task) : null
}

export class UnknownProtocolError extends Error {
  constructor(
    readonly protocol: string,
    unbound = false,
  ) {
    super(
      unbound
        ? `Unknown protocol "${protocol}": this process bound no plugins (its entry point must import @/lib/server/protocols/bind).`
        : `Unknown protocol "${protocol}": no plugin is registered for it.`,
    )
    this.name = 'UnknownProtocolError'
  }
}
crossCopy(UnknownProtocolError, 'UnknownProtocolError')
