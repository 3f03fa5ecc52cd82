// Regex MATCH in a worker thread, started by lib/tasks/pattern.ts through lib/tasks/sandbox.ts (the
// protocol of messages is described there). re2js matches in time linear in the input, but a large
// compiled pattern (repetition counts multiply it) times a long input still costs seconds: here they
// cost this thread, under the sandbox's time limit, not the event loop that answers requests.

import { parentPort } from 'node:worker_threads'
import { compile, firstGroupOf } from './pattern-core.mjs'

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)

/** Compiled patterns by flags and source, the most recent 64. @type {Map<string, import('re2js').RE2JS>} */
const compiled = new Map()

/** @param {string} pattern @param {string} flags */
function compiledPattern(pattern, flags) {
  const key = `${flags}/${pattern}`
  let re = compiled.get(key)
  if (re) compiled.delete(key)
  else re = compile(pattern, flags)
  compiled.set(key, re)
  if (compiled.size > 64) compiled.delete(/** @type {string} */ (compiled.keys().next().value))
  return re
}

/** @type {Record<string, (...args: any[]) => unknown>} */
const ops = {
  /** The first group of `pattern` in each input (null where it does not match). */
  firstGroups: (/** @type {string} */ pattern, /** @type {string} */ flags, /** @type {string[]} */ inputs) => {
    const re = compiledPattern(pattern, flags)
    return inputs.map((s) => firstGroupOf(re, s))
  },
}

port.on('message', (/** @type {{ id: number, op: string, args: unknown[] }} */ m) => {
  const fn = ops[m.op]
  if (!fn) {
    port.postMessage({ id: m.id, ok: false, error: `unknown operation ${m.op}` })
    return
  }
  try {
    port.postMessage({ id: m.id, ok: true, value: fn(...m.args) })
  } catch (err) {
    // A pattern that does not compile was refused where it was defined; anything thrown here is
    // unexpected, so the worker is replaced.
    port.postMessage({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err), fatal: true })
  }
})
port.postMessage({ ready: true })
