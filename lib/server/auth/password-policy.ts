import { createRequire } from 'node:module'
import type { ZxcvbnFactory } from '@zxcvbn-ts/core'

// The dictionaries cost every process that loads them ~12 MB of heap and ~40 MB of memory, and
// only setting a password needs them: they are required on first use, not when a page imports the
// user services.
const requireLazily = createRequire(import.meta.url)

/**
 * zxcvbn's score (0–4) a new password needs: 3 means roughly 10^8 guesses or more. Below it are the
 * common-password lists (`password1`, `qwertyuiop`, `P@ssw0rd!`…), single dictionary words, names,
 * dates and keyboard patterns with small changes.
 */
export const MIN_PASSWORD_SCORE = 3

let factory: ZxcvbnFactory | undefined
/** Built on first use (the dictionaries take a few hundred milliseconds to load). */
function estimator(): ZxcvbnFactory {
  if (factory) return factory
  const core: typeof import('@zxcvbn-ts/core') = requireLazily('@zxcvbn-ts/core')
  const common: typeof import('@zxcvbn-ts/language-common') = requireLazily('@zxcvbn-ts/language-common')
  const en: typeof import('@zxcvbn-ts/language-en') = requireLazily('@zxcvbn-ts/language-en')
  factory = new core.ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
  })
  return factory
}

/** One part of a password as zxcvbn found it (the fields Parley reads). */
interface Match {
  pattern: string
  token: string
  dictionaryName?: string
  l33t?: boolean
  reversed?: boolean
  regexName?: string
}

/**
 * What kind of guessable part zxcvbn found ("a common word", "a recent year"), or null for random
 * characters. The part itself is never quoted: the message may reach a log (PARLEY_ADMIN_PASSWORD).
 */
function kindOf(m: Match): { one: string; many: string } | null {
  const twist = [m.reversed ? ' spelt backwards' : '', m.l33t ? ' with letters swapped for symbols' : ''].join('')
  const k = (one: string, many: string) => ({ one: one + twist, many: many + twist })
  switch (m.pattern) {
    case 'dictionary': {
      const d = m.dictionaryName ?? ''
      if (d.startsWith('passwords')) return k('a common password', 'common passwords')
      if (d.startsWith('userInputs')) return k('your email, your name or the name of this site', 'your details')
      if (d.startsWith('firstnames') || d.startsWith('lastnames')) return k('a common name', 'common names')
      return k('a common word', 'common words')
    }
    case 'spatial':
      return k('a keyboard pattern', 'keyboard patterns')
    case 'repeat':
      return k('a repetition', 'repetitions')
    case 'sequence':
      return k('a run of consecutive characters', 'runs of consecutive characters')
    case 'regex':
      return m.regexName === 'recentYear'
        ? k('a recent year', 'recent years')
        : k('a common pattern', 'common patterns')
    case 'date':
      return k('a date', 'dates')
    default:
      return null
  }
}

const COUNT = ['', 'one', 'two', 'three', 'four', 'five']

/** Why zxcvbn can guess it, in a sentence: "It is a common password." / "It contains two common words and a recent year." */
export function guessableBecause(password: string, sequence: Match[]): string {
  const found = sequence.map((m) => ({ m, kind: kindOf(m) })).filter((x) => x.kind !== null)
  if (!found.length) return `${password.length} random characters are too few: use 12 or more.`
  if (found.length === 1 && found[0]?.m.token === password) return `It is ${found[0].kind?.one}.`
  const counted = new Map<string, { one: string; many: string; n: number }>()
  for (const { kind } of found) {
    if (!kind) continue
    const c = counted.get(kind.one) ?? { ...kind, n: 0 }
    c.n++
    counted.set(kind.one, c)
  }
  const parts = [...counted.values()].map((c) => (c.n === 1 ? c.one : `${COUNT[c.n] ?? c.n} ${c.many}`))
  const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0]
  return `It contains ${list}.`
}

/**
 * Why this password is too easy to guess, or null when it is strong enough. Words tied to this
 * install (`parley`, and whatever the caller passes, e.g. the email) count as known to an attacker.
 * The message says what zxcvbn found guessable ("It contains a common word and a recent year."), or
 * that random characters are too few.
 */
export function passwordWeakness(password: string, userInputs: string[] = []): string | null {
  const result = estimator().check(password, ['parley', 'parley-demo', ...userInputs.filter(Boolean)])
  if (result.score >= MIN_PASSWORD_SCORE) return null
  return `This password is too easy to guess. ${guessableBecause(password, result.sequence as Match[])} A few unrelated words make a strong one.`
}
