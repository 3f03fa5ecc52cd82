import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { startWorkers, type Workers } from '@/lib/server/engine/jobs'
import { startBulkWorkers } from '@/lib/server/jobs/bulk'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { protocolPage } from '@/lib/server/services/protocol-pages'
import { labellingDataset } from '@/protocols/labelling/fixture'
import { getLabRun, type LabRunView, retryLabRun, startLabRunOp } from '@/protocols/labelling/server/lab-runs'
import type { PromptLabData } from '@/protocols/labelling/server/prompt-lab'
import { byHand, GOLD, rules, SCRIPT } from '@/protocols/labelling/tests/lab-script'
import { labellingUi } from '@/protocols/labelling/ui'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

/**
 * Prompt-lab runs through the job path: the plugin's `lab-run` job creates one LLM-labeller run per
 * prompt, the step workers label against the fake OpenAI server, and the job stores the tables; a
 * model that keeps failing leaves the lab run failed with the reason, and Retry finishes it.
 */
const fake = useFakeLlm()
let steps: Workers | undefined
let bulk: Workers | undefined
beforeAll(async () => {
  steps = await startWorkers(2)
  bulk = await startBulkWorkers()
})
afterAll(async () => {
  await steps?.stop().catch(() => {})
  await bulk?.stop().catch(() => {})
  await stopBoss()
})

async function until(
  actor: Awaited<ReturnType<typeof makeUser>>,
  labRunId: string,
  ok: (v: LabRunView) => boolean,
  ms = 60_000,
): Promise<LabRunView> {
  const end = Date.now() + ms
  for (;;) {
    const r = await execute(getLabRun, actor, { labRunId })
    if (!r.ok) throw new Error(r.error)
    if (ok(r.data)) return r.data
    if (Date.now() > end)
      throw new Error(`timed out: ${JSON.stringify({ status: r.data.status, error: r.data.error })}`)
    await new Promise((res) => setTimeout(res, 200))
  }
}

