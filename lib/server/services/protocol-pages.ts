import { z } from 'zod'
import { db } from '@/lib/server/db'
import { allPlugins, pluginFor } from '@/lib/server/engine/plugins'
import { notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { id, requireStudyAccess } from '@/lib/server/services/studies'

/**
 * What a protocol adds to the study pages and the set-up form, for every protocol alike: its card on
 * the study page (`views.studyPanel`), its own pages under the study (`views.studyPage`, at
 * /studies/{id}/p/{protocol}/{...path}) and the study data its set-up form needs (`setup.formData`).
 * The generic pages call these; none of them names a protocol.
 */

const protocolId = z.string().trim().min(1).max(40)

/** A protocol the registry does not know is no page (404), not a server error. */
async function pluginOr404(protocol: string) {
  try {
    return await pluginFor(protocol)
  } catch {
    throw notFound('Page')
  }
}

/** Every protocol's card on a study page that has one, in registry order. */
export const protocolPanels = defineOperation({
  name: 'studies.protocol-panels',
  scope: 'studies:read',
  input: z.object({ studyId: id }),
  async run(actor, { studyId }) {
    await requireStudyAccess(db, actor, studyId, 'read')
    const panels: Array<{ protocol: string; data: unknown }> = []
    for (const plugin of await allPlugins()) {
      const views = await plugin.views()
      if (views.studyPanel) panels.push({ protocol: plugin.protocol.id, data: await views.studyPanel(actor, studyId) })
    }
    return panels
  },
})

/**
 * A page of a protocol under a study (404 when the protocol has no such page), with the study's id and
 * name for its heading. Every account may ask (`studies:pages`); the study decides: the permission the
 * page needs (`views.studyPageNeeds`, `read` by default, whose account half is studies:read), so an
 * annotator account a study made its adjudicator opens that study's adjudication pages and nothing else.
 */
export const protocolPage = defineOperation({
  name: 'studies.protocol-page',
  scope: 'studies:pages',
  input: z.object({
    studyId: id,
    protocol: protocolId,
    path: z.array(z.string().trim().min(1).max(100)).min(1).max(8),
    /** The page URL's search parameters (the plugin validates their values itself). */
    args: z
      .record(z.string().max(40), z.string().max(500))
      .refine((a) => Object.keys(a).length <= 20, 'At most 20 page parameters.')
      .default({}),
  }),
  async run(actor, { studyId, protocol, path, args }) {
    const views = await (await pluginOr404(protocol)).views()
    const study = await requireStudyAccess(db, actor, studyId, views.studyPageNeeds?.(path) ?? 'read')
    const page = views.studyPage ? await views.studyPage(actor, studyId, path, args) : null
    if (!page) throw notFound('Page')
    return { protocol, study: { id: study.id, name: study.name }, ...page }
  },
})

/** What a protocol's set-up form needs of the study besides datasets, models and people. */
export const setupFormData = defineOperation({
  name: 'runs.setup-data',
  scope: 'studies:update',
  input: z.object({ studyId: id, protocol: protocolId }),
  async run(actor, { studyId, protocol }) {
    await requireStudyAccess(db, actor, studyId, 'write')
    const setup = await (await pluginOr404(protocol)).setup()
    return { extra: setup.formData ? await setup.formData(actor, studyId) : {} }
  },
})
