import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { afterAll, describe, expect, it, vi } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import type { FakeRule } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { mintDataset } from '@/protocols/mint/fixture'
import { mintLeaderboard } from '@/protocols/mint/server/leaderboard'
import { mintPlugin } from '@/protocols/mint/server/plugin'
import { sandboxStatus } from '@/protocols/mint/server/sandbox'
import { MintSetupForm } from '@/protocols/mint/ui/setup-form'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

/**
 * An SR-vs-k curve from one set-up (issue 26, "one run per k, created together"): the form's ticked
 * budgets → one run per k (budget k, p = 2 or 1 when k = 1), all or none; the leaderboard's curve takes
 * SR_k from each separate run. The model proposes a wrong answer first and the right one second, so
 * SR_1 = 0 and SR_2 = SR_3 = 100: a prefix of a longer run would have given the same SR_1 only by luck.
 */
const signedIn = vi.hoisted(() => ({ actor: null as Actor | null }))
vi.mock('next/headers', () => ({ headers: async () => new Headers() }))
vi.mock('next/cache', () => ({ revalidatePath: () => {} }))
vi.mock('@/lib/server/auth/session', () => ({
  getCurrentSession: async () => (signedIn.actor ? { actor: signedIn.actor, sessionId: 'test' } : null),
}))
const { createRunAction } = await import('@/app/actions/runs')

const fake = useFakeLlm()
const status = await sandboxStatus()
afterAll(async () => {
  await stopBoss()
})

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher, [])
  const conn = await fakeConnection(study.id, fake())
  const datasetId = await mintDataset(study.id, 1)
  return { researcher, studyId: study.id, connectionId: conn.id, datasetId }
}
type World = Awaited<ReturnType<typeof world>>

/** The fields the set-up form posts: the generic seat picker's and MINT's own. */
const formFields = (w: World, ks: string[] | string | undefined) => ({
  name: 'gen curve',
  datasetId: w.datasetId,
  k: '5',
  ...(ks === undefined ? {} : { ks }),
  'seats.agent.kind': 'llm',
  'seats.agent.model': JSON.stringify({ connectionId: w.connectionId }),
  'seats.agent.modelName': 'gen',
  'seats.feedback.kind': 'program:no-feedback',
})

async function createFromForm(w: World, fields: Record<string, unknown>) {
  const setup = await mintPlugin.setup()
  const body = setup.fromForm?.(fields) as Record<string, unknown>
  return execute(createRun, w.researcher, { ...body, studyId: w.studyId, protocol: 'mint' })
}

