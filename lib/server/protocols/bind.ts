import { bindPlugins } from '@/lib/server/engine/plugins'

/**
 * The composition root of the protocol plugins: a process's entry point imports this module once, and
 * the engine loads the registry through it on first use, so the engine itself never imports a plugin.
 * Lazy, so a process that never steps a session never loads the protocols' code.
 */
bindPlugins(() => import('@/lib/server/protocols/registry').then((m) => m.plugins))
