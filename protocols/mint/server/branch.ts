import { z } from 'zod'
import {
  actorRef,
  badRequest,
  createRunSessions,
  db,
  defineOperation,
  id,
  notFound,
  type PluginEndpoint,
  requireStudyAccess,
  Seats,
} from '@/lib/server/sdk'
import { MINT_PROTOCOL_ID } from '@/protocols/mint/core/protocol'

/**
 * Branching an episode at a feedback turn (issue 26: "branch from turn t with different feedback", on
 * the engine's fork seam, as ReHAC's trees): a fork of the episode that starts from its messages before
 * the feedback of turn t (the model's turn t and its observation included), whose feedback seat is the
 * person who branched (or, asked so, the run's feedback seat). The fork then runs like any episode: the
 * feedback seat writes the new feedback, the model resumes. Its Python session is the parent's at turn
 * t: a fork's first cell finds no live sandbox under its own id and replays the earlier cells of its
 * copied turns (sandbox.ts). A finished run runs again for the fork and closes again after it.
 */

/** A message as branching reads it: its number and sender. */
interface Sent {
  seq: number
  sender: string
}

/** The feedback messages of a log with the turn each follows (turn t: after the model's t-th turn). */
export function feedbackTurns(messages: readonly Sent[]): { turn: number; seq: number }[] {
  const out: { turn: number; seq: number }[] = []
  let turns = 0
  for (const m of messages) {
    if (m.sender === 'agent') turns++
    else if (m.sender === 'feedback') out.push({ turn: turns, seq: m.seq })
  }
  return out
}

/** The turn a fork starts at: the feedback turn whose message is the fork's first own (forkSeq + 1). */
export function branchTurn(messages: readonly Sent[], forkSeq: number): number {
  return messages.filter((m) => m.seq <= forkSeq && m.sender === 'agent').length
}

export const BranchInput = z.object({
  sessionId: id,
  /** The feedback turn t to branch from (1 = the feedback after the model's first turn). */
  turn: z.coerce.number().int().min(1).max(100),
  /** Who writes the new feedback: the person branching (default), or the run's feedback seat. */
  feedbackBy: z.enum(['me', 'run']).default('me'),
})

/**
 * `mint.branch`: staff who may change the study (the scope studies:update and the study permission
 * write, as creating a run); a session they cannot see is not found.
 */
export const branchEpisode = defineOperation({
  name: 'mint.branch',
  scope: 'studies:update',
  input: BranchInput,
  async run(actor, { sessionId, turn, feedbackBy }) {
    const parent = await db.protocolSession.findUnique({
      where: { id: sessionId },
      select: { id: true, studyId: true, runId: true, protocol: true, key: true, seats: true },
    })
    if (!parent || parent.protocol !== MINT_PROTOCOL_ID) throw notFound('Session')
    await requireStudyAccess(db, actor, parent.studyId, 'write')
    if (!parent.runId) throw badRequest('Only an episode of a run can be branched.')
    const messages = await db.protocolMessage.findMany({
      where: { sessionId },
      orderBy: { seq: 'asc' },
      select: { seq: true, sender: true },
    })
    const at = feedbackTurns(messages).find((f) => f.turn === turn)
    if (!at)
      throw badRequest(`Turn ${turn} of this episode has no feedback to branch from.`, {
        turn: ['Choose a turn that has feedback.'],
      })
    const forkSeq = at.seq - 1
    const seats = Seats.parse(parent.seats)
    if (feedbackBy === 'me') seats.feedback = { kind: 'human', userId: actor.userId, claimable: false }
    const siblings = await db.protocolSession.count({ where: { parentId: parent.id, forkSeq } })
    const named = `${parent.key}>t${turn}.${siblings + 1}`
    const key = named.length <= 200 ? named : `branch:${parent.id}:t${turn}.${siblings + 1}`
    const [forkId] = await createRunSessions(parent.runId, [{ key, parentId: parent.id, forkSeq, seats }], {
      reopen: true,
      audit: (ids) => ({
        actor: actorRef(actor),
        action: 'mint.branch',
        resourceType: 'session',
        resourceId: ids[0] as string,
        studyId: parent.studyId,
        after: { parentId: parent.id, turn, forkSeq, feedbackBy },
      }),
    })
    return { sessionId: forkId as string, parentId: parent.id, turn, forkSeq, key }
  },
})

const BranchCreated = z.object({
  sessionId: z.string(),
  parentId: z.string(),
  turn: z.number().int(),
  forkSeq: z.number().int(),
  key: z.string(),
})

/** POST /api/v1/mint/branches: the operation over REST (JSON body: sessionId, turn, feedbackBy). */
export const branchEndpoint: PluginEndpoint = {
  method: 'POST',
  path: '/mint/branches',
  summary:
    "Branch a MINT episode at feedback turn `turn`: a fork that starts from the episode's messages before that feedback (its Python state replayed to turn t), whose feedback seat is you (`feedbackBy: me`, default) or the run's (`run`); the model resumes after the new feedback. A finished run runs again for it",
  op: branchEpisode,
  source: 'body',
  status: 201,
  output: BranchCreated,
  errors: { 404: 'No such session, or not visible to you', 409: 'A branch with this key was just made: try again' },
}
