import { describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { ensureDemoConnection } from '@/lib/server/llm/runtime'
import { demoSeed } from '@/lib/server/seed'
import type { RehacMessage } from '@/protocols/rehac/core/protocol'
import { coverage } from '@/protocols/rehac/core/tree'
import { COLLECTION_TASKS, seedRehacDemo } from '@/protocols/rehac/server/seed'
import { episodes } from '@/protocols/rehac/server/views'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

/**
 * The demo seed: both task sets, a finished agent-alone run, a finished collection tree (demo agent,
 * demo model as simulated human) and live episodes waiting for the annotator.
 */
describe('the ReHAC demo seed', () => {
  it('imports the demo task sets, finishes the agent-alone run and leaves human steps for the annotator; idempotent', async () => {
    await ensureDemoConnection()
    const researcher = await makeUser('researcher')
    const annotator = await makeUser('annotator')
    const study = await makeStudy(researcher, [annotator])
    const seed = demoSeed(study.id, researcher as Actor, { 'annotator@parley.local': annotator as Actor })
    const made = await seedRehacDemo(seed)
    expect(made).toEqual([
      'dataset demo QA tasks',
      'dataset demo SQL tasks',
      'run demo ReHAC (agent alone)',
      'run demo ReHAC (collection tree)',
      'run demo ReHAC (annotator)',
    ])
    const runs = await db.run.findMany({
      where: { studyId: study.id, protocol: 'rehac' },
      orderBy: { createdAt: 'asc' },
    })
    expect(runs.map((r) => r.status)).toEqual(['done', 'done', 'running'])
    const live = await db.protocolSession.findMany({ where: { runId: runs[2]?.id } })
    const waiting = live.filter((s) => s.status === 'awaiting')
    // The schedule starts with the human: every episode waits for the annotator, whatever the run's id.
    expect(waiting.length).toBe(3)
    expect(live.length).toBe(3)
    expect(waiting.every((s) => s.awaitingSeat === 'human')).toBe(true)
    expect(await seedRehacDemo(seed)).toEqual([])
    expect(await db.run.count({ where: { studyId: study.id } })).toBe(3)
  })

  it('the collection: forks fill both branches of each question, the same tree whatever the run id; the simulated human answers right', async () => {
    await ensureDemoConnection()
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher, [])
    await seedRehacDemo(demoSeed(study.id, researcher as Actor, {}))
    const run = await db.run.findFirstOrThrow({
      where: { studyId: study.id, name: { contains: 'collection tree' } },
    })
    expect(run.status).toBe('done')
    expect(run.seats).toMatchObject({ decider: { kind: 'program', program: 'tree' } })
    const sessions = await db.protocolSession.findMany({ where: { runId: run.id } })
    expect(sessions.every((s) => s.status === 'done')).toBe(true)
    expect(sessions.filter((s) => s.parentId).length).toBeGreaterThan(0)
    const list = await episodes(run.id)
    const byTask = new Map<string, typeof list>()
    for (const e of list) byTask.set(e.taskId, [...(byTask.get(e.taskId) ?? []), e])
    expect([...byTask.keys()].sort()).toEqual([...COLLECTION_TASKS])
    for (const [task, eps] of byTask) {
      // Every episode ends by step 2, so the random draws only decide which session took which path.
      expect(eps.map((e) => e.path).sort(), task).toEqual(['00', '01', '1'])
      const cov = coverage(eps.map((e) => e.path))
      expect(cov, task).toEqual({ states: 2, covered: 2 })
      for (const e of eps) {
        const human = e.path.endsWith('1')
        // The method comparison the tree shows: the demo agent is wrong, the simulated human right.
        expect(e.result?.T, `${task} ${e.path}`).toBe(human ? 1 : 0)
      }
    }
    // The human steps are the demo model's, marked simulated, and yes/no questions get yes or no.
    const humanSteps = await db.protocolMessage.findMany({
      where: { session: { runId: run.id }, sender: 'human' },
    })
    expect(humanSteps.length).toBe(6)
    expect(humanSteps.every((m) => (m.payload as { simulated?: boolean } | null)?.simulated === true)).toBe(true)
    const answers = new Set(
      humanSteps.map((m) => (m.body as unknown as Extract<RehacMessage, { kind: 'step' }>).action.arg),
    )
    expect([...answers].sort()).toEqual(['Halvard Brenn', 'no', 'yes'])
  })
})
