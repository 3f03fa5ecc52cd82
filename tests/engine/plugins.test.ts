import { afterAll, describe, expect, it, vi } from 'vitest'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'

/**
 * Next bundles a module once per server layer, so a process can hold several copies of the engine's
 * plugin module. Every copy must see the one registry: the demo rules installed by whichever copy
 * loaded last must still answer with the plugins another copy registered (before the fix, the last
 * copy's empty registry answered every new run on the simulated model with the generic replies).
 */
describe('the plugin registry is one per process', () => {
  afterAll(async () => {
    const { stopDemoEndpoint } = await import('@/lib/server/llm/runtime')
    await stopDemoEndpoint()
  })

  it('a second copy of the module sees the plugins the first registered, and the demo model uses them', async () => {
    const first = await import('@/lib/server/engine/plugins')
    const marker = `registry-probe-${Math.random().toString(36).slice(2)}`
    const probe = {
      protocol: { id: 'registry-probe' },
      demo: (req: { messages: readonly { content: unknown }[] }) =>
        req.messages.some((m) => m.content === marker) ? 'answered by the probe plugin' : undefined,
    } as unknown as ProtocolPlugin
    first.registerPlugin(probe)
    await first.allPlugins()

    // A fresh copy of the module, as another Next layer loads it: it installs the demo rules again.
    vi.resetModules()
    const second = await import('@/lib/server/engine/plugins')
    expect(second).not.toBe(first)
    expect((await second.pluginFor('registry-probe')) === probe).toBe(true)
    // The built-in protocols are there for both copies, once.
    const ids = (await second.allPlugins()).map((p) => p.protocol.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual((await first.allPlugins()).map((p) => p.protocol.id))

    const { demoEndpoint } = await import('@/lib/server/llm/runtime')
    const server = await demoEndpoint()
    const res = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer none' },
      body: JSON.stringify({ model: 'parley-demo-simulated', messages: [{ role: 'user', content: marker }] }),
    })
    const body = (await res.json()) as { choices: { message: { content: string } }[] }
    expect(body.choices[0]?.message.content).toBe('answered by the probe plugin')
  })
})
