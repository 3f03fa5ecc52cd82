/**
 * EVINCE prompts and reply shapes (pure). The paper gives the round prompt only as "Predict top-k
 * probability distribution on C with S and R at contentiousness level Δ" and the moderator's opening
 * wording (App. B.1/C.1); it has no CRIT or report prompt (CRIT is Chang 2023c). Parley's choices:
 * - Δ goes into the system prompt as a number with the matching row of the paper's Table 2.
 * - A debater sees the case, the other agent's latest distribution, the shared pool R of every
 *   argument made so far (attributed), and its own previous distribution (the paper's agents are
 *   chat sessions that remember what they said; App. C.7 "I slightly lowered … from 40% to 35%").
 * - Replies are JSON, validated with zod; an invalid reply is re-asked with the error (bounded).
 * - CRIT: the judge lists the agent's reasons and the rival reasons with validity γ and credibility
 *   θ (1–10); Γ is computed from those numbers by protocols/evince/core/metrics `critScore`, not by the judge.
 */
import { z } from 'zod'
import { entropy, type LabelProb, toneFor } from '@/protocols/evince/core/metrics'
import type { Debater, EvinceConfig, TurnMessage } from '@/protocols/evince/core'

export type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string }

/** A case: the information set S (symptoms), optionally a ground truth (never shown to the agents). */
export interface DebateCase {
  symptoms: string
  truth?: string
}

export const turnReply = z.object({
  predictions: z
    .array(
      z.object({
        label: z.string().trim().min(1, 'a label is empty'),
        probability: z.coerce.number().finite().min(0, 'a probability is negative'),
        justification: z.string().default(''),
      }),
    )
    .min(1, 'list at least one prediction'),
  arguments: z.array(z.string()).default([]),
  counterArguments: z.array(z.string()).default([]),
})
export type TurnReply = z.output<typeof turnReply>

const scored = z.object({
  reason: z.string(),
  validity: z.coerce.number().min(1).max(10),
  credibility: z.coerce.number().min(1).max(10),
})
export const critReply = z.object({
  claim: z.string().default(''),
  reasons: z.array(scored).default([]),
  rivals: z.array(scored).default([]),
  comment: z.string().default(''),
})
export type CritReply = z.output<typeof critReply>

export const reportReply = z.object({
  conclusion: z.string().min(1),
  arguments: z.array(z.string()).default([]),
  counterArguments: z.array(z.string()).default([]),
  missingInformation: z.array(z.string()).default([]),
  labTests: z.array(z.string()).default([]),
})
export type ReportReply = z.output<typeof reportReply>

const pct = (p: number) => `${Math.round(p * 1000) / 10}%`

export function formatDistribution(ps: readonly LabelProb[]): string {
  return ps
    .map((p, i) => `${i + 1}. ${p.label}: ${pct(p.probability)}${p.justification ? ` (${p.justification})` : ''}`)
    .join('\n')
}

/** The shared argument pool R: every argument and counter-argument made so far, attributed. */
export function argumentPool(turns: readonly TurnMessage[]): string[] {
  return turns.flatMap((t) => [
    ...t.arguments.map((a) => `${t.sender} (round ${t.round}): ${a}`),
    ...t.counterArguments.map((a) => `${t.sender} against the other (round ${t.round}): ${a}`),
  ])
}

const JSON_SHAPE = `{"predictions": [{"label": "…", "probability": 0.0, "justification": "…"}], "arguments": ["…"], "counterArguments": ["…"]}`

export function debaterPrompt(opts: {
  seat: Debater
  round: number
  delta: number
  config: Pick<EvinceConfig, 'k' | 'labels'>
  case: DebateCase
  /** Every turn so far (both agents), in order. */
  turns: readonly TurnMessage[]
}): ChatMessage[] {
  const { seat, round, delta, config } = opts
  const other: Debater = seat === 'A' ? 'B' : 'A'
  const tone = toneFor(delta)
  const system = [
    `You are debater ${seat}, one of two physicians in a structured diagnostic debate (EVINCE).`,
    `Contentiousness level Δ = ${delta.toFixed(2)} (0 = fully agreeable, 1 = fully confrontational).`,
    `At this level your tone is: ${tone.tone} Emphasis: ${tone.emphasis} Language: ${tone.language}`,
    `Predict a top-${config.k} probability distribution over diagnoses, probabilities normalized to one, each with a justification.`,
    config.labels.length ? `Choose labels only from this list: ${config.labels.join('; ')}.` : '',
    `Answer only with JSON of this shape: ${JSON_SHAPE}`,
    `"arguments" support your own distribution; "counterArguments" address the other debater's latest distribution.`,
  ]
    .filter(Boolean)
    .join('\n')
  const mine = [...opts.turns].reverse().find((t) => t.sender === seat)
  const theirs = [...opts.turns].reverse().find((t) => t.sender === other)
  const pool = argumentPool(opts.turns)
  const user = [
    `Round ${round}. Information set S (the patient's symptoms): ${opts.case.symptoms}`,
    theirs
      ? `Debater ${other}'s latest distribution (round ${theirs.round}):\n${formatDistribution(theirs.predictions)}`
      : '',
    mine ? `Your previous distribution (round ${mine.round}):\n${formatDistribution(mine.predictions)}` : '',
    pool.length ? `Arguments so far (R):\n${pool.map((a) => `- ${a}`).join('\n')}` : '',
    `Predict the top-${config.k} probability distribution on the diagnoses with S and R at contentiousness level Δ = ${delta.toFixed(2)}.`,
  ]
    .filter(Boolean)
    .join('\n\n')
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ]
}

