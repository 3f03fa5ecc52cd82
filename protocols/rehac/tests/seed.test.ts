import { describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { ensureDemoConnection } from '@/lib/server/llm/runtime'
import { demoSeed } from '@/lib/server/seed'
import { seedRehacDemo } from '@/protocols/rehac/server/seed'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

/** The demo seed: both task sets, a finished agent-alone run, and live episodes waiting for the annotator. */
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
      'run demo ReHAC (annotator)',
    ])
    const runs = await db.run.findMany({
      where: { studyId: study.id, protocol: 'rehac' },
      orderBy: { createdAt: 'asc' },
    })
    expect(runs.map((r) => r.status)).toEqual(['done', 'running'])
    const live = await db.protocolSession.findMany({ where: { runId: runs[1]?.id } })
    const waiting = live.filter((s) => s.status === 'awaiting')
    // The schedule starts with the human: every episode waits for the annotator, whatever the run's id.
    expect(waiting.length).toBe(3)
    expect(live.length).toBe(3)
    expect(waiting.every((s) => s.awaitingSeat === 'human')).toBe(true)
    expect(await seedRehacDemo(seed)).toEqual([])
  })
})
