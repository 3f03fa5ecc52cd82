import { z } from 'zod'
import { ProtocolError } from '@/lib/protocols/types'
import { badRequest, definePlugin, type HumanContext, type Produced } from '@/lib/server/sdk'
import {
  binaryFeedback,
  extractTagged,
  isProposal,
  MAX_REPLY,
  type MintMessage,
  mintProtocol,
} from '@/protocols/mint/core/protocol'
import { checkAgent, llmAgent, mintPrograms, noFeedback, toolAgent } from '@/protocols/mint/server/agents'
import { mintDemo } from '@/protocols/mint/server/demo'
import { release } from '@/protocols/mint/server/sandbox'

/**
 * MINT (issue 26, seed 003 part A) on the engine: the evaluated model (an LLM with the paper's settings,
 * or a person answering as the model) writes each turn; the Python tool (a program: a cell of the
 * episode's sandboxed persistent session, through `ctx.exec`) runs its <execute> code; the success check
 * (a program: core/checks.ts, and for HumanEval / MBPP the tests in the sandbox through `ctx.exec`)
 * judges a <solution>; the feedback seat (an LLM simulating the expert, a person, or the program
 * `no-feedback`) comments after a turn when the run says so. The episode's sandbox is released when the
 * session ends. Set-up, views and the dataset kind are modules loaded on first use.
 */

// ───────────────────────────── a person's turn ─────────────────────────────

/**
 * A person's turn. As the evaluated model: `text`, the reply exactly as a model would write it
 * (<thought>, then <execute> or <solution>). As the expert: `text`, the feedback (binary mode: GOOD or
 * BAD, or a text whose first sentence holds one of them). `elapsedMs`: the time from the page being
 * shown to the submission (the paper reports 96 s per feedback).
 */
export const MintTurnInput = z.object({
  text: z
    .string({ error: 'Write the turn.' })
    .max(MAX_REPLY, `A turn is at most ${MAX_REPLY} characters.`)
    .refine((t) => t.trim() !== '', 'Write the turn: it is empty.'),
  elapsedMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 86_400_000)
    .optional(),
})
export type MintTurnInput = z.output<typeof MintTurnInput>

/** The turn form's fields: `text`, `elapsedMs`. */
export function mintTurnFromForm(f: Record<string, unknown>): unknown {
  return {
    text: typeof f.text === 'string' ? f.text : undefined,
    ...(typeof f.elapsedMs === 'string' && f.elapsedMs !== '' ? { elapsedMs: f.elapsedMs } : {}),
  }
}

function turnMessage(ctx: HumanContext<typeof mintProtocol>, input: MintTurnInput): Produced<MintMessage> {
  const { ask } = ctx
  let message: MintMessage
  if (ask.kind === 'turn') {
    message = { seq: ask.j, sender: 'agent', kind: 'turn', content: input.text, error: null }
  } else if (ask.kind === 'feedback') {
    let text = input.text.trim()
    if (ctx.config.feedback.mode === 'binary') {
      const key = text.toLowerCase()
      text = key === 'good' || key === 'g' ? 'This is GOOD.' : key === 'bad' || key === 'b' ? 'This is BAD.' : text
      if (binaryFeedback(text) === '')
        throw badRequest('Binary feedback is GOOD or BAD.', { text: ['Choose GOOD or BAD.'] })
    }
    message = { seq: ask.j, sender: 'feedback', kind: 'feedback', text }
  } else throw badRequest('It is not a person’s turn.')
  try {
    mintProtocol.apply(ctx.state, message)
  } catch (err) {
    if (err instanceof ProtocolError) throw badRequest(err.message)
    throw err
  }
  return {
    message,
    meta: {
      ...(input.elapsedMs !== undefined ? { elapsedMs: input.elapsedMs } : {}),
      audit: { kind: ask.kind, j: ask.j },
    },
  }
}

// ───────────────────────────── the plugin ─────────────────────────────

/** What a turn was, as the message's label (the authors' action kinds). */
export function actionOf(reply: string): 'propose_solution' | 'use_tool' | 'invalid_action' {
  if (isProposal(reply)) return 'propose_solution'
  return extractTagged(reply, 'execute') ? 'use_tool' : 'invalid_action'
}

export const mintPlugin = definePlugin(mintProtocol, {
  agents: {
    llm: llmAgent,
    program: { 'python-sandbox': toolAgent, 'mint-check': checkAgent, 'no-feedback': noFeedback },
  },
  programs: mintPrograms,
  // A cell's own limit is 30 s (the sandbox's); a step also replays the earlier cells into a new sandbox.
  timeouts: { program: { 'python-sandbox': 600, 'mint-check': 120 } },
  onSessionEnd(ctx) {
    release(ctx.sessionId)
  },
  human: { input: MintTurnInput, toMessage: turnMessage, fromForm: mintTurnFromForm },
  project: (m: MintMessage) => {
    switch (m.sender) {
      case 'agent': {
        const action = m.error !== null ? 'error' : actionOf(m.content)
        return {
          receiver: action === 'propose_solution' ? 'env' : action === 'use_tool' ? 'tool' : 'agent',
          label: action,
          value: action === 'propose_solution' ? extractTagged(m.content, 'solution').slice(0, 500) : null,
          detail: m.content.slice(0, 4000),
        }
      }
      case 'tool':
        return { receiver: 'agent', label: 'observation', detail: m.output.slice(0, 4000) }
      case 'env':
        return { receiver: 'agent', label: 'verdict', value: m.correct ? 'correct' : 'wrong' }
      case 'feedback':
        return { receiver: 'agent', label: 'feedback', detail: m.text.slice(0, 4000) }
    }
  },
  projectionNames: { label: 'kind', value: 'answer', detail: 'text' },
  setup: () =>
    import('@/protocols/mint/server/setup').then((m) => ({
      plan: m.planMint,
      options: m.MintSetupOptions,
      fromForm: m.mintSetupFromForm,
      snapshot: m.mintSnapshot,
      formData: m.mintFormData,
    })),
  views: () =>
    Promise.all([
      import('@/protocols/mint/server/views'),
      import('@/protocols/mint/server/run-view'),
      import('@/protocols/mint/server/leaderboard'),
    ]).then(([m, e, lb]) => ({
      session: m.mintSessionView,
      run: e.mintRunView,
      studyPage: lb.mintStudyPage,
      studyPanel: lb.mintStudyPanel,
    })),
  exports: () =>
    Promise.all([import('@/protocols/mint/server/run-view'), import('@/protocols/mint/server/exports')]).then(
      ([v, e]) => ({ tables: v.mintEpisodeTables, files: e.mintExportFiles }),
    ),
  seed: () => import('@/protocols/mint/server/seed').then((m) => ({ seedDemo: m.seedMintDemo })),
  ops: () =>
    Promise.all([
      import('@/protocols/mint/server/datasets'),
      import('@/protocols/mint/server/released-import'),
      import('@/protocols/mint/server/branch'),
    ]).then(([m, ri, b]) => ({
      datasets: m.mintDatasets,
      operations: [ri.importResults, b.branchEpisode],
      rest: [ri.importResultsEndpoint, b.branchEndpoint],
    })),
  demo: mintDemo,
  title: (instance) => `${instance.dataset} ${instance.id}: ${instance.prompt.slice(0, 60)}`,
})
