import { replay } from '@/lib/protocols/types'
import { db, type ExportTable, replayCache, type StoredSession } from '@/lib/server/sdk'
import { instructionPrompt } from '@/protocols/mint/core/prompts'
import {
  chatHistory,
  type MintMessage,
  type MintState,
  mintConfig,
  mintInstance,
  mintProtocol,
  TASK_TYPE_OF,
} from '@/protocols/mint/core/protocol'

/**
 * A run's episodes and the run page's numbers. An episode as the authors' results.jsonl record (`state.history`, `finished`, `success`,
 * `agent_action_count`, `terminate_reason`, `error`; `task` with its name, id, prompt and reference).
 * The token counts of the released records are not derived here (the call log holds them per call).
 */
export interface MintResultRecord {
  session: string
  state: {
    history: Array<{ role: string; content: string }>
    finished: boolean
    success: boolean
    agent_action_count: MintState['counts']
    terminate_reason: MintState['reason']
    error: string | null
  }
  task: { task_name: string; task_id: string; dataset: string; prompt: string; reference: string }
}

function recordOf(s: StoredSession): MintResultRecord {
  const config = mintConfig.parse(s.config ?? {})
  const instance = mintInstance.parse(s.instance)
  const state = replay(
    mintProtocol,
    config,
    instance,
    s.messages.map((m) => m.body as MintMessage),
  ) as MintState
  const type = TASK_TYPE_OF[instance.dataset]
  return {
    session: s.id,
    state: {
      history: chatHistory(state, instructionPrompt(config, instance)),
      finished: state.finished,
      success: state.success,
      agent_action_count: state.counts,
      terminate_reason: state.reason,
      error: state.error,
    },
    task: {
      task_name: type === 'reasoning' ? 'reasoning' : instance.dataset,
      task_id: instance.id,
      dataset: instance.dataset,
      prompt: instance.prompt,
      reference: instance.reference,
    },
  }
}

const records = replayCache(recordOf)

/** One row per episode (the zip in the authors' folder layout, with token counters, is exports.ts's). */
export const mintEpisodeTables: Record<string, ExportTable> = {
  episodes: {
    label: 'Episodes (one row per episode)',
    description:
      'One record per episode: task, success, terminate reason, action counts, error and the history (JSON Lines: the authors’ record fields; CSV: the history as JSON text). The authors’ results.jsonl tree is the “results.jsonl” file export.',
    async *rows(runId, format) {
      const sessions = await db.protocolSession.findMany({
        where: { runId },
        orderBy: [{ repetition: 'asc' }, { position: 'asc' }, { id: 'asc' }],
        select: { id: true, updatedAt: true },
      })
      for (let i = 0; i < sessions.length; i += 200)
        for (const r of await records.of(sessions.slice(i, i + 200))) {
          if (format === 'jsonl') yield r as unknown as Record<string, unknown>
          else
            yield {
              session: r.session,
              dataset: r.task.dataset,
              task_id: r.task.task_id,
              finished: r.state.finished,
              success: r.state.success,
              terminate_reason: r.state.terminate_reason,
              propose_solution: r.state.agent_action_count.propose_solution,
              use_tool: r.state.agent_action_count.use_tool,
              invalid_action: r.state.agent_action_count.invalid_action,
              error: r.state.error,
              history: JSON.stringify(r.state.history),
            }
        }
    },
  },
}

/** The run page's numbers: SR_k of this run's own budget, per task type and data set, and the actions. */
export interface MintRunView {
  k: number
  p: number
  feedback: string
  total: number
  finished: number
  /** SR in percent (2 decimals), over the ended episodes. */
  sr: number | null
  byType: Record<string, number | null>
  byTask: Record<string, number | null>
  reasons: Record<string, number>
  invalidRatio: number | null
  invalidFlagged: boolean
  /** Whether the Python tool can run here (the run page says so when not). */
  sandbox: { available: boolean; reason?: string; installHint?: string }
}

export async function mintRunView(runId: string): Promise<MintRunView> {
  const [{ successRates, invalidActionRatio, round2 }, { sandboxStatus, INSTALL_HINT }] = await Promise.all([
    import('@/protocols/mint/core/metrics'),
    import('@/protocols/mint/server/sandbox'),
  ])
  const run = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { config: true } })
  const config = mintConfig.parse(run.config ?? {})
  // The run's own episodes: its branches (mint.branch, other feedback from a turn on) are not.
  const sessions = await db.protocolSession.findMany({
    where: { runId, parentId: null },
    select: { id: true, updatedAt: true },
  })
  const all: MintResultRecord[] = []
  for (let i = 0; i < sessions.length; i += 200) all.push(...(await records.of(sessions.slice(i, i + 200))))
  const ended = all.filter((r) => r.state.finished)
  const outcomes = ended.map((r) => ({
    dataset: r.task.dataset as Parameters<typeof successRates>[0][number]['dataset'],
    success: r.state.success,
    counts: r.state.agent_action_count,
  }))
  const sr = successRates(outcomes)
  const inv = invalidActionRatio(outcomes)
  const reasons: Record<string, number> = {}
  for (const r of ended)
    reasons[r.state.terminate_reason ?? 'error'] = (reasons[r.state.terminate_reason ?? 'error'] ?? 0) + 1
  const status = await sandboxStatus()
  const f = config.feedback
  return {
    k: config.k,
    p: config.p,
    feedback:
      f.mode === 'none' ? 'none' : `${f.mode}, ${f.frequency}, ${f.groundTruth ? 'with' : 'without'} ground truth`,
    total: all.length,
    finished: ended.length,
    sr: round2(sr.sr),
    byType: Object.fromEntries(Object.entries(sr.byType).map(([k, v]) => [k, round2(v?.sr ?? null)])),
    byTask: Object.fromEntries(Object.entries(sr.byTask).map(([k, v]) => [k, round2(v?.sr ?? null)])),
    reasons,
    invalidRatio: inv.ratio === null ? null : round2(100 * inv.ratio),
    invalidFlagged: inv.flagged,
    sandbox: status.available
      ? { available: true }
      : { available: false, reason: status.reason, installHint: INSTALL_HINT },
  }
}
