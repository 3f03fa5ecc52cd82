import { z } from 'zod'
import { definePlugin } from '@/lib/server/engine/plugin'
import type { ScheduleContext, ScheduledSession, SessionSpec } from '@/lib/server/engine/plugin'
import type { Seats } from '@/lib/server/engine/seats'
import { pathOf, type TreeMessage, tree } from './protocol'

/** The walker's seat: go left, except at step `at` (a fork's first own step), where it goes `dir`. */
const walker = (turn?: { at: number; dir: 'L' | 'R' }): Seats => ({
  walker: { kind: 'program', program: 'walk', helpers: {}, params: turn ?? {} },
})

/** Counts every call of the scheduler (the tests check it runs once per session end, never twice at once). */
export const schedulerCalls = { total: 0, inside: 0, overlapped: 0, delayMs: 0 }

/**
 * The coverage scheduler: when a walk ends at a leaf, fork it at each of its own turns that went left
 * where the right branch has no session yet (the fork starts from the parent's first i steps and goes
 * right at step i + 1). A session's key is the branch it was started for ("1:0" for the plan's root
 * walk). Done when every one of the 2^depth leaves is reached.
 */
async function onSessionDone(ctx: ScheduleContext & { session: ScheduledSession }) {
  schedulerCalls.total++
  schedulerCalls.inside++
  if (schedulerCalls.inside > 1) schedulerCalls.overlapped++
  try {
    if (schedulerCalls.delayMs) await new Promise((r) => setTimeout(r, schedulerCalls.delayMs))
    const path = pathOf(await ctx.messages(ctx.session.id))
    const sessions = await ctx.sessions()
    const keys = new Set(sessions.map((s) => s.key))
    const create: SessionSpec[] = []
    for (let i = ctx.session.forkSeq ?? 0; i < path.length; i++) {
      if (path[i] !== 'L') continue
      const branch = `${path.slice(0, i)}R`
      if (keys.has(branch)) continue
      create.push({
        key: branch,
        parentId: ctx.session.id,
        forkSeq: i,
        seats: walker({ at: i + 1, dir: 'R' }),
      })
    }
    const depth = path.length
    const leaves = new Set<string>()
    for (const s of sessions)
      if (s.status === 'done') leaves.add(s.id === ctx.session.id ? path : pathOf(await ctx.messages(s.id)))
    const total = 2 ** depth
    return { create, done: leaves.size >= total, progress: { done: leaves.size, total } }
  } finally {
    schedulerCalls.inside--
  }
}

export const treePlugin = definePlugin(tree, {
  schedule: { onSessionDone },
  agents: {
    program: {
      async walk(ctx) {
        const turn = ctx.fill.kind === 'program' ? (ctx.fill.params as { at?: number; dir?: 'L' | 'R' }) : {}
        const dir = turn.at === ctx.ask.j && turn.dir ? turn.dir : 'L'
        return {
          message: { seq: ctx.ask.j, sender: 'walker', kind: 'step', dir } satisfies TreeMessage,
          context: { at: ctx.state.messages.length },
        }
      },
    },
  },
  human: { input: z.object({}), toMessage: () => Promise.reject(new Error('no person walks')) },
  project: (m: TreeMessage) => ({ receiver: 'walker', tag: m.dir }),
  setup: {
    // The one run-create shape; the walker seat takes only the `walk` program, so the engine fills it.
    async plan(_actor, _studyId, input, tools) {
      const ds = await tools.dataset(input.datasetId ?? '')
      return { name: input.name, task: 'tree', datasetId: ds.id, config: {}, seats: walker(), repetitions: 1 }
    },
    snapshot: (row) => row.input,
  },
  views: { session: (ctx) => ({ path: pathOf(ctx.state.messages) }) },
})
