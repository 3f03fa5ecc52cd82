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
 * person: the CLI's `parley run` and tests. It works in rounds: every queued session of the run, up
 * to `concurrency` at once in their recorded order, then again for the sessions the run's scheduler
 * queued meanwhile (a waiting session it started when the one before ended, a fork it created),
 * until none is queued. Safe to re-run: finished sessions are skipped, stalled ones are tried again
 * from where they stopped.
 */
export async function runHeadless(
  runId: string,
  opts: { concurrency?: number; onProgress?: (p: RunProgress) => void } = {},
): Promise<RunProgress> {
  const run = await db.run.findUniqueOrThrow({ where: { id: runId } })
  if (run.status === 'preparing')
    throw new Error('The run is still creating its sessions; run it once they are all there.')
  const closed = () => db.protocolSession.count({ where: { runId: runId, status: { in: ['done', 'cancelled'] } } })
  const total = () => db.protocolSession.count({ where: { runId: runId } })
  const progress: RunProgress = { total: await total(), done: await closed(), stalled: 0, awaiting: 0 }
  if (run.status === 'draft' || run.status === 'paused')
    await db.run.update({ where: { id: runId }, data: { status: 'running' } })
  // A stalled session is tried again; a waiting one moves when its scheduler starts it.
  await db.protocolSession.updateMany({ where: { runId: runId, status: 'stalled' }, data: { status: 'queued' } })
  const count = (r: StepResult) => {
    if (r.kind === 'done') progress.done++
    else if (r.kind === 'stalled') progress.stalled++
    else if (r.kind === 'awaiting') progress.awaiting++
    opts.onProgress?.({ ...progress })
  }
  const tried = new Set<string>()
  for (;;) {
    const round = (
      await db.protocolSession.findMany({
        where: { runId: runId, status: 'queued' },
        orderBy: [{ repetition: 'asc' }, { position: 'asc' }, { createdAt: 'asc' }],
        select: { id: true },
      })
    )
      .map((s) => s.id)
      .filter((id) => !tried.has(id))
    if (!round.length) break
    for (const id of round) tried.add(id)
    let next = 0
    const worker = async () => {
      while (next < round.length) {
        const sessionId = round[next++] as string
        count(await runSession(sessionId))
      }
    }
    await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, worker))
    progress.total = await total()
  }
  await closeIfFinished(runId)
  return progress
}
