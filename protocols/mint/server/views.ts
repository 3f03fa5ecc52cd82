import { db, hasScope, studyAccess, type ViewContext } from '@/lib/server/sdk'
import { branchTurn, feedbackTurns } from '@/protocols/mint/server/branch'
import { taskPrompt } from '@/protocols/mint/core/prompts'
import {
  type ActionKind,
  type MintFeedback,
  type mintProtocol,
  observationText,
  type TerminateReason,
  TASK_TYPE_OF,
} from '@/protocols/mint/core/protocol'
import { INSTALL_HINT, sandboxStatus } from '@/protocols/mint/server/sandbox'

/** One turn of the episode as the pages draw it (thought, code, output, proposal, verdict, feedback). */
export interface MintTurnView {
  t: number
  reply: string
  action: ActionKind | 'error'
  code: string | null
  answer: string | null
  correct: boolean | null
  /** The observation as the model reads it, countdown included ('' until the turn is observed). */
  observation: string
  stepsLeft: number | null
  proposalsLeft: number | null
  feedback: string | null
}

export interface MintSessionView {
  dataset: string
  taskType: string
  /** The task as the model reads it. */
  task: string
  k: number
  p: number
  feedback: MintFeedback
  turns: MintTurnView[]
  /** Whose turn: turn (the model), execute, verdict, feedback; null when finished. */
  pending: string | null
  finished: boolean
  success: boolean
  reason: TerminateReason | null
  counts: Record<ActionKind, number>
  /**
   * The reference: researchers see it; the feedback seat's person only when the run gives it (behind a
   * do-not-disclose banner); the evaluated model's seat never.
   */
  groundTruth: string | null
  /** The Python tool here (the run page and the expert's page say when it cannot run). */
  sandbox: { available: boolean; reason?: string; installHint?: string }
  /** A branch (mint.branch): the episode it was forked from and the feedback turn it branched at. */
  branchOf: { sessionId: string; turn: number } | null
  /** The branches made from this episode, by turn. */
  branches: { sessionId: string; turn: number; status: string }[]
  /** The feedback turns the viewer may branch from (staff who may change the study; empty otherwise). */
  branchable: number[]
}

export async function mintSessionView(ctx: ViewContext<typeof mintProtocol>): Promise<MintSessionView> {
  const { state, config, instance, mySeats } = ctx
  const researcher = mySeats.length === 0
  const expertWithTruth = mySeats.includes('feedback') && config.feedback.groundTruth && !mySeats.includes('agent')
  const status = await sandboxStatus()
  const { session } = ctx
  const sent = session.messages.map((m) => ({ seq: m.seq, sender: m.sender }))
  const children = await db.protocolSession.findMany({
    where: { parentId: session.id },
    orderBy: { createdAt: 'asc' },
    select: { id: true, forkSeq: true, status: true },
  })
  const viewer = ctx.viewer
  const mayBranch =
    !!viewer &&
    !!session.runId &&
    hasScope(viewer.role, 'studies:update') &&
    (await studyAccess(viewer, session.studyId)).includes('write')
  return {
    branchOf:
      session.parentId && session.forkSeq !== null
        ? { sessionId: session.parentId, turn: branchTurn(sent, session.forkSeq) }
        : null,
    branches: children.map((c) => ({ sessionId: c.id, turn: branchTurn(sent, c.forkSeq ?? 0), status: c.status })),
    branchable: mayBranch ? feedbackTurns(sent).map((f) => f.turn) : [],
    dataset: instance.dataset,
    taskType: TASK_TYPE_OF[instance.dataset],
    task: taskPrompt(instance),
    k: config.k,
    p: config.p,
    feedback: config.feedback,
    turns: state.turns.map((t, i) => ({
      t: i + 1,
      reply: t.reply,
      action: t.action,
      code: t.code,
      answer: t.answer,
      correct: t.correct,
      observation: t.observation !== null || t.correct === false || t.turnInfo ? observationText(t) : '',
      stepsLeft: t.turnInfo?.[0] ?? null,
      proposalsLeft: t.turnInfo?.[1] ?? null,
      feedback: t.feedback,
    })),
    pending: state.pending,
    finished: state.finished,
    success: state.success,
    reason: state.reason,
    counts: state.counts,
    groundTruth: researcher || expertWithTruth ? instance.reference : null,
    sandbox: status.available
      ? { available: true }
      : { available: false, reason: status.reason, installHint: INSTALL_HINT },
  }
}
