/**
 * `parley worker` for the runtime toy (started by tests/engine/runtime.test.ts, which SIGKILLs it
 * mid-step).
 */
import { runToyWorker } from '../support/toy-worker'
import { toyExecPlugin } from './plugin'

await runToyWorker(toyExecPlugin, 2)
