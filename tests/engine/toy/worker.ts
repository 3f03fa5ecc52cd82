/**
 * `parley worker` for the contract suite's toy protocol: the same workers, with the toy registered
 * (a protocol that exists only in this folder). Started by tests/engine/contract.test.ts.
 */
import { startWorkers } from '@/lib/server/engine/jobs'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { toyPlugin } from './plugin'

registerPlugin(toyPlugin)
const workers = await startWorkers(Number(process.argv[2] ?? 3))
await new Promise((resolve) => {
  process.once('SIGTERM', resolve)
  process.once('SIGINT', resolve)
})
await workers.stop()
await stopBoss()
process.exit(0)
