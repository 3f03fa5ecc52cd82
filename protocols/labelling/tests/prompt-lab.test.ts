import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { protocolPage } from '@/lib/server/services/protocol-pages'
import { createRun } from '@/lib/server/services/runs'
import { labellingDataset } from '@/protocols/labelling/fixture'
import type { PromptLabData } from '@/protocols/labelling/server/prompt-lab'
import { labellingUi } from '@/protocols/labelling/ui'
import { byHand, GOLD, rules, SCRIPT } from '@/protocols/labelling/tests/lab-script'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()

describe('the prompt lab', () => {
  it('four LLM-labeller runs against scripted replies: κ and MAE by hand, unparseable dropped and counted; staff only', async () => {
    const researcher = await makeUser('researcher')
    const annotator = await makeUser('annotator')
    const study = await makeStudy(researcher, [])
    await db.studyMember.create({ data: { studyId: study.id, userId: annotator.userId, role: 'annotator' } })
    const conn = await fakeConnection(study.id, fake())
    const datasetId = await labellingDataset(study.id, 5)
    fake().setScript(rules())
    fake().reset()
    for (const variant of Object.keys(SCRIPT)) {
      const r = await execute(createRun, researcher, {
        studyId: study.id,
        protocol: 'labelling',
        name: `LLM ${variant}`,
        datasetId,
        config: { preset: 'relevance-0-2', labeller: { variant } },
        seats: { annotator: { kind: 'llm', model: { connectionId: conn.id, model: 'gen' } } },
      })
      if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
      expect(await runHeadless(r.data.id as string)).toMatchObject({ done: 5, stalled: 0 })
    }
    const page = (actor: typeof researcher, args: Record<string, string> = {}) =>
      execute(protocolPage, actor, { studyId: study.id, protocol: 'labelling', path: ['prompt-lab'], args })
    // A global connection (as the offline demo model is), removed again below.
    const global = await db.llmConnection.create({
      data: { name: 'global fake', provider: 'openai-compatible', baseUrl: fake().url, defaultModel: 'gen' },
    })
    const ok = await page(researcher, { dataset: datasetId, resamples: '20', halves: '200' }).finally(() =>
      db.llmConnection.delete({ where: { id: global.id } }),
    )
    if (!ok.ok) throw new Error(ok.error)
    const d = ok.data.data as PromptLabData
    expect(d.error).toBeNull()
    expect(d.dataset).toMatchObject({ id: datasetId, items: 5, withGold: 5 })
    // The Run form offers the study's connection and the global ones (the offline demo model is global).
    expect(d.connections.map((c) => c.id)).toContain(conn.id)
    expect(d.connections.map((c) => c.id)).toContain(global.id)
    const table = d.table!
    expect(table.rows.map((r) => r.name).sort()).toEqual(Object.keys(SCRIPT).sort())
    for (const [variant, labels] of Object.entries(SCRIPT)) {
      const row = table.rows.find((r) => r.name === variant)!
      const h = byHand(GOLD, labels)
      expect(row.n).toBe(h.n)
      expect(row.unparseable).toBe(labels.filter((l) => l === null).length)
      expect(row.mae.estimate).toBeCloseTo(h.mae, 12)
      if (h.kappa === null) expect(row.kappa.estimate).toBeNull()
      else expect(row.kappa.estimate).toBeCloseTo(h.kappa, 12)
      expect(row.kappa.samples).toHaveLength(20)
      expect(row.rboQuery).toBeNull()
    }
    expect(table.rows.find((r) => r.name === '---A-')!.unparseable).toBe(1)
    expect(table.rboNote).toMatch(/run file/)
    expect(table.factorialComplete).toBe(false)
    expect(table.variantsPresent).toBe(4)
    // Split-half over the 4 items every variant labelled; every iteration chooses a variant.
    expect(table.splitHalfNote).toBe('over the 4 of 5 items every variant labelled')
    expect(Object.values(table.splitHalf!.chosen).reduce((a, b) => a + b, 0)).toBe(200)
    // Cost and latency per label from the LLM call rows: one call per session.
    for (const r of d.runs) expect(r.calls).toBe(5)
    // The page draws Table 2 with the unparseable counts, the RBO note and the Run form's prompt preview.
    const html = renderToStaticMarkup(
      createElement(labellingUi.StudyPage!, {
        study: { id: study.id, name: 'S' },
        path: ['prompt-lab'],
        title: ok.data.title,
        data: d,
      }),
    )
    expect(html).toContain('Table 2: agreement with gold per prompt')
    expect(html).toContain('Unparseable')
    expect(html).toContain('R--A-')
    expect(html).toContain('the RBO columns need one')
    expect(html).toContain('the factorial is incomplete')
    expect(html).toContain('Forager bees') // the preview of the first item under -DNA-
    // The second view is served from the cache until a label arrives.
    const again = await page(researcher, { dataset: datasetId, resamples: '20', halves: '200' })
    if (!again.ok) throw new Error(again.error)
    expect((again.data.data as PromptLabData).cached).toBe(true)
    // A bad argument is a message on the page, not a crash.
    const bad = await page(researcher, { dataset: datasetId, resamples: '5000' })
    if (!bad.ok) throw new Error(bad.error)
    expect((bad.data.data as PromptLabData).error).toMatch(/1,000/)
    // An annotator of the study may not open it: to them it is a page of a study they cannot see.
    expect(await page(annotator)).toMatchObject({ ok: false, status: 404 })
  })
})
