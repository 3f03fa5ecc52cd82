import { afterAll, beforeAll } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { startBulkWorkers } from '@/lib/server/jobs/bulk'
import type { Workers } from '@/lib/server/engine/jobs'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute, type Operation } from '@/lib/server/operation'
import { awaitDatasetImport, dismissDataset, importDataset } from '@/lib/server/services/datasets'

/**
 * Imports (and large session sets) are jobs: a test file that needs them works the queue in its own
 * process, as the web server does, from its first test to its last.
 */
export function useBulkWorkers() {
  let workers: Workers | undefined
  beforeAll(async () => {
    workers = await startBulkWorkers()
  })
  afterAll(async () => {
    await workers?.stop().catch(() => {}) // the file may have stopped the queue itself
    await stopBoss()
  })
}

/**
 * What the import form does: start the import, wait for its job (see useBulkWorkers), and dismiss
 * a failed one once its reason is known. The result is the import's outcome: its counts, or the
 * refusal (400, the rows with problems by line). `op`: another operation that starts an import (a
 * protocol's own, e.g. scorekeeping's), answering with the dataset's id as `datasets.import` does.
 */
export async function importAndWait(
  actor: Actor,
  input: Record<string, unknown>,
  waitMs = 60_000,
  op: Operation<any, { id: string }> = importDataset,
) {
  const started = await execute(op, actor, input)
  if (!started.ok) return started
  const r = await execute(awaitDatasetImport, actor, { datasetId: started.data.id, waitMs })
  if (!r.ok) await execute(dismissDataset, actor, { datasetId: started.data.id })
  return r
}
