import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PROTOCOL_IDS } from '@/lib/protocols/registry'
import { db, sql } from '@/lib/server/db'
import { allPlugins, pluginFor, registerPlugin, UnknownProtocolError } from '@/lib/server/engine/plugins'
import { stepSession } from '@/lib/server/engine/runner'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { makeSession } from '../support/fixtures'
import { useFakeLlm } from '../support/llm'
import { demoPlaysToDone, exportsStream, personTurn, stallThenRetry, world } from './cases'
import type { ContractFixture } from './fixtures/types'
import { toyPlugin } from './toy/plugin'

/**
 * What every registered protocol must do on the engine (the engine's own behaviour is tested once,
 * on the toy protocols: contract.test.ts): the offline demo model plays a run to done and every log
 * replays intact, a person's turn makes the round trip, its agents stall on a model failure and a
 * Retry finishes the run, and every export streams.
 */
const fake = useFakeLlm()

registerPlugin(toyPlugin)

/** Each protocol's fixture, found from its id: protocols/<id>/fixture.ts exports it as default. */
const FIXTURES: Record<string, ContractFixture | undefined> = Object.fromEntries(
  await Promise.all(
    PROTOCOL_IDS.map(async (id) => {
      // A missing file is a missing fixture; a fixture that fails to load fails the file with its error.
      if (!existsSync(path.join(import.meta.dirname, '../../protocols', id, 'fixture.ts')))
        return [id, undefined] as const
      const m = (await import(`../../protocols/${id}/fixture.ts`)) as { default?: ContractFixture }
      return [id, m.default] as const
    }),
  ),
)

afterAll(async () => {
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

describe('the conformance suite covers every registered protocol', () => {
  it('has a fixture for each, with a demo set-up; the toy is registered beside them', async () => {
    for (const id of PROTOCOL_IDS) {
      expect(FIXTURES[id], `a conformance fixture for ${id}`).toBeDefined()
      expect(FIXTURES[id]?.demoSetup, `a demo set-up for ${id}`).toBeDefined()
    }
    expect((await allPlugins()).map((p) => p.protocol.id).sort()).toEqual([...PROTOCOL_IDS, 'toy'].sort())
  })

  it('an unknown protocol id is refused everywhere: no default protocol steps it', async () => {
    await expect(pluginFor('nope')).rejects.toBeInstanceOf(UnknownProtocolError)
    const w = await world(fake)
    const s = await makeSession(w.studyId, { protocol: 'nope', config: {}, task: 'x', instance: {}, seats: {} })
    await expect(stepSession(s.id)).rejects.toBeInstanceOf(UnknownProtocolError)
    expect(await db.protocolMessage.count({ where: { sessionId: s.id } })).toBe(0)
    const r = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'nope', name: 'x' })
    expect(r).toMatchObject({ ok: false, status: 400 })
  })
})

for (const id of PROTOCOL_IDS) {
  const fx = FIXTURES[id] as ContractFixture
  describe(`conformance: ${id}`, () => {
    for (const c of [demoPlaysToDone, personTurn, stallThenRetry, exportsStream]) c(id, fx, fake)
  })
}
