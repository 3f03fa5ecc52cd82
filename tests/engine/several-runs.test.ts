import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { db } from '@/lib/server/db'
import type { PluginSetup, ProtocolPlugin, RunPlan } from '@/lib/server/engine/plugin'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { makeUser } from '../support/fixtures'
import { useFakeLlm } from '../support/llm'
import { world } from './cases'
import { toyFixture } from './fixtures/toy'
import { toyPlugin } from './toy/plugin'
import { toy } from './toy/protocol'

/**
 * The engine's contract for a set-up that plans several runs from one body (a curve: one run per
 * budget): `runs.create` writes every one of them, each with its own config and sessions, or none of
 * them when any is refused (a bad option, a seat the engine refuses in the second plan).
 */
const fake = useFakeLlm()

const budgets = z.strictObject({
  budgets: z.array(z.coerce.number().int().min(1).max(20)).min(1).max(5).optional(),
  /** A test hook: the last run's guesser is a person who is not a member of the study (the engine refuses it). */
  strangerLast: z.string().optional(),
})

const setup: PluginSetup<{ maxGuesses: number }, z.output<typeof budgets>> = {
  options: budgets,
  async plan(_actor, _studyId, input, tools) {
    const ds = await tools.dataset(input.datasetId ?? '')
    const one = (maxGuesses: number, name: string): RunPlan => ({
      name,
      task: 'numbers',
      datasetId: ds.id,
      config: { ...input.config, maxGuesses },
      seats: input.seats,
      repetitions: input.repetitions,
      seatCycle: input.seatCycle,
    })
    const list = input.options.budgets
    if (!list) return one(input.config.maxGuesses, input.name)
    const plans = list.map((b) => one(b, `${input.name} · ${b} guesses`))
    const stranger = input.options.strangerLast
    if (stranger) {
      const last = plans.at(-1) as RunPlan
      const seats = { ...last.seats, guesser: { kind: 'human' as const, userId: stranger, claimable: false } }
      plans[plans.length - 1] = { ...last, seats, seatCycle: [seats] }
    }
    return plans
  },
  snapshot: (row) => row.input,
}

const manyPlugin: ProtocolPlugin = { ...toyPlugin, protocol: { ...toy, id: 'toy-many' }, setup: async () => setup }
registerPlugin(manyPlugin)

afterAll(async () => {
  await stopBoss()
})

describe('a set-up that plans several runs', () => {
  it('creates one run per plan together, each with its own config and sessions; the answer lists them all', async () => {
    const w = await world(fake)
    const datasetId = await toyFixture.dataset(w, 2)
    const r = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'toy-many',
      ...toyFixture.setup(w, datasetId),
      name: 'curve',
      options: { budgets: [1, 2, 3] },
    })
    if (!r.ok) throw new Error(r.error)
    const data = r.data as { id: string; runs: { id: string; name: string; sessions: number }[] }
    expect(data.runs.map((x) => x.name)).toEqual(['curve · 1 guesses', 'curve · 2 guesses', 'curve · 3 guesses'])
    expect(data.id).toBe(data.runs[0]?.id)
    const rows = await db.run.findMany({ where: { studyId: w.studyId }, orderBy: { createdAt: 'asc' } })
    expect(rows).toHaveLength(3)
    expect(rows.map((x) => (x.config as { maxGuesses: number }).maxGuesses).sort()).toEqual([1, 2, 3])
    for (const run of rows) expect(await db.protocolSession.count({ where: { runId: run.id } })).toBe(2)
    const audits = await db.auditLog.count({
      where: { action: 'run.create', resourceId: { in: rows.map((x) => x.id) } },
    })
    expect(audits).toBe(3)
  })

  it('one plan still answers one run (the `runs` list has it alone)', async () => {
    const w = await world(fake)
    const datasetId = await toyFixture.dataset(w, 1)
    const r = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'toy-many',
      ...toyFixture.setup(w, datasetId),
    })
    if (!r.ok) throw new Error(r.error)
    expect((r.data as { runs: unknown[] }).runs).toHaveLength(1)
  })

  it('writes none of the runs when the engine refuses one plan, or zod refuses the options', async () => {
    const w = await world(fake)
    const datasetId = await toyFixture.dataset(w, 1)
    const stranger = await makeUser('expert')
    const refused = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'toy-many',
      ...toyFixture.setup(w, datasetId),
      options: { budgets: [1, 2], strangerLast: stranger.userId },
    })
    expect(refused.ok).toBe(false)
    if (!refused.ok) expect(refused.error).toMatch(/^Run 2 \(contract · 2 guesses\): .*member of the study/)
    const bad = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'toy-many',
      ...toyFixture.setup(w, datasetId),
      options: { budgets: [1, 0] },
    })
    expect(bad.ok).toBe(false)
    if (!bad.ok) expect(Object.keys(bad.fieldErrors ?? {})).toContain('options.budgets.1')
    expect(await db.run.count({ where: { studyId: w.studyId } })).toBe(0)
  })
})
