import { LlmError } from '@/lib/llm/client'
import type { AgentContext, ChatMessage, ProgramDef, Produced } from '@/lib/server/sdk'
import { checkProposal } from '@/protocols/mint/core/checks'
import { feedbackPrompt, instructionPrompt } from '@/protocols/mint/core/prompts'
import {
  AGENT_LLM_SETTINGS,
  chatHistory,
  FEEDBACK_LLM_SETTINGS,
  type MintMessage,
  type MintState,
  type mintProtocol,
  TASK_TYPE_OF,
} from '@/protocols/mint/core/protocol'
import { mintEnvData, writeCorpus } from '@/protocols/mint/server/corpus'
import { type CellResult, cellProgram, INSTALL_HINT, runTests, type TestsResult } from '@/protocols/mint/server/sandbox'

/**
 * MINT's seats on the engine. The evaluated model and the feedback model are the engine's recorded LLM
 * calls with the paper's settings; the Python tool and the code tasks' tests are programs run through
 * `ctx.exec` (recorded, idempotent per step; the sandbox itself is server/sandbox.ts); the success check
 * of the reasoning sets is pure (core/checks.ts).
 */
type Ctx = AgentContext<typeof mintProtocol>

/** The plugin's programs: a cell of the episode's persistent Python session, and a code task's tests. */
export const mintPrograms: Record<string, ProgramDef> = {
  python: { run: (input, ctx) => cellProgram.run(input, ctx) },
  tests: {
    run: (input, ctx) => runTests(input, { signal: ctx.signal }),
  },
}

/** Why the tool could not run, said plainly (the step stalls with it; Retry once it is installed). */
function unavailable(error: string | null): Error {
  return new Error(
    `MINT's Python tool is unavailable: ${error ?? 'the sandbox failed'}. Install it with: ${INSTALL_HINT}`,
  )
}

/** The model chat of the evaluated model's next turn: the released history, one user message first. */
export function agentRequest(state: MintState) {
  const messages: ChatMessage[] = chatHistory(state, instructionPrompt(state.config, state.instance))
  return {
    messages,
    temperature: AGENT_LLM_SETTINGS.temperature,
    max_tokens: AGENT_LLM_SETTINGS.maxTokens,
    stop: [...AGENT_LLM_SETTINGS.stop],
  }
}

/** The feedback model's request after the latest turn: the paper's feedback template as one user message. */
export function feedbackRequest(state: MintState) {
  const history = chatHistory(state, instructionPrompt(state.config, state.instance))
  const messages: ChatMessage[] = [{ role: 'user', content: feedbackPrompt(state, history) }]
  return {
    messages,
    temperature: FEEDBACK_LLM_SETTINGS.temperature,
    max_tokens: FEEDBACK_LLM_SETTINGS.maxTokens,
    stop: [...FEEDBACK_LLM_SETTINGS.stop],
  }
}

/** The model refused the request for its length (HTTP 400 naming the context or the token limit). */
export function isContextOverflow(err: unknown): boolean {
  return (
    err instanceof LlmError &&
    err.kind === 'client' &&
    (err.httpStatus === undefined || err.httpStatus === 400) &&
    /context length|context_length|maximum context|too many tokens|reduce the length/i.test(err.message)
  )
}

/** The LLM seats: the evaluated model (its turn) and the simulated expert (feedback). */
export async function llmAgent(ctx: Ctx): Promise<Produced<MintMessage>> {
  if (ctx.fill.kind !== 'llm') throw new Error('an LLM seat without a model')
  const { ask } = ctx
  if (ask.kind === 'turn') {
    const request = agentRequest(ctx.state)
    let r: { text: string; callId: string | null }
    try {
      r = await ctx.llm.chat(ctx.fill.model, request, { purpose: 'mint.turn', stream: ctx.watched })
    } catch (err) {
      // As the authors' agent: a request the model refuses for its length ends the episode with `error`
      // (the history only grows, so a retry cannot help); every other failure stalls the step for a Retry.
      if (!isContextOverflow(err)) throw err
      return {
        message: {
          seq: ask.j,
          sender: 'agent',
          kind: 'turn',
          content: '',
          error: (err as Error).message.slice(0, 20_000),
        },
        context: { messages: request.messages.length, settings: AGENT_LLM_SETTINGS },
      }
    }
    return {
      message: { seq: ask.j, sender: 'agent', kind: 'turn', content: r.text, error: null },
      context: { messages: request.messages.length, settings: AGENT_LLM_SETTINGS },
      callId: r.callId,
    }
  }
  if (ask.kind === 'feedback') {
    const request = feedbackRequest(ctx.state)
    const r = await ctx.llm.chat(ctx.fill.model, request, { purpose: 'mint.feedback', stream: ctx.watched })
    return {
      message: { seq: ask.j, sender: 'feedback', kind: 'feedback', text: r.text },
      context: { settings: FEEDBACK_LLM_SETTINGS, feedback: ctx.config.feedback },
      callId: r.callId,
    }
  }
  throw new Error(`an LLM was asked for a ${ask.kind}`)
}

