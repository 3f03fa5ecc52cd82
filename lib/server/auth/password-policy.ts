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

/**
 * Why this password is too easy to guess, or null when it is strong enough. Words tied to this
 * install (`parley`, and whatever the caller passes, e.g. the email) count as known to an attacker.
 */
export function passwordWeakness(password: string, userInputs: string[] = []): string | null {
  const result = estimator().check(password, ['parley', 'parley-demo', ...userInputs])
  if (result.score >= MIN_PASSWORD_SCORE) return null
  const warning = result.feedback.warning ?? 'It would be guessed quickly.'
  const suggestions = result.feedback.suggestions.length ? ` ${result.feedback.suggestions.join(' ')}` : ''
  return `This password is too easy to guess. ${warning}${suggestions} A few unrelated words make a strong one.`
}
