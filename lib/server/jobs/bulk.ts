import type PgBoss from 'pg-boss'
import { addLocalWorker, queue, removeLocalWorker } from '@/lib/server/jobs/queue'
import { DATASET_IMPORT_QUEUE, type DatasetImportJob, runDatasetImport } from '@/lib/server/services/dataset-import'
import { drained, type Workers } from '@/lib/server/engine/jobs'
import { jobFinished, jobStarted, worksQueue } from '@/lib/server/processes'
import { type PrepareSessionsJob, prepareSessions, SESSIONS_QUEUE } from '@/lib/server/engine/prepare'
import { log } from '@/lib/server/log'
import { pluginJobHandlers } from '@/lib/server/engine/plugin-jobs'

/**
 * Bulk work a researcher's input can make large, kept off the request path: dataset imports and
 * creating an experiment's sessions, and the protocols' own jobs. Each process works one job of each queue at a time (they are
 * long and database-heavy; the handlers yield the event loop between batches, so the server stays
 * responsive). Run beside the protocol workers, in the web server and in `parley worker`.
 */
export async function startBulkWorkers(): Promise<Workers> {
  const handlers: Array<[string, (data: never) => Promise<void>]> = [
    [DATASET_IMPORT_QUEUE, (data: DatasetImportJob) => runDatasetImport(data)],
    [
      SESSIONS_QUEUE,
      async (data: PrepareSessionsJob) => {
        // A job queued by a version before the engine has no runId and a plan this one cannot read.
        if (typeof data?.runId !== 'string') log().error('dropped a session-creation job of an older version')
        else await prepareSessions(data)
      },
    ],
    // The protocols' own job kinds (their plugins' `ops.jobs`).
    ...((await pluginJobHandlers()) as Array<[string, (data: never) => Promise<void>]>),
  ]
  const started: Array<{ b: PgBoss; name: string; id: string }> = []
  const running = new Set<string>()
  for (const [name, handle] of handlers) {
    const b = await queue(name)
    worksQueue(name)
    const id = await b.work<never>(name, { pollingIntervalSeconds: 1, batchSize: 1 }, async (jobs) => {
      for (const job of jobs) {
        running.add(job.id)
        jobStarted(name, job.id)
        try {
          await handle(job.data)
        } finally {
          running.delete(job.id)
          jobFinished(job.id)
        }
      }
    })
    addLocalWorker(name, id)
    started.push({ b, name, id })
  }
  return {
    async stop() {
      for (const { b, name, id } of started) {
        removeLocalWorker(name, id)
        await b.offWork({ id })
      }
      // An import or a session batch runs on (both resume safely if the deadline hands it back).
      await drained(running)
    },
  }
}
