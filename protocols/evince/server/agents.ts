import type { z } from 'zod'
import { critScore } from '@/protocols/evince/core/metrics'
import {
  type CritMessage,
  EVINCE_SUM_TOLERANCE,
  evince,
  type EvinceConfig,
  type EvinceInstance,
  type EvinceMessage,
  type EvinceState,
  finalDistribution,
  type TurnMessage,
  turnProblem,
} from '@/protocols/evince/core'
import {
  critPrompt,
  critReply,
  type DebateCase,
  debaterPrompt,
  reportPrompt,
  reportReply,
  turnReply,
} from '@/protocols/evince/core/prompts'
import { LlmError } from '@/lib/llm/client'
import { ProtocolError } from '@/lib/protocols/types'
import type { Agent } from '@/lib/server/sdk'

/**
 * EVINCE's agents. A debater LLM answers a JSON top-k distribution, held to the protocol's rules
 * (`debaterTurn`: re-asked with the error when it breaks them, bounded, then the session stalls; a
 * list longer than k is cut to the top k and rescaled, with a warning kept in C); the moderator's judge LLM scores CRIT for one agent or writes the final report
 * (temperature 0 unless set). The program "no-judge" fills the moderator without a model: the debate
 * then runs without CRIT and report (equal weights), so it is never asked anything.
 */
const caseOf = (instance: EvinceInstance): DebateCase => ({ symptoms: instance.input.symptoms })
export const turnsOf = (log: readonly EvinceMessage[]) => log.filter((m): m is TurnMessage => m.kind === 'turn')

/**
 * A debater's reply → its turn, or why the reply cannot be one. The reply is read as the model meant
 * it, then held to the protocol's own rules (`turnProblem`, the rules `apply` enforces), so a reply
 * that breaks them is re-asked with the reason and never becomes a turn:
 * - probabilities written in percent (each in [0, 100], some above 1, summing to 100 within the
 *   tolerance) are read as fractions, with a warning;
 * - the whole list must obey the rules except k (labels naming a diagnosis once, in the label space
 *   when the debate has one, probabilities in [0, 1] summing to 1 within the tolerance);
 * - sorted by probability (stable), a list longer than k is cut to the top k and rescaled to sum to
 *   1, with a warning (kept in C);
 * - the turn itself then obeys every rule, k included.
 */
export function debaterTurn(
  config: EvinceConfig,
  reply: z.output<typeof turnReply>,
):
  | {
      ok: true
      predictions: TurnMessage['predictions']
      arguments: string[]
      counterArguments: string[]
      warnings: string[]
    }
  | { ok: false; error: string } {
  const warnings: string[] = []
  let listed = reply.predictions.map((p) => ({ ...p, label: p.label.trim() }))
  const raw = listed.reduce((a, p) => a + p.probability, 0)
  if (
    listed.some((p) => p.probability > 1) &&
    listed.every((p) => p.probability <= 100) &&
    Math.abs(raw / 100 - 1) <= EVINCE_SUM_TOLERANCE + 1e-9
  ) {
    listed = listed.map((p) => ({ ...p, probability: p.probability / 100 }))
    warnings.push('probabilities given in percent; read as fractions')
  }
  const whole = turnProblem({ ...config, k: Number.POSITIVE_INFINITY }, listed)
  if (whole) return { ok: false, error: whole.message }
  const sorted = listed.map((p, i) => ({ p, i })).sort((a, b) => b.p.probability - a.p.probability || a.i - b.i)
  let kept = sorted.slice(0, config.k).map((x) => x.p)
  if (sorted.length > config.k) {
    const mass = kept.reduce((a, p) => a + p.probability, 0)
    if (mass <= 0) return { ok: false, error: `the top ${config.k} labels have no probability` }
    kept = kept.map((p) => ({ ...p, probability: p.probability / mass }))
    warnings.push(
      `listed ${sorted.length} labels; kept the top ${config.k} (${Number((mass * 100).toFixed(1))} % of the probability) and rescaled them to 100 %`,
    )
  }
  const problem = turnProblem(config, kept)
  if (problem) return { ok: false, error: problem.message }
  return {
    ok: true,
    predictions: kept,
    arguments: reply.arguments,
    counterArguments: reply.counterArguments,
    warnings,
  }
}

