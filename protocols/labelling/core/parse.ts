/**
 * Reading the labeller's reply (seed 003 part B, §B.2 "Scoring"). The prompt ends with an open `[{`
 * (./prompt.ts), so the reply is normally its continuation, e.g. `"M": 2, "T": 1, "O": 1}]`.
 *
 * Leniency, in this order (anything else is unparseable, and the paper drops those: 90 of 96,000):
 * 1. A ```json … ``` (or ``` … ```) fenced block anywhere in the reply is read instead of the reply;
 *    an unclosed opening fence is dropped.
 * 2. The text is reconstructed as JSON: a reply that starts with `[` already repeats the primer and
 *    is taken as it is; one that starts with `{` restarted the object and gets `[` in front; any
 *    other reply is a continuation and gets `[{` in front.
 * 3. It is cut after the last `}]` (whitespace allowed between), dropping trailing prose; without
 *    one the array was left unterminated (a reply cut at max_tokens), so it is cut after the last
 *    `}` and closed with `]` — a half-written last judge is dropped, the complete ones kept — unless
 *    what follows that `}` holds an ellipsis ("...", "…"): that reply copied the prompt's example.
 * 4. JSON.parse, then every element must be an object with an `O`, and every `O`, `M` and `T` present
 *    must be the integer 0, 1 or 2 (`1.0` is the number 1 in JSON and is accepted; "1" and 1.5 are not).
 *    Other keys are ignored.
 * Prose with no fenced block ("The page is relevant") does not parse.
 *
 * Scoring: with A only the overall O counts (M and T are kept for display); the score is the mean
 * of the judges' O, in [0, 2]. With M five judges are expected, but 1 to 10 are accepted (a cut reply
 * may hold fewer; `judges.length` tells the caller). Without M one judge is asked for, yet the
 * prompt's example shows an array of several, so several are accepted and averaged the same way.
 *
 * Binarisation (§B.2 merges "relevant" and "highly relevant" into 1; the paper does not say how a
 * mean of five judges is binarised, ⚠5): `binary = score >= 1`, i.e. the mean judge says at least
 * "relevant" — the same threshold as a single label ≥ 1.
 */
import { z } from 'zod'
import { type Variant, parseVariant } from './variants'

export type Judge = { O: number; M?: number; T?: number }

export type Judgement = { ok: true; judges: Judge[]; score: number; binary: 0 | 1 } | { ok: false; reason: string }

export const MIN_JUDGES = 1
export const MAX_JUDGES = 10
/** Replies longer than this are not read (a sane reply is under 1,000 characters). */
export const MAX_REPLY_CHARS = 20_000

const label = z.number().refine((n) => n === 0 || n === 1 || n === 2, { message: 'must be the integer 0, 1 or 2' })
const withAspects = z.object({ O: label, M: label.optional(), T: label.optional() })
/** Without aspects only O is read: stray M or T keys are ignored, whatever they hold. */
const overallOnly = z.object({ O: label })

/** The binary label of a score in [0, 2]: 1 when the (mean) label is at least "relevant". */
export function binarise(score: number): 0 | 1 {
  return score >= 1 ? 1 : 0
}

function unfence(text: string): string {
  const closed = /```[A-Za-z]*[ \t]*\r?\n?([\s\S]*?)```/.exec(text)
  if (closed) return closed[1] ?? ''
  const open = /^```[A-Za-z]*[ \t]*\r?\n?/.exec(text)
  return open ? text.slice(open[0].length) : text
}

/** The reply as the JSON text the primer began, or why it cannot be. */
function reconstruct(reply: string): { json: string } | { reason: string } {
  const body = unfence(reply).trim()
  if (body === '') return { reason: 'the reply is empty' }
  const full = body.startsWith('[') ? body : body.startsWith('{') ? `[${body}` : `[{${body}`
  const ends = [...full.matchAll(/\}\s*\]/g)]
  const last = ends.at(-1)
  if (last?.index !== undefined) return { json: full.slice(0, last.index + last[0].length) }
  const brace = full.lastIndexOf('}')
  if (brace < 0) return { reason: 'the reply holds no complete JSON object' }
  if (/\.\.\.|…|\. \. \./.test(full.slice(brace + 1)))
    return { reason: "the reply ends with an ellipsis (it copied the prompt's example)" }
  return { json: `${full.slice(0, brace + 1)}]` }
}

/**
 * The judges, score and binary label of a reply (the continuation of the prompt's `[{`) under a
 * variant; `ok: false` with the reason when it cannot be read (the caller drops and counts it).
 */
export function parseJudgement(replyText: string, variant: Variant | string): Judgement {
  const v = typeof variant === 'string' ? parseVariant(variant) : variant
  if (replyText.length > MAX_REPLY_CHARS)
    return { ok: false, reason: `the reply is longer than ${MAX_REPLY_CHARS} characters` }
  const r = reconstruct(replyText)
  if ('reason' in r) return { ok: false, reason: r.reason }
  let value: unknown
  try {
    value = JSON.parse(r.json)
  } catch (e) {
    return { ok: false, reason: `the reply is not JSON (${e instanceof Error ? e.message : String(e)})` }
  }
  if (!Array.isArray(value)) return { ok: false, reason: 'the reply is not a JSON array of scores' }
  if (value.length < MIN_JUDGES || value.length > MAX_JUDGES)
    return {
      ok: false,
      reason: `the reply has ${value.length} judgements; ${MIN_JUDGES} to ${MAX_JUDGES} are accepted`,
    }
  const judges: Judge[] = []
  for (const [i, el] of value.entries()) {
    if (typeof el !== 'object' || el === null || Array.isArray(el))
      return { ok: false, reason: `judgement ${i + 1} is not a JSON object` }
    const j = (v.A ? withAspects : overallOnly).safeParse(el)
    if (!j.success) {
      const issue = j.error.issues[0]
      const key = issue?.path[0]
      const got = key !== undefined ? JSON.stringify((el as Record<string, unknown>)[String(key)]) : ''
      return {
        ok: false,
        reason:
          key !== undefined
            ? got === undefined
              ? `judgement ${i + 1} has no "${String(key)}" score`
              : `judgement ${i + 1}: "${String(key)}" is ${got}, but a score must be the integer 0, 1 or 2`
            : `judgement ${i + 1}: ${issue?.message ?? 'invalid'}`,
      }
    }
    judges.push(j.data)
  }
  const score = judges.reduce((s, j) => s + j.O, 0) / judges.length
  return { ok: true, judges, score, binary: binarise(score) }
}
