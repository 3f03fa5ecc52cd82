import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { enqueuePluginJob, pluginJobQueue } from '@/lib/server/engine/plugin-jobs'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { startBulkWorkers } from '@/lib/server/jobs/bulk'
import { stopBoss } from '@/lib/server/jobs/queue'

/**
 * The engine's contract for a protocol's own background jobs (`ops.jobs`): a plugin declares a kind
 * with its data schema; the engine checks the data when it is enqueued, works the kind's queue with the
 * bulk workers, hands the handler the parsed data, and runs a delayed job only after its delay. No protocol is named: a probe plugin declares the kind.
 */
const seen: Array<{ n: number; at: number }> = []
const probe = {
  protocol: { id: 'jobprobe' },
  ops: async () => ({
    jobs: {
      count: {
        data: z.object({ n: z.number().int().min(0) }),
        async run({ n }: { n: number }) {
          seen.push({ n, at: Date.now() })
        },
      },
    },
  }),
} as unknown as ProtocolPlugin
registerPlugin(probe)

afterAll(async () => {
  await stopBoss()
})

const until = async (ok: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('plugin job kinds on the job queue', () => {
  it('checks data at enqueue, runs the handler with it, honours a delay', async () => {
    expect(pluginJobQueue('jobprobe', 'count')).toBe('plugin-jobprobe-count')
    expect(() => pluginJobQueue('job probe', 'count')).toThrow(/Not a job name/)
    await expect(enqueuePluginJob('jobprobe', 'count', { n: -1 })).rejects.toThrow()
    await expect(enqueuePluginJob('jobprobe', 'nope', { n: 1 })).rejects.toThrow(/has no job "nope"/)
    const workers = await startBulkWorkers()
    try {
      await enqueuePluginJob('jobprobe', 'count', { n: 1 })
      await until(() => seen.some((s) => s.n === 1))
      const t0 = Date.now()
      await enqueuePluginJob('jobprobe', 'count', { n: 2 }, { startAfterSeconds: 2 })
      await until(() => seen.some((s) => s.n === 2))
      expect(seen.find((s) => s.n === 2)!.at - t0).toBeGreaterThanOrEqual(1500)
      expect(seen.map((s) => s.n)).toEqual([1, 2])
    } finally {
      await workers.stop()
    }
  })
})