describe('prompt-lab runs on the job queue', () => {
  it('four variants with scripted labels: queued at once, progress per prompt, stored κ and MAE by hand; access checked', async () => {
    const researcher = await makeUser('researcher')
    const annotator = await makeUser('annotator')
    const viewer = await makeUser('viewer')
    const stranger = await makeUser('researcher')
    const study = await makeStudy(researcher, [])
    await db.studyMember.create({ data: { studyId: study.id, userId: annotator.userId, role: 'annotator' } })
    await db.studyMember.create({ data: { studyId: study.id, userId: viewer.userId, role: 'viewer' } })
    const conn = await fakeConnection(study.id, fake())
    const datasetId = await labellingDataset(study.id, 5)
    fake().setScript(rules())
    fake().reset()
    const input = {
      studyId: study.id,
      datasetId,
      connectionId: conn.id,
      model: 'gen',
      prompts: Object.keys(SCRIPT).map((variant) => ({ variant })),
      args: { resamples: '20', halves: '200' },
    }
    // Starting needs study write: an annotator or a viewer of the study may not, a stranger does not see it.
    expect(await execute(startLabRunOp, annotator, input)).toMatchObject({ ok: false, status: 403 })
    expect(await execute(startLabRunOp, viewer, input)).toMatchObject({ ok: false, status: 403 })
    expect(await execute(startLabRunOp, stranger, input)).toMatchObject({ ok: false, status: 404 })
    // Bad input is a clear refusal, nothing stored.
    const twice = await execute(startLabRunOp, researcher, {
      ...input,
      prompts: [{ variant: '-----' }, { variant: '-----' }],
    })
    expect(twice).toMatchObject({ ok: false, status: 400 })
    expect(twice.ok ? '' : twice.error).toMatch(/picked twice/)
    expect(await execute(startLabRunOp, researcher, { ...input, prompts: [{ variant: 'XYZ' }] })).toMatchObject({
      ok: false,
      status: 400,
    })
    expect(await db.labellingLabRun.count({ where: { studyId: study.id } })).toBe(0)

    const started = await execute(startLabRunOp, researcher, input)
    if (!started.ok) throw new Error(started.error)
    expect(started.data.status).toBe('queued')
    const labRunId = started.data.labRunId

    // Viewing needs study read: a viewer member may; an annotator stays blind (no studies:read), a stranger gets 404.
    expect(await execute(getLabRun, viewer, { labRunId })).toMatchObject({ ok: true })
    expect(await execute(getLabRun, annotator, { labRunId })).toMatchObject({ ok: false, status: 403 })
    expect(await execute(getLabRun, stranger, { labRunId })).toMatchObject({ ok: false, status: 404 })
    expect(await execute(retryLabRun, viewer, { labRunId })).toMatchObject({ ok: false, status: 403 })

    const done = await until(researcher, labRunId, (v) => v.status === 'done' || v.status === 'failed')
    expect(done.error).toBeNull()
    expect(done.status).toBe('done')
    expect(done.progress.map((p) => p.prompt)).toEqual(Object.keys(SCRIPT))
    for (const p of done.progress) expect(p).toMatchObject({ done: 5, total: 5, stalled: 0, runStatus: 'done' })
    // The stored tables reproduce κ and MAE by hand; the unreadable reply is dropped and counted.
    const table = done.result!.table
    for (const [variant, labels] of Object.entries(SCRIPT)) {
      const row = table.rows.find((r) => r.name === variant)!
      const h = byHand(GOLD, labels)
      expect(row.n).toBe(h.n)
      expect(row.unparseable).toBe(labels.filter((l) => l === null).length)
      expect(row.mae.estimate).toBeCloseTo(h.mae, 12)
      if (h.kappa === null) expect(row.kappa.estimate).toBeNull()
      else expect(row.kappa.estimate).toBeCloseTo(h.kappa, 12)
      expect(row.kappa.samples).toHaveLength(20)
    }
    expect(Object.values(table.splitHalf!.chosen).reduce((a, b) => a + b, 0)).toBe(200)
    for (const r of done.result!.runs) expect(r.calls).toBe(5)
    // Retry is for failed lab runs only.
    expect(await execute(retryLabRun, researcher, { labRunId })).toMatchObject({ ok: false, status: 400 })

    // The page (after a reload) shows the lab run and its stored tables.
    const page = await execute(protocolPage, researcher, {
      studyId: study.id,
      protocol: 'labelling',
      path: ['prompt-lab'],
      args: { dataset: datasetId },
    })
    if (!page.ok) throw new Error(page.error)
    const d = page.data.data as PromptLabData
    expect(d.labRuns.map((l) => l.id)).toEqual([labRunId])
    expect(d.labRun).toMatchObject({ id: labRunId, status: 'done' })
    const html = renderToStaticMarkup(
      createElement(labellingUi.StudyPage!, {
        study: { id: study.id, name: 'S' },
        path: ['prompt-lab'],
        title: page.data.title,
        data: d,
      }),
    )
    expect(html).toContain('Lab runs')
    expect(html).toContain(labRunId)
    expect(html).toContain('Table 2: agreement with gold per prompt')
    // Another study's lab run is not shown on this one's page.
    const wrong = await execute(protocolPage, researcher, {
      studyId: study.id,
      protocol: 'labelling',
      path: ['prompt-lab'],
      args: { dataset: datasetId, lab: 'nosuchlabrun' },
    })
    if (!wrong.ok) throw new Error(wrong.error)
    expect((wrong.data.data as PromptLabData).error).toMatch(/No such lab run/)
  })

  it('a model that keeps failing leaves the lab run failed with the reason; Retry finishes it', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher, [])
    const conn = await fakeConnection(study.id, fake())
    const datasetId = await labellingDataset(study.id, 3)
    fake().setScript([{ match: { model: 'broken' }, replies: [{ fault: '500' }] }])
    fake().reset()
    const started = await execute(startLabRunOp, researcher, {
      studyId: study.id,
      datasetId,
      connectionId: conn.id,
      model: 'broken',
      prompts: [{ variant: '-DNA-' }],
    })
    if (!started.ok) throw new Error(started.error)
    const labRunId = started.data.labRunId
    const failed = await until(researcher, labRunId, (v) => v.status === 'failed' || v.status === 'done')
    expect(failed.status).toBe('failed')
    expect(failed.error).toMatch(/^-DNA-: \d of 3 labels failed: .*(500|Internal server error)/)
    expect(failed.progress[0]!.stalled).toBeGreaterThan(0)
    // The LLM seam retried the failing call before the session stalled.
    const calls = fake().requests.filter((r) => r.model === 'broken').length
    expect(calls).toBeGreaterThan(failed.progress[0]!.stalled)

    // The model answers again: Retry puts the stalled sessions back and the lab run finishes.
    fake().setScript([{ match: { model: 'broken' }, replies: [{ text: '"O": 1}]' }] }])
    const again = await execute(retryLabRun, researcher, { labRunId })
    expect(again).toMatchObject({ ok: true, data: { status: 'queued' } })
    const done = await until(researcher, labRunId, (v) => v.status === 'done' || v.status === 'failed')
    expect(done).toMatchObject({ status: 'done', error: null, attempts: 1 })
    expect(done.progress[0]).toMatchObject({ done: 3, total: 3, stalled: 0 })
    expect(done.result!.table.rows[0]!.name).toBe('-DNA-')
  })
})
