import { RE2JS } from 're2js'

/**
 * Regular expressions for MATCH, run by re2js (a pure-JavaScript port of RE2): matching takes time
 * linear in the input whatever the pattern, so a pattern like `(a+)+$` cannot block the process
 * that runs it (the web server's job workers run MATCH on model output). The price is RE2's
 * syntax: no backreferences and no lookaround; those patterns are refused with a reason when the
 * template is defined. JavaScript spellings (`(?<name>…)`, `\uXXXX`, `/`) are translated first.
 * Flags: i (case-insensitive), m (^ and $ at line breaks), s (. matches newlines), u (accepted;
 * RE2 always matches by code point). Pure: no I/O.
 */

const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 }

function compile(pattern: string, flags: string): RE2JS {
  let bits = 0
  for (const f of flags) bits |= FLAG_BITS[f] ?? 0
  return RE2JS.compile(RE2JS.translateRegExp(pattern), bits)
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

/** Why a pattern cannot be used for MATCH, in words for the person who wrote it; null when it can. */
export function patternProblem(pattern: string, flags = ''): string | null {
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
 * The compiled pattern as a function: the first capture group of the first match (the whole match
 * when the pattern has no group or the group did not take part), or null when nothing matches.
 * Throws for a pattern `patternProblem` refuses.
 */
export function firstGroup(pattern: string, flags = ''): (s: string) => string | null {
  const problem = patternProblem(pattern, flags)
  if (problem) throw new Error(problem)
  const re = compile(pattern, flags)
  return (s) => {
    // The lazy DFA answers "is there a match" fastest; only a match pays for its groups.
    if (!re.test(s)) return null
    const m = re.matcher(s)
    if (!m.find()) return null
    return (re.groupCount() > 0 ? m.group(1) : null) ?? m.group(0)
  }
}
