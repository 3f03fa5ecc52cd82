import { afterAll, expect, it } from 'vitest'
import { queue, stopBoss } from '@/lib/server/jobs/queue'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { emptyJobQueue } from '../support/file-setup'

afterAll(() => stopBoss())

// The per-file setup (vitest.config.ts setupFiles) hands each test file an empty job queue: steps a
// previous file left queued were worked by the next file's workers, ahead of that file's own.
it('steps left queued by an earlier test file are gone before the next file starts', async () => {
  const b = await queue(STEP_QUEUE)
  await b.send(STEP_QUEUE, { sessionId: 'left-behind-by-another-file' })
  const waiting = () => b.getQueueSize(STEP_QUEUE)
  expect(await waiting()).toBeGreaterThan(0)
  await emptyJobQueue()
  expect(await waiting()).toBe(0)
})
