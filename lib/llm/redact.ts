/**
 * Redaction of secrets (the API key, secret header values, provider-masked keys such as
 * `sk-abc***xyz`) from text the call log stores or people see. No I/O.
 */

// "Not after a word character" is written as a lookbehind (not \b) so a streamed piece can be
// matched with the character before it as context.
const MASKED_KEY = /(?<![A-Za-z0-9_])sk-[A-Za-z0-9_-]*\*{3,}[A-Za-z0-9_-]*/g
export const HAS_MASKED_KEY = /(?<![A-Za-z0-9_])sk-[A-Za-z0-9_-]*\*{3,}/
/** The end of a text that may still grow into a masked key: "s", "sk", "sk-abc", "sk-abc***x" … */
const MASKED_KEY_START = /(?<![A-Za-z0-9_])s(?:k(?:-[A-Za-z0-9_*-]*)?)?$/
/** Secrets shorter than this are not worth hiding (and would mangle ordinary text). */
export const MIN_SECRET_LENGTH = 4

export const REDACTED = '[redacted]'

/** The secrets worth redacting, longest first (so a secret containing another is replaced whole). */
export function secretList(secrets: ReadonlyArray<string | undefined>): string[] {
  return [...new Set(secrets.filter((s): s is string => !!s && s.length >= MIN_SECRET_LENGTH))].sort(
    (a, b) => b.length - a.length,
  )
}

/** Remove every secret (and provider-masked key fragments) from a text. */
export function redactor(secrets: ReadonlyArray<string | undefined>): (s: string) => string {
  const list = secretList(secrets)
  return (s) => maskedKeysOut(secretsOut(s, list), '')
}

function secretsOut(s: string, list: readonly string[]): string {
  let out = s
  for (const secret of list) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  return out
}

/** Replace masked keys in `text`; `before` is the text's preceding character (context only). */
function maskedKeysOut(text: string, before: string): string {
  return (before + text)
    .replace(MASKED_KEY, (m, offset: number) => (offset < before.length ? m : REDACTED))
    .slice(before.length)
}

/**
 * Redaction for text that arrives in pieces (streamed tokens). A secret can be split over two
 * deltas, so the end of the text that could still become a secret is held back until the next delta
 * shows whether it does, and released by `flush()` at the end. The concatenation of everything
 * `push` and `flush` return equals `redactor(secrets)` applied to the whole text.
 */
export function streamRedactor(secrets: ReadonlyArray<string | undefined>): {
  push(delta: string): string
  flush(): string
} {
  const list = secretList(secrets)
  /** Text not let out yet, secrets already replaced (masked keys are replaced when let out). */
  let pending = ''
  /** The last character let out: whether a masked key can start right after it depends on it. */
  let before = ''
  /** Where a masked key that runs to the end of `text` starts, if one does. */
  const maskedStart = (text: string): number | undefined => {
    const m = MASKED_KEY_START.exec(before + text)
    return m && m.index >= before.length ? m.index - before.length : undefined
  }
  /** Length of the longest end of `text` that is the beginning of a secret or of a masked key. */
  const heldLength = (text: string): number => {
    const start = maskedStart(text)
    let held = start === undefined ? 0 : text.length - start
    for (const secret of list) {
      for (let k = Math.min(secret.length - 1, text.length); k > held; k--) {
        if (text.endsWith(secret.slice(0, k))) {
          held = k
          break
        }
      }
    }
    return held
  }
  const letOut = (text: string) => {
    const out = maskedKeysOut(text, before)
    if (text) before = text.slice(-1)
    return out
  }
  return {
    push(delta) {
      // Complete secrets are replaced first, so what is held back is only an unfinished one.
      const text = secretsOut(pending + delta, list)
      let cut = text.length - heldLength(text)
      // A masked key that would end at the cut might go on in the held part: hold it back too.
      for (let start = maskedStart(text.slice(0, cut)); start !== undefined; start = maskedStart(text.slice(0, cut)))
        cut = start
      pending = text.slice(cut)
      return letOut(text.slice(0, cut))
    },
    flush() {
      const rest = pending
      pending = ''
      return letOut(rest)
    },
  }
}
