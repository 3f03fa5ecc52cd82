import { ZxcvbnFactory } from '@zxcvbn-ts/core'
import * as common from '@zxcvbn-ts/language-common'
import * as en from '@zxcvbn-ts/language-en'

/**
 * zxcvbn's score (0–4) a new password needs: 3 means roughly 10^8 guesses or more. Below it are the
 * common-password lists (`password1`, `qwertyuiop`, `P@ssw0rd!`…), single dictionary words, names,
 * dates and keyboard patterns with small changes.
 */
export const MIN_PASSWORD_SCORE = 3

let factory: ZxcvbnFactory | undefined
/** Built on first use (the dictionaries take a few hundred milliseconds to load). */
function estimator(): ZxcvbnFactory {
  factory ??= new ZxcvbnFactory({
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
