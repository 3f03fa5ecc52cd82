import {
  type Answer,
  agentTagAsync,
  answerProblem,
  type PxpConfig,
  type PxpMessage,
  type PxpSeat,
  otherSeat,
} from '@/protocols/pxp/core'
import { reactantsMatch } from '@/lib/tasks/chem'
import {
  agreeQuestion,
  genericContextTurn,
  genericPrompt,
  genericQuery,
  matchGeneric,
  TaskTemplate,
} from '@/lib/tasks/generic'
import { assemblePrompt, contextTurn, EXPLANATION_KEY, type PxpTaskKind, queryTurn } from '@/protocols/pxp/core/prompts'
import { labelsMatch, parseReply } from '@/lib/tasks/reply'
import type { Agent, AgentContext, ChatMessage, LlmRef, LlmTools, SessionConfig } from '@/lib/server/sdk'
import { pxp } from '@/protocols/pxp/core'

/**
 * PXP's agents: an LLM seat (the machine, or an LLM tester) asks its model for (y, e), re-asked when
 * the reply cannot be parsed or its answer breaks the protocol's rule (`answerProblem`), then the
 * session stalls; the proxy answers the instance's ground truth. Both tag their message
 * with Procedure 2: MATCH is the task's (labels, canonical reactant sets, a template's mode), AGREE
 * is the seat's checker LLM at temperature 0 (identical explanations agree without a call).
 */
export interface PxpExtras {
  /** A generic task's template, copied into the session when its run was created. */
  template?: TaskTemplate
  /**
   * Experts in the machine seat against the ground-truth proxy: whether they see the proxy's answer
   * (`shown`, which is the reference answer itself) or only its tag (`tag-only`). Recorded in the run.
   */
  proxyAnswer?: 'shown' | 'tag-only'
  /** The machine keeps the dialogues of the earlier sessions of its repetition as context (the paper). */
  carryOver?: boolean
}
export type PxpCtx = AgentContext<typeof pxp, PxpExtras>

/** A session's stored config: the protocol's (n, k) and, for a generic task, the template snapshot. */
export function pxpSessionConfig(raw: unknown, task: string): SessionConfig<PxpConfig, PxpExtras> {
  const { template, proxyAnswer, carryOver, ...protocol } = (raw ?? {}) as {
    template?: unknown
    proxyAnswer?: unknown
    carryOver?: unknown
  }
  return {
    config: pxp.config.parse(protocol),
    extras: {
      ...(task === 'generic' ? { template: TaskTemplate.parse(template) } : {}),
      ...(proxyAnswer === 'tag-only' || proxyAnswer === 'shown' ? { proxyAnswer } : {}),
      ...(carryOver === true ? { carryOver } : {}),
    },
  }
}

/** MATCH for a task's predictions. */
export async function matcher(task: string, template?: TaskTemplate) {
  if (template) return matchGeneric(template.match)
  if (task === 'drug') return (a: string, b: string) => reactantsMatch(a, b)
  return labelsMatch
}

/** AGREE through a checker LLM (temperature 0): identical explanations agree without a call. */
function checker(task: string, ref: LlmRef, llm: LlmTools, template?: TaskTemplate) {
  const subject = task === 'rad' ? 'explanations of an X-ray' : 'retrosynthesis pathways'
  return async (a: string, b: string) => {
    if (a.trim() === b.trim()) return true
    const messages: ChatMessage[] = template
      ? [
          { role: 'system', content: 'You are an expert judge. Respond only with Yes or No.' },
          { role: 'user', content: agreeQuestion(template, a, b) },
        ]
      : [
          {
            role: 'system',
            content: `You are an expert. Judge whether two ${subject} are consistent. Respond only with Yes or No.`,
          },
          { role: 'user', content: `Given A: ${a}\nand B: ${b}\nare A and B consistent?` },
        ]
    const r = await llm.chat(ref, { messages, temperature: 0, seed: 42 }, { purpose: 'pxp-agree' })
    return /\byes\b/i.test(r.text)
  }
}

/**
 * The built-in task of a session without a template (a generic task always has its template): the
 * session's task column is the plugin's own word, a plain string; as the prompts read it, every task
 * but RAD is DRUG.
 */
const builtInTask = (task: string): PxpTaskKind => (task === 'rad' ? 'rad' : 'drug')

const asAnswer = (m?: PxpMessage): Answer | undefined => (m ? { y: m.prediction, e: m.explanation } : undefined)

/** Procedure 2 for the seat's new answer. */
async function tagged(ctx: PxpCtx, answer: Answer, checkerRef: LlmRef) {
  const log = ctx.session.messages
  const byJ = (n: number) => log.find((m) => m.seq === n)
  const template = ctx.extras.template
  return agentTagAsync({
    j: ctx.ask.j,
    k: ctx.config.k,
    own: answer,
    ownPrev: asAnswer(byJ(ctx.ask.j - 2)),
    partnerPrev: asAnswer(byJ(ctx.ask.j - 1)),
    match: await matcher(ctx.session.task, template),
    agree: checker(ctx.session.task, checkerRef, ctx.llm, template),
  })
}

