import { startWorkers } from '@/lib/server/engine/jobs'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'

/**
 * `parley worker` for a toy protocol (one that exists only in its test folder): the same workers,
 * with the toy registered, until SIGTERM or SIGINT. A toy's worker.ts calls it; its test spawns that
 * file (`node --import tsx tests/engine/<toy>/worker.ts <concurrency>`) and may SIGKILL it mid-step.
 */
export async function runToyWorker(plugin: ProtocolPlugin, concurrency: number): Promise<never> {
  registerPlugin(plugin)
  const workers = await startWorkers(Number(process.argv[2] ?? concurrency))
  await new Promise((resolve) => {
    process.once('SIGTERM', resolve)
    process.once('SIGINT', resolve)
  })
  await workers.stop()
  await stopBoss()
  process.exit(0)
}