/** The cells the episode ran before its latest turn (replayed into a new sandbox when the live one is gone). */
export function earlierCells(state: MintState): string[] {
  return state.turns
    .slice(0, -1)
    .filter((t) => t.action === 'use_tool' && t.code)
    .map((t) => t.code as string)
}

/**
 * What the cell's sandbox gets for `wikipedia_search`: a reasoning task's corpus (its snapshot's pages,
 * written to the server's corpus file), or, without one, the function that says the run has no corpus.
 * Code and decision-making tasks get neither (the paper's tools by task type).
 */
export function searchInput(ctx: Pick<Ctx, 'session' | 'instance'>): { corpus?: string; withoutCorpus?: true } {
  if (TASK_TYPE_OF[ctx.instance.dataset] !== 'reasoning') return {}
  const { pages } = mintEnvData.parse(ctx.session.instance)
  return pages?.length ? { corpus: writeCorpus(pages) } : { withoutCorpus: true }
}

/** The `python-sandbox` program seat: the latest turn's <execute> code in the episode's sandbox. */
export async function toolAgent(ctx: Ctx): Promise<Produced<MintMessage>> {
  const { ask, state } = ctx
  if (ask.kind !== 'execute') throw new Error(`the Python tool was asked for a ${ask.kind}`)
  const code = state.turns.at(-1)?.code
  if (!code) throw new Error('the latest turn has no code to execute')
  const r = await ctx.exec('python', { cells: earlierCells(state), code, ...searchInput(ctx) })
  if (r.exitStatus !== 0) throw unavailable(r.error)
  const cell = r.output as CellResult
  return {
    message: { seq: ask.j, sender: 'tool', kind: 'observation', output: cell.output, done: false },
    context: { program: 'python-sandbox', cell: state.turns.length + 1 },
    meta: {
      cellExit: cell.exitStatus,
      limitsHit: cell.limitsHit,
      exception: cell.exception,
      durationMs: cell.durationMs,
      replayed: cell.replayed,
    },
  }
}

/** The `mint-check` program seat: the success check of the latest proposal (code tasks: their tests in the sandbox). */
export async function checkAgent(ctx: Ctx): Promise<Produced<MintMessage>> {
  const { ask, state } = ctx
  if (ask.kind !== 'verdict') throw new Error(`the success check was asked for a ${ask.kind}`)
  const answer = state.turns.at(-1)?.answer ?? ''
  const check = checkProposal(ctx.instance, answer)
  if (check === null)
    throw new Error('ALFWorld: environment not installed (its games cannot be played here, so no proposal is checked)')
  if (check.kind === 'verdict')
    return {
      message: { seq: ask.j, sender: 'env', kind: 'verdict', correct: check.correct },
      context: { program: 'mint-check', dataset: ctx.instance.dataset },
    }
  const r = await ctx.exec('tests', { program: check.program, timeoutSeconds: check.timeoutSeconds })
  if (r.exitStatus !== 0) throw unavailable(r.error)
  const t = r.output as TestsResult
  return {
    message: { seq: ask.j, sender: 'env', kind: 'verdict', correct: t.passed },
    context: { program: 'mint-check', dataset: ctx.instance.dataset, tests: true },
    meta: { testsOutput: t.output.slice(0, 2000), limitsHit: t.limitsHit, exception: t.exception },
  }
}

/** The feedback seat of a run without feedback: the protocol never asks it. */
export async function noFeedback(ctx: Ctx): Promise<Produced<MintMessage>> {
  throw new Error(`the run has no feedback seat, yet it was asked for a ${ctx.ask.kind}`)
}
