/**
 * `parley worker` for the runtime toy: the same workers, with the toy registered (a protocol that
 * exists only in this folder). Started by tests/engine/runtime.test.ts, which SIGKILLs it mid-step.
 */
import { startWorkers } from '@/lib/server/engine/jobs'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { toyExecPlugin } from './plugin'

registerPlugin(toyExecPlugin)
const workers = await startWorkers(Number(process.argv[2] ?? 2))
await new Promise((resolve) => {
  process.once('SIGTERM', resolve)
  process.once('SIGINT', resolve)
})
await workers.stop()
await stopBoss()
process.exit(0)