/**
 * Why `apply` would refuse `message` in `state` (its words), or null: the last check of every reply,
 * so the agent re-asks for exactly what the protocol refuses and a refused message is never produced.
 */
function refusal(state: EvinceState, message: EvinceMessage): string | null {
  try {
    evince.apply(state, message)
    return null
  } catch (err) {
    if (err instanceof ProtocolError) return err.message
    throw err
  }
}

const llm: Agent<typeof evince> = async (ctx) => {
  if (ctx.fill.kind !== 'llm') throw new Error('unreachable')
  const { config, instance, state, ask } = ctx
  const log = ctx.session.messages
  const model = ctx.fill.model
  if (ask.kind === 'turn') {
    const prompt = debaterPrompt({
      seat: ask.seat,
      round: ask.round,
      delta: ask.delta,
      config,
      case: caseOf(instance),
      turns: turnsOf(log),
    })
    const turn = (v: z.output<typeof turnReply>) => {
      const t = debaterTurn(config, v)
      if (!t.ok) return t
      const message: TurnMessage = {
        seq: ask.j,
        kind: 'turn',
        sender: ask.seat,
        round: ask.round,
        predictions: t.predictions,
        arguments: t.arguments,
        counterArguments: t.counterArguments,
      }
      const refused = refusal(state, message)
      return refused ? { ok: false as const, error: refused } : { ...t, message }
    }
    const r = await ctx.llm.json(model, { messages: prompt }, turnReply, {
      purpose: 'evince-debate',
      stream: true,
      check: (v) => {
        const t = turn(v)
        return t.ok ? null : t.error
      },
    })
    // The check above accepted this very value, and `turn` is pure.
    const t = turn(r.value)
    if (!t.ok) throw new Error(`unreachable: ${t.error}`)
    return {
      message: t.message,
      context: { messages: prompt, warnings: t.warnings },
      meta: { raw: r.text },
      callId: r.callId,
    }
  }
  // The judge scores at temperature 0 unless the run set one.
  const judge = { ...model, temperature: model.temperature ?? 0 }
  if (ask.kind === 'crit') {
    const round = state.rounds.at(-1)
    const turn = round?.[ask.target]
    if (!turn) throw new Error('unreachable: CRIT before the turn')
    const rival = round?.[ask.target === 'A' ? 'B' : 'A']
    const prompt = critPrompt({ target: ask.target, case: caseOf(instance), turn, rival })
    const crit = (v: z.output<typeof critReply>): CritMessage => ({
      seq: ask.j,
      kind: 'crit',
      sender: 'moderator',
      round: ask.round,
      target: ask.target,
      score: critScore(v.reasons, v.rivals),
      reasons: v.reasons,
      rivals: v.rivals,
      comment: v.comment,
    })
    const r = await ctx.llm.json(judge, { messages: prompt }, critReply, {
      purpose: 'evince-crit',
      check: (v) => refusal(state, crit(v)),
    })
    return { message: crit(r.value), context: { messages: prompt }, meta: { raw: r.text }, callId: r.callId }
  }
  const final = finalDistribution(state)
  const prompt = reportPrompt({ case: caseOf(instance), turns: turnsOf(log), final: final?.crit ?? [] })
  const report = (v: z.output<typeof reportReply>): EvinceMessage => ({
    seq: ask.j,
    kind: 'report',
    sender: 'moderator',
    ...v,
  })
  const r = await ctx.llm.json(judge, { messages: prompt }, reportReply, {
    purpose: 'evince-report',
    check: (v) => refusal(state, report(v)),
  })
  return {
    message: report(r.value),
    context: { messages: prompt },
    meta: { raw: r.text },
    callId: r.callId,
  }
}

/** The moderator without a judge model: a run set up this way has CRIT and the report off. */
const noJudge: Agent<typeof evince> = async () => {
  throw new LlmError('client', 'This debate has no judge model, so CRIT and the report cannot run.', [])
}

export const evinceAgents = { llm, program: { 'no-judge': noJudge } }
