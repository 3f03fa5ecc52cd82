import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { REDACTED, redactor, streamRedactor } from './redact'

const KEY = 'sk-live-abab-0123456789'

/** Feed `text` to a stream redactor in the given pieces; return what it let out, piece by piece. */
function streamed(secrets: string[], pieces: string[]): string[] {
  const r = streamRedactor(secrets)
  return [...pieces.map((p) => r.push(p)), r.flush()]
}

/** Cut a text at the given positions. */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((p) => p % (text.length + 1)))].sort((a, b) => a - b)
  const out: string[] = []
  let from = 0
  for (const p of points) {
    out.push(text.slice(from, p))
    from = p
  }
  out.push(text.slice(from))
  return out
}

describe('redaction', () => {
  it('replaces every secret and provider-masked keys; ignores secrets too short to matter', () => {
    const redact = redactor([KEY, 'X-header-value-42', 'abc', undefined])
    expect(redact(`key ${KEY} and X-header-value-42, sk-liv****6789 and abc`)).toBe(
      `key ${REDACTED} and ${REDACTED}, ${REDACTED} and abc`,
    )
  })

  it('a key split over streamed deltas never comes out, not even in pieces', () => {
    const pieces = ['Your key is sk-li', 've-abab-01', '23456789, keep it', ' safe.']
    const out = streamed([KEY], pieces)
    expect(out.join('')).toBe(`Your key is ${REDACTED}, keep it safe.`)
    // Nothing of the key left before it was complete: the held-back part was not shown early.
    expect(out[0]).toBe('Your key is ')
    expect(out[1]).toBe('')
  })

  it('streamed output equals the redaction of the whole text, however it is cut (property)', () => {
    const secrets = [KEY, 'hdr-SECRET-value', 'x y!z']
    const word = fc.constantFrom(
      ...[
        'a',
        'b',
        ' ',
        'sk-',
        'sk-live-',
        '***',
        'ab',
        KEY,
        'hdr-SECRET',
        '-value',
        '\n',
        'x',
        'x y',
        '!z',
        's',
        'k-',
      ],
    )
    fc.assert(
      fc.property(fc.array(word, { maxLength: 30 }), fc.array(fc.nat(400), { maxLength: 12 }), (words, at) => {
        const text = words.join('')
        const out = streamed(secrets, cut(text, at)).join('')
        expect(out).toBe(redactor(secrets)(text))
        for (const s of secrets) expect(out).not.toContain(s)
      }),
      { numRuns: 2000 },
    )
  })
})