function helper(ctx: PxpCtx, name: string): LlmRef {
  const fill = ctx.fill
  const ref = fill.kind === 'human' ? undefined : fill.helpers[name]
  if (!ref) throw new Error(`the ${ctx.ask.seat} seat has no ${name}`)
  return ref
}

/**
 * The prompt of an LLM seat, written from its side: its own messages are the assistant's turns. With
 * carry-over the dialogues of the earlier sessions of its repetition come first (`carried` turns).
 */
async function prompt(
  ctx: PxpCtx,
  vision: boolean,
): Promise<{ messages: ChatMessage[]; carried: number; sessions: number }> {
  const template = ctx.extras.template
  const task = builtInTask(ctx.session.task)
  const seat = ctx.ask.seat
  const chain = ctx.extras.carryOver ? await ctx.earlierSessions() : []
  const earlier = chain.flat()
  const turns = [...earlier, ...ctx.session.messages].map((m) => {
    const msg = {
      sender: m.sender === seat ? ('m' as const) : ('h' as const),
      tag: m.tag,
      y: m.prediction,
      e: m.explanation,
    }
    return template ? genericContextTurn(template, msg) : contextTurn(task, msg)
  })
  const { image, smiles } = ctx.instance.input
  const imageUrl = !vision
    ? undefined
    : (ctx.instance.imageUrl ?? (typeof image === 'string' && ctx.instance.datasetId ? `asset:${image}` : undefined))
  const messages: ChatMessage[] = template
    ? genericPrompt(template, turns, genericQuery(template, ctx.instance.input))
    : assemblePrompt(
        task,
        turns,
        queryTurn(task, { imageUrl, smiles: typeof smiles === 'string' ? smiles : undefined }),
      )
  return { messages, carried: earlier.length, sessions: chain.length }
}

/**
 * C for a message: the prompt, with the carried-over dialogues of earlier sessions stood in for by one
 * line (they are those sessions' own messages, and the call log keeps the exact request). Without this
 * every context of a long chain would repeat the whole repetition.
 */
function contextOf(p: { messages: ChatMessage[]; carried: number; sessions: number }) {
  if (!p.carried) return p.messages
  const [system, ...rest] = p.messages
  return [
    system,
    { role: 'carried', content: `${p.carried} messages of the ${p.sessions} earlier session(s) of this repetition` },
    ...rest.slice(p.carried),
  ]
}

const llm: Agent<typeof pxp, PxpExtras> = async (ctx) => {
  if (ctx.fill.kind !== 'llm') throw new Error('unreachable')
  const template = ctx.extras.template
  const model = ctx.fill.model
  const p = await prompt(ctx, model.vision ?? true)
  const messages = p.messages
  const keys = template
    ? { prediction: template.predictionField, explanation: [template.explanationField] }
    : { explanation: [EXPLANATION_KEY[builtInTask(ctx.session.task)], 'Explanation'] }
  const r = await ctx.llm.ask(
    model,
    { messages },
    {
      parse: (text) => {
        const p = parseReply(text, keys)
        if (!p.ok) return p
        // The protocol's own rule for (y, e), so a reply `apply` would refuse is re-asked instead.
        const problem = answerProblem(p.value.prediction, p.value.explanation)
        return problem
          ? { ok: false, error: problem }
          : { ok: true, value: { y: p.value.prediction, e: p.value.explanation } }
      },
      reaskPrompt: (error) => `${error} Answer again in the required format.`,
    },
    // A person on the other seat watches the answer arrive token by token.
    { purpose: 'pxp-generate', stream: ctx.watched },
  )
  const t = await tagged(ctx, r.value, helper(ctx, 'checker'))
  return {
    message: { seq: ctx.ask.j, sender: ctx.ask.seat, tag: t.tag, prediction: r.value.y, explanation: r.value.e },
    context: contextOf(p),
    meta: { category: t.category, changed: t.changed, raw: r.text },
    callId: r.callId,
  }
}

const proxy: Agent<typeof pxp, PxpExtras> = async (ctx) => {
  const answer = { y: ctx.instance.prediction, e: ctx.instance.explanation }
  const t = await tagged(ctx, answer, helper(ctx, 'checker'))
  return {
    message: { seq: ctx.ask.j, sender: ctx.ask.seat, tag: t.tag, prediction: answer.y, explanation: answer.e },
    context: { proxy: 'ground truth' },
    meta: { category: t.category, changed: t.changed },
  }
}

export const pxpAgents = { llm, proxy }

export const receiverOf = (sender: PxpSeat) => otherSeat(sender)
