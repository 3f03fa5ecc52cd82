/**
 * A Parley MINT run exported in the authors' layout (issue 26): a zip holding, per data set, the
 * authors' `<model>/F=<feedback|None>/[PHF=…/]max<k>_p<p>+tool+cd/<type>/<dataset>/results.jsonl`
 * with one record per finished episode (`state.history`, `success`, `agent_action_count`,
 * `terminate_reason`, `token_counter`, as core/export.ts writes them), so the authors' scripts and
 * `parley mint sr` read a Parley run like a released one. Episodes not finished, or whose log the
 * rules refuse, are left out (the zip's NOTES.txt counts them).
 */
import { strToU8, zipSync } from 'fflate'
import { replayAccepted } from '@/lib/protocols/types'
import { db, type ExportFile, notFound, sql } from '@/lib/server/sdk'
import { feedbackFolder, resultRecord, resultsJsonl, runFolder, taskNameOf } from '../core/export'
import {
  MINT_PROTOCOL_ID,
  type MintMessage,
  type MintState,
  mintConfig,
  mintInstance,
  mintMessage,
  mintProtocol,
  TASK_TYPE_OF,
} from '../core/protocol'
import type { MintRecord } from '../core/results'
import { seatName } from './leaderboard'

/** A name as one folder of the authors' layout (an organisation's "org/model" keeps its model part joined by "_"). */
export function folderSafe(name: string): string {
  const s = name.replace(/[\\/]/g, '_').trim()
  return s === '' || s === '.' || s === '..' || s.startsWith('F=') || s === 'None' ? `model_${s}` : s
}

/** The tokens of a session's LLM calls, as the authors' token_counter (the feedback seat's prefixed "feedback_"). */
async function tokenCounters(sessionIds: string[]): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>()
  if (sessionIds.length === 0) return out
  const { rows } = await sql().query<{ sessionId: string; sender: string; tin: string; tout: string }>(
    `SELECT m."sessionId", m.sender, sum(c."tokensIn") AS tin, sum(c."tokensOut") AS tout
       FROM "ProtocolMessage" m JOIN "LlmCall" c ON c.id = m."llmCallId"
      WHERE m."sessionId" = ANY($1) AND m.sender IN ('agent', 'feedback')
      GROUP BY 1, 2`,
    [sessionIds],
  )
  for (const r of rows) {
    const t = out.get(r.sessionId) ?? {}
    const pre = r.sender === 'feedback' ? 'feedback_' : ''
    t[`${pre}prompt_tokens`] = Number(r.tin)
    t[`${pre}completion_tokens`] = Number(r.tout)
    t[`${pre}total_tokens`] = Number(r.tin) + Number(r.tout)
    out.set(r.sessionId, t)
  }
  return out
}

/** The run's results files: relative path → records (finished episodes only), and what was left out. */
export async function runResults(runId: string): Promise<{ files: Map<string, MintRecord[]>; leftOut: string[] }> {
  const run = await db.run.findUnique({ where: { id: runId }, select: { protocol: true, config: true, seats: true } })
  if (!run || run.protocol !== MINT_PROTOCOL_ID) throw notFound('No such MINT run.')
  // The authors' tree holds the run's own episodes, not its branches (mint.branch).
  const sessions = await db.protocolSession.findMany({
    where: { runId, parentId: null },
    orderBy: [{ repetition: 'asc' }, { position: 'asc' }, { createdAt: 'asc' }],
    select: {
      id: true,
      key: true,
      status: true,
      config: true,
      instance: true,
      messages: { orderBy: { seq: 'asc' }, select: { body: true } },
    },
  })
  const tokens = await tokenCounters(sessions.map((s) => s.id))
  const model = folderSafe(seatName(run.seats, 'agent') ?? 'unknown')
  const feedbackModel = seatName(run.seats, 'feedback')
  const files = new Map<string, MintRecord[]>()
  const leftOut: string[] = []
  for (const s of sessions) {
    const raw = (s.config ?? {}) as Record<string, unknown>
    const config = mintConfig.safeParse({ k: raw.k, p: raw.p, feedback: raw.feedback, countDown: raw.countDown })
    const instance = mintInstance.safeParse(s.instance)
    const messages = s.messages.map((m) => mintMessage.safeParse(m.body))
    if (!config.success || !instance.success || messages.some((m) => !m.success)) {
      leftOut.push(`${s.key}: not a MINT session log`)
      continue
    }
    const { state, refused } = replayAccepted(
      mintProtocol,
      config.data,
      instance.data,
      messages.map((m) => m.data as MintMessage),
    )
    if (refused) {
      leftOut.push(`${s.key}: message ${refused.seq} refused (${refused.message})`)
      continue
    }
    if (!(state as MintState).finished) {
      leftOut.push(`${s.key}: not finished (${s.status})`)
      continue
    }
    const st = state as MintState
    const inst = instance.data
    const fb = feedbackFolder(st, feedbackModel === null ? null : folderSafe(feedbackModel))
    const path = runFolder({
      model,
      ...fb,
      k: st.config.k,
      p: st.config.p,
      taskType: TASK_TYPE_OF[inst.dataset],
      dataset: inst.dataset,
    })
    const record = resultRecord(st, {
      task: {
        task_name: taskNameOf(inst.dataset, inst.alfworldType),
        task_id: inst.dataset !== 'alfworld' && /^\d{1,15}$/.test(inst.id) ? Number(inst.id) : inst.id,
        prompt: inst.prompt,
        reference: inst.reference,
        metadata: inst.alfworldType ? { task_type: inst.alfworldType } : {},
      },
      tokenCounter: tokens.get(s.id) ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    })
    files.set(path, [...(files.get(path) ?? []), record])
  }
  return { files, leftOut }
}

/** The zip of the run's results files in the authors' layout. */
export async function resultsZip(runId: string): Promise<Uint8Array> {
  const { files, leftOut } = await runResults(runId)
  const entries: Record<string, Uint8Array> = {}
  for (const [path, records] of [...files].sort(([a], [b]) => a.localeCompare(b)))
    entries[path] = strToU8(resultsJsonl(records))
  const notes = [
    `MINT results of Parley run ${runId} in the authors' layout (github.com/xingyaoww/mint-bench data/outputs).`,
    `${[...files.values()].reduce((n, r) => n + r.length, 0)} finished episodes in ${files.size} results files.`,
    leftOut.length ? `Left out (${leftOut.length}):\n${leftOut.join('\n')}` : 'Nothing left out.',
  ]
  entries['NOTES.txt'] = strToU8(`${notes.join('\n')}\n`)
  return zipSync(entries)
}

/** The plugin's `exports.files`. */
export const mintExportFiles: Record<string, ExportFile> = {
  'results-jsonl': {
    label: "results.jsonl in the authors' layout (zip)",
    description:
      "One results.jsonl per data set under the authors' folder naming (<model>/F=<feedback|None>/[PHF=…/]max<k>_p<p>+tool+cd/<type>/<dataset>/), one record per finished episode: state.history, success, agent_action_count, terminate_reason, token_counter. Readable by `parley mint sr` and the authors' scripts.",
    filename: 'mint-results.zip',
    contentType: 'application/zip',
    build: resultsZip,
  },
}
