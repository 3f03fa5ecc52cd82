import { Worker } from 'node:worker_threads'
import { LRUCache } from 'lru-cache'
import { compile } from './pattern-core.mjs'
import { type Sandbox, sandbox } from './sandbox'

/**
 * Regular expressions for MATCH, run by re2js (a pure-JavaScript port of RE2): matching takes time
 * linear in the input whatever the pattern, so a pattern like `(a+)+$` cannot take exponential time.
 * Linear is not cheap: a large compiled pattern (`(\w+\s?){1,1000}` is 7,000 instructions) on
 * 10,000 characters took 5–10 s, so matching runs in a worker thread (lib/tasks/regex-worker.mjs
 * through lib/tasks/sandbox.ts) with a time limit, never on the event loop, and its input is bounded
 * ({@link MATCH_INPUT_MAX}). The price of linear time is RE2's syntax: no backreferences and no
 * lookaround; those patterns are refused with a reason when the template is defined. JavaScript
 * spellings (`(?<name>…)`, `\uXXXX`, `/`) are translated first. Flags: i (case-insensitive), m (^
 * and $ at line breaks), s (. matches newlines), u (accepted; RE2 always matches by code point).
 */

/** The longest text regex MATCH searches, per side (a prediction is one line of a reply). */
export const MATCH_INPUT_MAX = 200_000

/** The process's regex MATCH worker. */
export function regexSandbox(): Sandbox {
  return sandbox('regex', {
    label: 'Regex MATCH',
    // Next's bundler follows this form (a literal URL beside the module) into the build.
    // No execArgv: the worker needs none of the process's flags (a loader's, --input-type …).
    create: () => new Worker(new URL('./regex-worker.mjs', import.meta.url), { execArgv: [] }),
    timeoutMs: 2000,
    startTimeoutMs: 30_000,
    maxQueue: 64,
    retryAfterMs: 5000,
  })
}

/**
 * The JavaScript constructs RE2 has no linear-time answer for, found by walking the source
 * (escapes and character classes skipped): a backreference `\1`…`\9`, `\k<name>`, or a lookaround
 * group. The translation to RE2 syntax would otherwise turn `\k<x>` into the literal `k<x>`.
 */
function unsupported(pattern: string): 'backreference' | 'lookaround' | null {
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\') {
      const next = pattern[i + 1] ?? ''
      if (!inClass && (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<'))) return 'backreference'
      i++
    } else if (inClass) {
      if (c === ']') inClass = false
    } else if (c === '[') inClass = true
    else if (c === '(' && /^\?<?[=!]/.test(pattern.slice(i + 1, i + 4))) return 'lookaround'
  }
  return null
}

// Compiling a large pattern takes tens of milliseconds on the event loop: a pattern is compiled
// once per process to be checked (templates are parsed each time a session runs one).
const problems = new LRUCache<string, { problem: string | null }>({ max: 500 })

/** Why a pattern cannot be used for MATCH, in words for the person who wrote it; null when it can. */
export function patternProblem(pattern: string, flags = ''): string | null {
  const key = `${flags}/${pattern}`
  const hit = problems.get(key)
  if (hit) return hit.problem
  const problem = checkPattern(pattern, flags)
  problems.set(key, { problem })
  return problem
}

function checkPattern(pattern: string, flags: string): string | null {
  const kind = unsupported(pattern)
  if (kind === 'backreference')
    return 'Backreferences (\\1, \\k<name>) are not supported: MATCH patterns run on a linear-time engine (RE2).'
  if (kind === 'lookaround')
    return 'Lookahead and lookbehind ((?=…), (?!…), (?<=…), (?<!…)) are not supported: MATCH patterns run on a linear-time engine (RE2).'
  try {
    compile(pattern, flags)
    return null
  } catch (err) {
    const detail = err instanceof Error ? err.message.replace(/^error parsing regexp:\s*/, '') : String(err)
    return `This is not a valid regular expression (${detail}).`
  }
}

/**
 * The first capture group of the first match of the pattern in each input (the whole match when
 * the pattern has no group or the group did not take part; null when nothing matches), found in the
 * regex worker. Throws for a pattern `patternProblem` refuses, for an input over
 * {@link MATCH_INPUT_MAX}, and a SandboxError when the worker runs out of time or is unavailable.
 */
export async function firstGroups(pattern: string, flags: string, inputs: string[]): Promise<Array<string | null>> {
  const problem = patternProblem(pattern, flags)
  if (problem) throw new Error(problem)
  const long = inputs.find((s) => s.length > MATCH_INPUT_MAX)
  if (long !== undefined)
    throw new Error(
      `Regex MATCH searches at most ${MATCH_INPUT_MAX.toLocaleString('en-US')} characters; this text has ${long.length.toLocaleString('en-US')}.`,
    )
  return regexSandbox().call<Array<string | null>>('firstGroups', [pattern, flags, inputs])
}
