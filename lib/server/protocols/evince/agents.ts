import type { z } from 'zod'
import { canonicalLabel, critScore } from '@/lib/metrics/evince'
import {
  type CritMessage,
  type Debater,
  type EvinceAsk,
  type EvinceConfig,
  type EvinceInstance,
  type EvinceMessage,
  type EvinceState,
  finalDistribution,
  type TurnMessage,
} from '@/lib/protocols/evince'
import {
  critPrompt,
  critReply,
  type DebateCase,
  debaterPrompt,
  reportPrompt,
  reportReply,
  turnReply,
} from '@/lib/tasks/evince-prompts'
import { LlmError } from '@/lib/llm/client'
import type { ChatMessage } from '@/lib/server/engine/llm'
import type { Agent, AgentContext } from '@/lib/server/engine/plugin'

/**
 * EVINCE's agents. A debater LLM answers a JSON top-k distribution (re-asked with the error when
 * invalid, bounded; a list longer than k is cut to the top k with a warning kept in C; a closed label
 * space is enforced); the moderator's judge LLM scores CRIT for one agent or writes the final report
 * (temperature 0 unless set). The program "no-judge" fills the moderator without a model: the debate
 * then runs without CRIT and report (equal weights), so it is never asked anything.
 */
export type EvinceCtx = AgentContext<EvinceConfig, EvinceInstance, EvinceState, EvinceAsk>

const caseOf = (instance: EvinceInstance): DebateCase => ({ symptoms: instance.input.symptoms })
export const turnsOf = (log: readonly EvinceMessage[]) => log.filter((m): m is TurnMessage => m.kind === 'turn')

/**
 * A debater's reply → its turn message: sorted by probability (stable), cut to the top k (a warning
 * is kept), checked against a closed label space.
 */
function turnFrom(config: EvinceConfig, reply: z.output<typeof turnReply>) {
  const sorted = reply.predictions
    .map((p, i) => ({ p, i }))
    .sort((a, b) => b.p.probability - a.p.probability || a.i - b.i)
  const kept = sorted.slice(0, config.k).map((x) => x.p)
  return {
    predictions: kept,
    arguments: reply.arguments,
    counterArguments: reply.counterArguments,
    warnings: sorted.length > config.k ? [`listed ${sorted.length} labels; kept the top ${config.k}`] : [],
  }
}

export function labelSpaceProblem(config: EvinceConfig, labels: string[]): string | null {
  if (!config.labels.length) return null
  const allowed = new Set(config.labels.map((l) => canonicalLabel(l, config.aliases)))
  const bad = labels.filter((l) => !allowed.has(canonicalLabel(l, config.aliases)))
  return bad.length ? `these labels are not in the label space: ${bad.join(', ')}` : null
}

const llm: Agent = async (raw) => {
  const ctx = raw as EvinceCtx
  if (ctx.fill.kind !== 'llm') throw new Error('unreachable')
  const { config, instance, state, ask } = ctx
  const log = ctx.session.messages as EvinceMessage[]
  const model = ctx.fill.model
  if (ask.kind === 'turn') {
    const prompt = debaterPrompt({
      seat: ask.seat as Debater,
      round: ask.round,
      delta: ask.delta,
      config,
      case: caseOf(instance),
      turns: turnsOf(log),
    })
    const r = await ctx.llm.json(model, { messages: prompt as ChatMessage[] }, turnReply, {
      purpose: 'evince-debate',
      stream: true,
      check: (v) =>
        labelSpaceProblem(
          config,
          v.predictions.map((p) => p.label),
        ),
    })
    const t = turnFrom(config, r.value)
    const message: TurnMessage = {
      seq: ask.j,
      kind: 'turn',
      sender: ask.seat as Debater,
      round: ask.round,
      predictions: t.predictions,
      arguments: t.arguments,
      counterArguments: t.counterArguments,
    }
    return { message, context: { messages: prompt, warnings: t.warnings }, meta: { raw: r.text }, callId: r.callId }
  }
  // The judge scores at temperature 0 unless the run set one.
  const judge = { ...model, temperature: model.temperature ?? 0 }
  if (ask.kind === 'crit') {
    const round = state.rounds.at(-1)
    const turn = round?.[ask.target]
    if (!turn) throw new Error('unreachable: CRIT before the turn')
    const rival = round?.[ask.target === 'A' ? 'B' : 'A']
    const prompt = critPrompt({ target: ask.target, case: caseOf(instance), turn, rival })
    const r = await ctx.llm.json(judge, { messages: prompt as ChatMessage[] }, critReply, { purpose: 'evince-crit' })
    const message: CritMessage = {
      seq: ask.j,
      kind: 'crit',
      sender: 'moderator',
      round: ask.round,
      target: ask.target,
      score: critScore(r.value.reasons, r.value.rivals),
      reasons: r.value.reasons,
      rivals: r.value.rivals,
      comment: r.value.comment,
    }
    return { message, context: { messages: prompt }, meta: { raw: r.text }, callId: r.callId }
  }
  const final = finalDistribution(state)
  const prompt = reportPrompt({ case: caseOf(instance), turns: turnsOf(log), final: final?.crit ?? [] })
  const r = await ctx.llm.json(judge, { messages: prompt as ChatMessage[] }, reportReply, { purpose: 'evince-report' })
  return {
    message: { seq: ask.j, kind: 'report', sender: 'moderator', ...r.value },
    context: { messages: prompt },
    meta: { raw: r.text },
    callId: r.callId,
  }
}

/** The moderator without a judge model: a run set up this way has CRIT and the report off. */
const noJudge: Agent = async () => {
  throw new LlmError('client', 'This debate has no judge model, so CRIT and the report cannot run.', [])
}

export const evinceAgents = { llm, program: { 'no-judge': noJudge } }