describe('MINT: an SR-vs-k curve from one set-up', () => {
  it('the form offers the budgets of the curve as boxes named ks', () => {
    const html = renderToStaticMarkup(
      createElement(MintSetupForm, {
        studyId: 's',
        protocol: 'mint',
        datasets: [{ id: 'd', name: 'tasks', kind: 'mint-tasks', instances: 1 }],
        models: [],
        experts: [],
        extra: { sandbox: { available: true } },
      } as never),
    )
    for (const k of [1, 2, 3, 4, 5]) expect(html).toContain(`name="ks" value="${k}"`)
  })

  it.skipIf(!status.available)(
    'ticked budgets create one run per k together; the leaderboard reads SR_k from each run',
    async () => {
      const w = await world()
      fake().reset()
      fake().setScript([
        {
          match: { model: 'gen', contains: 'Your answer is wrong.' },
          replies: [{ text: '<thought> Try again. </thought>\nThe answer is <solution> 12 </solution>.' }],
        },
        {
          match: { model: 'gen' },
          replies: [{ text: '<thought> A guess. </thought>\nThe answer is <solution> 11 </solution>.' }],
        },
      ] as FakeRule[])
      const r = await createFromForm(w, formFields(w, ['3', '1', '2']))
      if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
      const made = (r.data as { runs: { id: string; name: string }[] }).runs
      expect(made.map((x) => x.name)).toEqual(['gen curve · k = 1', 'gen curve · k = 2', 'gen curve · k = 3'])
      const rows = await db.run.findMany({ where: { studyId: w.studyId }, select: { id: true, config: true } })
      expect(rows).toHaveLength(3)
      const configs = made.map((m) => rows.find((x) => x.id === m.id)?.config as { k: number; p: number })
      expect(configs.map((c) => [c.k, c.p])).toEqual([
        [1, 1],
        [2, 2],
        [3, 2],
      ])
      for (const m of made) expect(await runHeadless(m.id)).toMatchObject({ done: 1, stalled: 0 })
      const board = await mintLeaderboard(w.studyId)
      const curve = board.curves.filter((c) => c.source === 'parley')
      expect(curve).toHaveLength(1)
      expect(curve[0]?.points.map((p) => [p.k, p.sr, p.runId])).toEqual([
        [1, 0, made[0]?.id],
        [2, 100, made[1]?.id],
        [3, 100, made[2]?.id],
      ])
    },
  )

  it.skipIf(!status.available)(
    'the New run action: ticked boxes create one run each and lead to the study’s run list; a bad box none',
    async () => {
      const w = await world()
      const post = (ks: string[]) => {
        const fd = new FormData()
        for (const [k, v] of Object.entries({ ...formFields(w, undefined), studyId: w.studyId, protocol: 'mint' }))
          fd.set(k, String(v))
        for (const k of ks) fd.append('ks', k)
        fd.set('draft', 'on') // created as drafts: nothing is queued for workers this file does not run
        return createRunAction(null, fd)
      }
      signedIn.actor = w.researcher
      try {
        const refused = await post(['1', '0'])
        expect(refused).toMatchObject({ ok: false, fieldErrors: { 'options.ks.1': expect.any(Array) } })
        expect(await db.run.count({ where: { studyId: w.studyId } })).toBe(0)
        // Next's redirect is a thrown error whose digest names the target.
        const went = await post(['1', '2', '5']).then(
          () => null,
          (e: { digest?: string }) => e.digest ?? String(e),
        )
        expect(went).toContain(`/runs?studyId=${w.studyId}`)
        const runs = await db.run.findMany({
          where: { studyId: w.studyId },
          orderBy: { createdAt: 'asc' },
          select: { name: true, config: true, status: true },
        })
        expect(runs.map((r) => [r.name, (r.config as { k: number }).k, r.status])).toEqual([
          ['gen curve · k = 1', 1, 'draft'],
          ['gen curve · k = 2', 2, 'draft'],
          ['gen curve · k = 5', 5, 'draft'],
        ])
      } finally {
        signedIn.actor = null
      }
    },
  )

  it.skipIf(!status.available)(
    'a bad budget or a repeated one creates no run; one box is a curve of one run',
    async () => {
      const w = await world()
      const bad = await createFromForm(w, formFields(w, ['1', '11']))
      expect(bad).toMatchObject({ ok: false, status: 400, fieldErrors: { 'options.ks.1': expect.any(Array) } })
      const twice = await createFromForm(w, formFields(w, ['2', '2']))
      expect(twice).toMatchObject({ ok: false, status: 400, fieldErrors: { 'options.ks': ['Choose each k once.'] } })
      // One box ticked is a curve of one run; no box is the run with the k field.
      const one = await createFromForm(w, formFields(w, '4'))
      if (!one.ok) throw new Error(one.error)
      expect((one.data as { runs: { name: string }[] }).runs.map((x) => x.name)).toEqual(['gen curve · k = 4'])
      const plain = await createFromForm(w, formFields(w, undefined))
      if (!plain.ok) throw new Error(plain.error)
      expect((plain.data as { runs: { name: string }[] }).runs.map((x) => x.name)).toEqual(['gen curve'])
      const runs = await db.run.findMany({
        where: { studyId: w.studyId },
        select: { name: true, config: true },
        orderBy: { createdAt: 'asc' },
      })
      expect(runs.map((x) => [x.name, (x.config as { k: number }).k])).toEqual([
        ['gen curve · k = 4', 4],
        ['gen curve', 5],
      ])
    },
  )
})