export function critPrompt(opts: {
  target: Debater
  case: DebateCase
  turn: TurnMessage
  rival?: TurnMessage
}): ChatMessage[] {
  const { target, turn, rival } = opts
  const system = [
    'You are the moderator of a diagnostic debate, judging argument quality with CRIT (Critical Reading Inquisitive Template).',
    `Steps: (1) identify the claim Ω: debater ${target}'s distribution; (2) list the reasons R it gives for Ω;`,
    '(3) rate each reason r ⇒ Ω for validity γ (1–10, does it support the claim, logically and medically) and source credibility θ (1–10);',
    "(4) list the rival reasons R′ (the other debater's arguments against it) and rate them the same way; (5) comment on errors, e.g. reasoning that contradicts the symptoms.",
    'Answer only with JSON: {"claim": "…", "reasons": [{"reason": "…", "validity": 1, "credibility": 1}], "rivals": [{"reason": "…", "validity": 1, "credibility": 1}], "comment": "…"}',
  ].join('\n')
  const user = [
    `Symptoms: ${opts.case.symptoms}`,
    `Debater ${target}'s distribution (round ${turn.round}):\n${formatDistribution(turn.predictions)}`,
    turn.arguments.length ? `Its arguments:\n${turn.arguments.map((a) => `- ${a}`).join('\n')}` : '',
    rival?.counterArguments.length
      ? `Rival arguments from the other debater:\n${rival.counterArguments.map((a) => `- ${a}`).join('\n')}`
      : '',
    `Judge debater ${target} with CRIT.`,
  ]
    .filter(Boolean)
    .join('\n\n')
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ]
}

/** Bits of entropy above which the report must stress missing information (half of log2(k)… at least 1 bit). */
export function highEntropy(final: readonly LabelProb[]): boolean {
  const h = entropy(final.map((p) => p.probability))
  return h >= Math.max(1, Math.log2(Math.max(2, final.length)) / 2)
}

export function reportPrompt(opts: {
  case: DebateCase
  turns: readonly TurnMessage[]
  final: readonly LabelProb[]
}): ChatMessage[] {
  const h = entropy(opts.final.map((p) => p.probability))
  const high = highEntropy(opts.final)
  const lastA = [...opts.turns].reverse().find((t) => t.sender === 'A')
  const lastB = [...opts.turns].reverse().find((t) => t.sender === 'B')
  const system = [
    'You are the moderator of a finished diagnostic debate between two physicians (EVINCE).',
    'Deliver the joint, conciliatory conclusion with the main arguments and counter-arguments, and the missing information that would improve the diagnosis: further symptom inquiries and recommended lab tests.',
    'Answer only with JSON: {"conclusion": "…", "arguments": ["…"], "counterArguments": ["…"], "missingInformation": ["…"], "labTests": ["…"]}',
  ].join('\n')
  const user = [
    `Symptoms: ${opts.case.symptoms}`,
    lastA ? `Debater A's final distribution:\n${formatDistribution(lastA.predictions)}` : '',
    lastB ? `Debater B's final distribution:\n${formatDistribution(lastB.predictions)}` : '',
    `Combined distribution (weighted by argument quality):\n${formatDistribution(opts.final)}`,
    `Its entropy is ${h.toFixed(2)} bits${high ? ', which is high: stress the symptom inquiries and lab tests that would settle the diagnosis' : ''}.`,
    `Arguments made:\n${argumentPool(opts.turns)
      .map((a) => `- ${a}`)
      .join('\n')}`,
  ]
    .filter(Boolean)
    .join('\n\n')
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ]
}

const PREDICTION =
  /\{\s*"label"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"probability"\s*:\s*(-?[0-9.]+)(?:\s*,\s*"justification"\s*:\s*"((?:[^"\\]|\\.)*)")?/g

/**
 * The predictions already complete in a reply that is still streaming (objects written in the
 * requested key order: label, probability, justification), so the page can draw the bars as they
 * arrive. Display only: the stored turn is parsed and validated in full.
 */
export function partialPredictions(
  text: string,
): Array<{ label: string; probability: number; justification?: string }> {
  const unquote = (s: string) => {
    try {
      return JSON.parse(`"${s}"`) as string
    } catch {
      return s
    }
  }
  return [...text.matchAll(PREDICTION)].map((m) => ({
    label: unquote(m[1] ?? ''),
    probability: Number(m[2]),
    ...(m[3] !== undefined ? { justification: unquote(m[3]) } : {}),
  }))
}
