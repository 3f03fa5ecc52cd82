/**
 * `parley worker` for the contract suite's toy protocol (started by tests/engine/contract.test.ts).
 */
import { runToyWorker } from '../support/toy-worker'
import { toyPlugin } from './plugin'

await runToyWorker(toyPlugin, 3)
