// The compiled form of a MATCH pattern and its first group, shared by lib/tasks/pattern.ts (which
// checks patterns where they are defined) and lib/tasks/regex-worker.mjs (which runs them). Plain
// JavaScript so that the worker thread can load it as it is.

import { RE2JS } from 're2js'

/** @type {Record<string, number>} */
const FLAG_BITS = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 }

/**
 * The pattern compiled by re2js after translating JavaScript spellings (`(?<name>…)`, `\uXXXX`, `/`);
 * flags i, m, s, u. Throws for a pattern RE2 cannot compile.
 * @param {string} pattern
 * @param {string} flags
 */
export function compile(pattern, flags) {
  let bits = 0
  for (const f of flags) bits |= FLAG_BITS[f] ?? 0
  return RE2JS.compile(RE2JS.translateRegExp(pattern), bits)
}

/**
 * The first capture group of the first match (the whole match when the pattern has no group or the
 * group did not take part), or null when nothing matches.
 * @param {RE2JS} re
 * @param {string} s
 * @returns {string | null}
 */
export function firstGroupOf(re, s) {
  // The lazy DFA answers "is there a match" fastest; only a match pays for its groups.
  if (!re.test(s)) return null
  const m = re.matcher(s)
  if (!m.find()) return null
  return (re.groupCount() > 0 ? m.group(1) : null) ?? m.group(0)
}
