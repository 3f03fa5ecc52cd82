import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createTaskTemplate } from '@/protocols/pxp/server/templates'
import { protocolPage, protocolPanels, setupFormData } from '@/lib/server/services/protocol-pages'
import { makeStudy, makeUser } from '../support/fixtures'

afterAll(async () => {
  await stopBoss()
  await db.$disconnect()
})

/** A study with a researcher, a viewer member and one task template; an outsider of another study. */
async function world() {
  const researcher = await makeUser('researcher')
  const viewer = await makeUser('viewer')
  const outsider = await makeUser('researcher')
  const study = await makeStudy(researcher, [viewer])
  const other = await makeStudy(outsider)
  const t = await execute(createTaskTemplate, researcher, {
    studyId: study.id,
    name: 'Dose',
    systemPrompt: 'You are a pharmacist.',
    queryPrompt: 'Dose of {drug}?',
    predictionField: 'Dose',
    explanationField: 'Why',
    match: { mode: 'exact' },
  })
  if (!t.ok) throw new Error(t.error)
  return { researcher, viewer, outsider, study, other, templateId: t.data.id }
}

describe("a protocol's own parts of the study pages (generic operations, the plugin's views)", () => {
  it("the study page's protocol cards: PXP's templates, with whether the reader may add one", async () => {
    const w = await world()
    const mine = await execute(protocolPanels, w.researcher, { studyId: w.study.id })
    if (!mine.ok) throw new Error(mine.error)
    const pxp = mine.data.find((p) => p.protocol === 'pxp')?.data as {
      templates: Array<{ name: string }>
      canWrite: boolean
    }
    expect(pxp.templates.map((t) => t.name)).toEqual(['Dose'])
    expect(pxp.canWrite).toBe(true)
    const read = await execute(protocolPanels, w.viewer, { studyId: w.study.id })
    if (!read.ok) throw new Error(read.error)
    expect(read.data.find((p) => p.protocol === 'pxp')?.data).toMatchObject({ canWrite: false })
    // Someone outside the study learns nothing (404, as for the study itself).
    expect(await execute(protocolPanels, w.outsider, { studyId: w.study.id })).toMatchObject({ ok: false, status: 404 })
  })

  it('a page under the study: the template of this study, the form for writers; anything else is 404', async () => {
    const w = await world()
    const page = (actor: typeof w.viewer, protocol: string, path: string[], studyId = w.study.id) =>
      execute(protocolPage, actor, { studyId, protocol, path })
    expect(await page(w.viewer, 'pxp', ['templates', w.templateId])).toMatchObject({
      ok: true,
      data: {
        protocol: 'pxp',
        title: 'Dose',
        data: { page: 'template', template: { spec: { predictionField: 'Dose' } } },
      },
    })
    expect(await page(w.researcher, 'pxp', ['templates', 'new'])).toMatchObject({
      ok: true,
      data: { data: { page: 'new' } },
    })
    // Viewers read templates but may not open the form that adds one.
    expect(await page(w.viewer, 'pxp', ['templates', 'new'])).toMatchObject({ ok: false, status: 403 })
    // A template of another study is not found under this one, nor by an outsider.
    expect(await page(w.outsider, 'pxp', ['templates', w.templateId], w.other.id)).toMatchObject({ status: 404 })
    expect(await page(w.outsider, 'pxp', ['templates', w.templateId])).toMatchObject({ status: 404 })
    expect(await page(w.viewer, 'pxp', ['nothing-here'])).toMatchObject({ status: 404 })
    expect(await page(w.viewer, 'no-such-protocol', ['templates', 'new'])).toMatchObject({ status: 404 })
    // A protocol without pages of its own (EVINCE) answers 404 too.
    expect(await page(w.viewer, 'evince', ['templates', 'new'])).toMatchObject({ status: 404 })
  })

  it("the set-up form's study data comes from the protocol: PXP's template choices, {} for others", async () => {
    const w = await world()
    expect(await execute(setupFormData, w.researcher, { studyId: w.study.id, protocol: 'pxp' })).toEqual({
      ok: true,
      data: { extra: { templates: [{ value: w.templateId, label: 'Dose' }] } },
    })
    expect(await execute(setupFormData, w.researcher, { studyId: w.study.id, protocol: 'evince' })).toEqual({
      ok: true,
      data: { extra: {} },
    })
    expect(await execute(setupFormData, w.viewer, { studyId: w.study.id, protocol: 'pxp' })).toMatchObject({
      ok: false,
      status: 403,
    })
  })
})
