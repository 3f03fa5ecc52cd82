import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { executeOrThrow } from '@/lib/server/operation'
import type { Role } from '@/lib/server/auth/roles'
import { DEMO_STUDY_ID, demoSeed, seedDemo } from '@/lib/server/seed'
import { myQueue } from '@/lib/server/services/sessions'
import { adjudicationPage } from '@/protocols/labelling/server/adjudication'
import {
  ANNOTATOR_DONE,
  DEVIATIONS,
  LABELLERS,
  LLM_RUN,
  RELEVANCE_RUN,
  seedLabellingDemo,
  TRANSCRIPT_RUN,
  TRANSCRIPTS_PER_RUN,
} from '@/protocols/labelling/server/seed'

afterAll(async () => {
  await stopBoss()
})

const ITEMS = readFileSync('protocols/labelling/demo/items.jsonl', 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as { id: string; gold: number })

/**
 * The labelling demo seed (after the PXP and ReHAC seeds, as lib/server/seed.ts orders them): the
 * relevance project's labels came from the demo people through the claim and submit services, the
 * disagreements are on the adjudication page, the rest waits in the annotator's My work, the LLM
 * labeller finished, and the transcript project is over the demo's own PXP and ReHAC sessions.
 */
describe('the labelling demo seed', () => {
  it('seeds both projects and the LLM labeller; the annotator finds work, the adjudication page the disagreements; idempotent', async () => {
    // The whole demo seed (PXP's and ReHAC's first: the PXP seed's datasets have fixed ids, one demo per database).
    const first = await seedDemo()
    const mine = first.created.filter((c) => c.startsWith('labelling: '))
    // On a fresh database, all of it; on one seeded by an earlier test file, nothing new.
    if (mine.length)
      expect(mine).toEqual([
        'labelling: dataset demo query–document items',
        'labelling: run demo relevance (three annotators)',
        'labelling: 48 demo labels',
        'labelling: run demo LLM labeller',
        'labelling: dataset demo transcripts',
        'labelling: run demo transcripts',
      ])
    const users = await db.user.findMany({ where: { email: { in: [...LABELLERS, 'researcher@parley.local'] } } })
    const people: Record<string, Actor> = Object.fromEntries(
      users.map((u) => [u.email, { userId: u.id, email: u.email, name: u.name, role: u.role as Role, via: 'seed' }]),
    )
    const annotator = people['annotator@parley.local'] as Actor
    const researcher = people['researcher@parley.local'] as Actor
    const study = { id: DEMO_STUDY_ID }
    expect(
      await db.studyMember.findUnique({ where: { studyId_userId: { studyId: study.id, userId: annotator.userId } } }),
    ).toMatchObject({ role: 'annotator' })
    const runs = await db.run.findMany({ where: { studyId: study.id, protocol: 'labelling' } })
    const run = (name: string) => runs.find((r) => r.name === name) as (typeof runs)[number]
    expect(runs).toHaveLength(3)
    const relevance = run(RELEVANCE_RUN)
    expect(relevance).toMatchObject({ repetitions: 3, distinctClaimants: true, status: 'running' })
    expect(await db.protocolSession.count({ where: { runId: relevance.id } })).toBe(60)

    // Each label is its person's, sent as a turn (authored and audited), never two of one item by one person.
    const labels = await db.protocolMessage.findMany({
      where: { session: { runId: relevance.id } },
      select: { authorUserId: true, body: true, session: { select: { instance: true } } },
    })
    expect(labels).toHaveLength(20 + 20 + ANNOTATOR_DONE)
    const got = new Map<string, unknown>()
    for (const l of labels) {
      const key = `${l.authorUserId}:${(l.session.instance as { id: string }).id}`
      expect(got.has(key)).toBe(false)
      got.set(key, (l.body as { answers: { O: unknown } }).answers.O)
    }
    for (const [i, it] of ITEMS.entries())
      for (const email of LABELLERS) {
        const who = people[email] as Actor
        const want =
          email === 'annotator@parley.local' && i >= ANNOTATOR_DONE ? undefined : (DEVIATIONS[email][i] ?? it.gold)
        expect(got.get(`${who.userId}:${it.id}`), `${email} ${it.id}`).toBe(want)
      }
    expect(await db.auditLog.count({ where: { action: 'session.turn', actorUserId: annotator.userId } })).toBe(
      ANNOTATOR_DONE,
    )

    // The adjudication page lists exactly the items whose labels differ.
    const disputed = ITEMS.filter((it, i) => {
      const vals = LABELLERS.filter((e) => e !== 'annotator@parley.local' || i < ANNOTATOR_DONE).map(
        (e) => DEVIATIONS[e][i] ?? it.gold,
      )
      return new Set(vals).size > 1
    }).map((it) => it.id)
    expect(disputed.length).toBeGreaterThanOrEqual(3)
    const page = await adjudicationPage(researcher, study.id, relevance.id, { pageSize: '100' })
    expect(page?.items.map((x) => x.itemId)).toEqual(disputed)
    expect(page?.runs.map((r) => r.name)).toEqual([LLM_RUN])

    // The LLM labeller labelled every item.
    const llm = run(LLM_RUN)
    expect(llm.status).toBe('done')
    expect(
      await db.protocolMessage.count({
        where: { session: { runId: llm.id }, body: { path: ['kind'], equals: 'label' } },
      }),
    ).toBe(20)

    // The transcripts: the demo's own PXP and ReHAC sessions, two slots each, nobody's yet.
    const judge = run(TRANSCRIPT_RUN)
    const ts = await db.protocolSession.findMany({ where: { runId: judge.id }, select: { instance: true } })
    expect(ts).toHaveLength(2 * 2 * TRANSCRIPTS_PER_RUN)
    expect(new Set(ts.map((t) => (t.instance as { protocol: string }).protocol))).toEqual(new Set(['pxp', 'rehac']))

    // The annotator's My work offers the relevance items they have not labelled and every transcript.
    const queue = await executeOrThrow(myQueue, annotator, { filter: 'claimable', pageSize: 100 })
    const offered = (runId: string) => new Set(queue.items.filter((x) => x.runId === runId).map((x) => x.title))
    expect(offered(relevance.id).size).toBe(20 - ANNOTATOR_DONE)
    expect(offered(judge.id).size).toBe(2 * TRANSCRIPTS_PER_RUN)

    // Again: nothing new.
    expect((await seedDemo()).created).toEqual([])
    expect(await seedLabellingDemo(demoSeed(study.id, researcher, people))).toEqual([])
    expect(await db.run.count({ where: { studyId: study.id, protocol: 'labelling' } })).toBe(3)
    expect(await db.protocolMessage.count({ where: { session: { runId: relevance.id } } })).toBe(48)
    expect(await db.dataset.count({ where: { studyId: study.id, kind: 'labelling-items' } })).toBe(2)
  }, 300_000)
})
