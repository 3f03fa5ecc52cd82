import { db } from '@/lib/server/db'
import { closeIfFinished, runSession, type StepResult } from '@/lib/server/engine/runner'

export interface RunProgress {
  total: number
  done: number
  stalled: number
  awaiting: number
}

/**
 * Run a run's sessions in this process (no job queue) until each is done, stalled or awaiting a
 * person: the CLI's `parley run` and tests. Chained sessions (carry-over) run one after another in
 * their recorded order; chains and unchained sessions run side by side, up to `concurrency`. Safe to
 * re-run: finished sessions are skipped, stalled ones are tried again from where they stopped.
 */
export async function runHeadless(
  runId: string,
  opts: { concurrency?: number; onProgress?: (p: RunProgress) => void } = {},
): Promise<RunProgress> {
  const run = await db.experiment.findUniqueOrThrow({ where: { id: runId } })
  if (run.status === 'preparing')
    throw new Error('The run is still creating its sessions; run it once they are all there.')
  const open = await db.protocolSession.findMany({
    where: { experimentId: runId, status: { notIn: ['done', 'cancelled'] } },
    orderBy: [{ repetition: 'asc' }, { position: 'asc' }],
    select: { id: true, repetition: true, status: true },
  })
  const total = await db.protocolSession.count({ where: { experimentId: runId } })
  const progress: RunProgress = { total, done: total - open.length, stalled: 0, awaiting: 0 }
  if (run.status === 'draft' || run.status === 'paused')
    await db.experiment.update({ where: { id: runId }, data: { status: 'running' } })
  // A stalled session is tried again; a waiting one moves when its predecessor ends.
  await db.protocolSession.updateMany({ where: { experimentId: runId, status: 'stalled' }, data: { status: 'queued' } })
  const chains: string[][] = run.carryOver
    ? [...new Set(open.map((s) => s.repetition))].map((r) => open.filter((s) => s.repetition === r).map((s) => s.id))
    : open.map((s) => [s.id])
  const count = (r: StepResult) => {
    if (r.kind === 'done') progress.done++
    else if (r.kind === 'stalled') progress.stalled++
    else if (r.kind === 'awaiting') progress.awaiting++
    opts.onProgress?.({ ...progress })
  }
  let next = 0
  const worker = async () => {
    while (next < chains.length) {
      const chain = chains[next++] as string[]
      for (const sessionId of chain) {
        const r = await runSession(sessionId)
        count(r)
        // A chain cannot skip a session: the next one's context depends on it.
        if (run.carryOver && r.kind !== 'done') break
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, worker))
  await closeIfFinished(runId)
  return progress
}
