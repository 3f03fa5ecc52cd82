/**
 * ReHAC program deciders (pure): who carries out step t, the agent or the human (a_t^collab, 0 = agent,
 * 1 = human; rehac.md §1.2, baselines §2.5, deployment §2.4/§5.5). Every decider is a function of the
 * state text, the step index t, an episode key and (where random) a recorded seed, so a run can be
 * replayed exactly:
 * - `randomDecider(seed)`: p(human) = 0.5 per step (the Random baseline and the collection sampler).
 * - `agentOnly` / `humanOnly`: p(human) = 0 / 1.
 * - `policyDecider(model, rule)`: the trained logistic policy (policy.ts) with a decision rule.
 * - the HTTP policy contract (`httpPolicyRequest`/`httpPolicyResponse`): an external policy service
 *   answers p(human) for a state; `decideFromHttpResponse` applies the same rule as the trained policy.
 *   The call itself lives in the server layer, not here.
 *
 * Randomness is hash-based, not a stateful PRNG: u(seed, episodeKey, t) = fmix32(fnv1a(
 * `${seed}\u0000${episodeKey}\u0000${t}`)) / 2^32, where fnv1a is FNV-1a 32-bit over UTF-16 code units
 * and fmix32 is MurmurHash3's finaliser (to spread FNV's weak low bits). A step's draw therefore does
 * not depend on which other steps or episodes were decided before it, nor in what order.
 */
import { z } from 'zod'
import { fnv1a } from '../../../lib/llm/text'
import { argmaxHuman, type PolicyModel, pHuman, parseState } from './policy'

export type Solver = 'agent' | 'human'

export interface Decision {
  solver: Solver
  /** p(human) the decision was drawn from, when the decider has one. */
  pHuman?: number
}

export interface DeciderInput {
  /** The state text s_t (question + history, ending with the open "<solver>" marker). */
  state: string
  /** 1-based index of the step being decided. */
  t: number
  /** Identifies the episode (e.g. run id + question id + repeat) for seeded draws. */
  episodeKey: string
}

export type Decider = (input: DeciderInput) => Decision

/** How a probability becomes a choice (rehac.md A5: the authors' code uses argmax). */
export const decisionRule = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('argmax') }),
  /** Human iff p(human) ≥ value (trades HIR against T, rehac.md §5.5). */
  z.object({ kind: z.literal('threshold'), value: z.number().min(0).max(1) }),
  /** Human iff u(seed, episodeKey, t) < p(human). */
  z.object({ kind: z.literal('sample'), seed: z.number().int() }),
])
export type DecisionRule = z.infer<typeof decisionRule>

function fmix32(h: number): number {
  let x = h >>> 0
  x ^= x >>> 16
  x = Math.imul(x, 0x85ebca6b)
  x ^= x >>> 13
  x = Math.imul(x, 0xc2b2ae35)
  x ^= x >>> 16
  return x >>> 0
}

/** The seeded uniform draw in [0, 1) for one step of one episode (see the file comment). */
export function stepUniform(seed: number, episodeKey: string, t: number): number {
  return fmix32(fnv1a(`${seed}\u0000${episodeKey}\u0000${t}`)) / 4294967296
}

/** Applies a decision rule to p(human). p outside [0, 1] or NaN is refused. */
export function decideFromP(p: number, rule: DecisionRule, at: { episodeKey: string; t: number }): Decision {
  if (!(p >= 0 && p <= 1)) throw new Error(`p(human) must be in [0, 1], got ${p}`)
  let human: boolean
  if (rule.kind === 'argmax') human = argmaxHuman(p)
  else if (rule.kind === 'threshold') human = p >= rule.value
  else human = stepUniform(rule.seed, at.episodeKey, at.t) < p
  return { solver: human ? 'human' : 'agent', pHuman: p }
}

/** Random baseline: p(human) = 0.5 each step, reproducible from the recorded seed. */
export function randomDecider(seed: number, p = 0.5): Decider {
  return ({ episodeKey, t }) => decideFromP(p, { kind: 'sample', seed }, { episodeKey, t })
}

export const agentOnly: Decider = () => ({ solver: 'agent', pHuman: 0 })
export const humanOnly: Decider = () => ({ solver: 'human', pHuman: 1 })

/** The trained policy; argmax unless another rule is given. */
export function policyDecider(model: PolicyModel, rule: DecisionRule = { kind: 'argmax' }): Decider {
  return ({ state, episodeKey, t }) => decideFromP(pHuman(model, state), rule, { episodeKey, t })
}

/** 1-based index of the step a state asks about: finished steps (solver markers) + 1. */
export function stepIndexOf(state: string): number {
  return parseState(state).solvers.length + 1
}

// ───────────────────────────── HTTP policy contract ─────────────────────────────

/** What Parley sends an external policy service (rehac.md §5.5 `POST /decide`). */
export const httpPolicyRequest = z.object({
  state: z.string().max(200_000),
  t: z.number().int().min(1).max(1000),
  question: z.string().max(20_000).optional(),
})
export type HttpPolicyRequest = z.infer<typeof httpPolicyRequest>

/** What it must answer: p(human) in [0, 1]. Extra keys (e.g. pAgent) are ignored. */
export const httpPolicyResponse = z.object({
  pHuman: z.number().min(0).max(1),
})
export type HttpPolicyResponse = z.infer<typeof httpPolicyResponse>

export function httpRequestFor(input: DeciderInput, question?: string): HttpPolicyRequest {
  return httpPolicyRequest.parse({ state: input.state, t: input.t, ...(question === undefined ? {} : { question }) })
}

/** Validates a service's JSON answer and decides with the shared rule; a malformed answer throws. */
export function decideFromHttpResponse(
  raw: unknown,
  rule: DecisionRule,
  at: { episodeKey: string; t: number },
): Decision {
  const parsed = httpPolicyResponse.safeParse(raw)
  if (!parsed.success) throw new Error(`policy service answer refused: ${parsed.error.issues[0]?.message ?? 'invalid'}`)
  return decideFromP(parsed.data.pHuman, rule, at)
}
