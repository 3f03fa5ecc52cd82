// The web processes' settings (scripts/serve.mjs; README "Configuration"): how many, their V8 heap
// and young generation, and their C memory allocator. Plain JavaScript: serve.mjs runs before
// anything is compiled. Server-only (lib/limits.mjs is read by the browser's import form too).
//
// glibc's malloc keeps what a busy Node process freed in its arenas: bench:load's study with two web
// processes peaked at 625-634 MB RSS on it and at 558-566 MB on jemalloc, which gives freed pages
// back to the system after `dirty_decay_ms` (many Node and Ruby servers run on it for that reason).
// jemalloc is loaded with LD_PRELOAD when the web processes start, from the distribution's package
// (Debian and Ubuntu: libjemalloc2), never bundled.

import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { positive } from './limits.mjs'

/**
 * The V8 heap limit of each web process, in MB (PARLEY_HEAP_MB, 512 by default; scripts/serve.mjs).
 * Without it V8 sizes the heap from the machine's memory and, on a large machine, lets a busy
 * server's heap grow to several times what it holds live before collecting.
 */
export function webHeapMb() {
  return positive('PARLEY_HEAP_MB', 512)
}

/**
 * How many web processes share the port (PARLEY_WEB_PROCESSES; by default one per core, at most
 * two). Node runs a page's JavaScript on one core, so on two cores a second process brings page
 * capacity to about twice the first release's (README "Load"); each costs about 250 MB.
 *
 * @param {number} [cores] the cores this process may use (os.availableParallelism())
 */
export function webProcesses(cores = availableParallelism()) {
  const n = positive('PARLEY_WEB_PROCESSES', Math.max(1, Math.min(2, cores)))
  if (!Number.isInteger(n)) throw new Error(`PARLEY_WEB_PROCESSES must be a whole number (got "${n}").`)
  return n
}

/**
 * V8 flags of each web process beyond the heap limit: its young generation and its garbage
 * collector's threads.
 *
 * - Semi-space (half the young generation), in MB: 32 for one process, 8 each for several. A page
 *   view makes megabytes of short-lived garbage, and a small young generation is scavenged more often;
 *   but it is committed once per process, and with two processes 2 × 64 MB of it put bench:load's
 *   study over its memory budget (605 MB with 16, 560 MB with 8; README "Load").
 * - `--single-threaded-gc` when every core runs a web process: V8's collector helper threads then
 *   only take turns with the other processes' pages (two processes on two cores served about 10 %
 *   more pages per second without them).
 *
 * @param {number} processes
 * @param {number} [cores]
 * @returns {{ semiSpaceMb: number, singleThreadedGc: boolean }}
 */
export function webV8Flags(processes, cores = availableParallelism()) {
  return { semiSpaceMb: processes > 1 ? 8 : 32, singleThreadedGc: processes > 1 && processes >= cores }
}

/** Where distributions install jemalloc's shared library (multiarch Debian/Ubuntu first). */
export const JEMALLOC_PATHS = [
  '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
  '/usr/lib64/libjemalloc.so.2',
  '/usr/lib/libjemalloc.so.2',
  '/usr/local/lib/libjemalloc.so.2',
]

/**
 * Freed pages go back to the system after a second (dirty, then at once: no muzzy stage), by
 * jemalloc's background thread rather than on some later allocation; two arenas, as MALLOC_ARENA_MAX
 * gives glibc.
 */
export const JEMALLOC_CONF = 'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:2'

/**
 * Which allocator the web processes run with, and the environment that selects it.
 *
 * PARLEY_MALLOC: `auto` (the default: jemalloc when its library is installed, else the system's),
 * `jemalloc` (an error when it is not installed), `system` (never preload anything).
 *
 * @param {Record<string, string | undefined>} env
 * @param {(path: string) => boolean} [exists]
 * @returns {{ allocator: 'jemalloc' | 'system', env: Record<string, string> }}
 */
export function webAllocator(env = process.env, exists = existsSync) {
  const choice = (env.PARLEY_MALLOC ?? '').trim().toLowerCase() || 'auto'
  if (!['auto', 'jemalloc', 'system'].includes(choice))
    throw new Error(`PARLEY_MALLOC must be auto, jemalloc or system (got "${env.PARLEY_MALLOC}").`)
  if (choice === 'system') return { allocator: 'system', env: {} }
  const library = JEMALLOC_PATHS.find((p) => exists(p))
  if (!library) {
    if (choice === 'jemalloc')
      throw new Error(
        `PARLEY_MALLOC=jemalloc, but jemalloc is not installed (looked for ${JEMALLOC_PATHS.join(', ')}). ` +
          'Install it (Debian/Ubuntu: apt-get install libjemalloc2) or set PARLEY_MALLOC=auto.',
      )
    return { allocator: 'system', env: {} }
  }
  const preload = (env.LD_PRELOAD ?? '').split(/[\s:]+/).filter(Boolean)
  return {
    allocator: 'jemalloc',
    env: {
      LD_PRELOAD: preload.includes(library) ? preload.join(' ') : [...preload, library].join(' '),
      // An operator's own jemalloc options win.
      MALLOC_CONF: env.MALLOC_CONF ?? JEMALLOC_CONF,
    },
  }
}
