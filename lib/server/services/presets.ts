import { z } from 'zod'
import { jsonText } from '@/lib/server/input'
import type { Actor } from '@/lib/server/actor'
import { hasScope } from '@/lib/server/auth/roles'
import { db, type Tx } from '@/lib/server/db'
import { forbidden, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { usableConnection, visibleConnections } from '@/lib/server/services/connections'
import { id, requireStudyAccess } from '@/lib/server/services/studies'

const optionalNumber = (min: number, max: number, int = false) =>
  z.preprocess(
    (v) => (v === '' || v === null ? undefined : v),
    (int ? z.coerce.number().int() : z.coerce.number()).min(min).max(max).optional(),
  )

/** The settings that make up one version of a preset. Changing any of them makes a new version. */
export const PresetSettings = z.object({
  connectionId: id,
  model: z.string({ error: 'Enter a model.' }).trim().min(1, 'Enter a model.').max(200),
  temperature: optionalNumber(0, 2),
  topP: optionalNumber(0, 1),
  maxTokens: optionalNumber(1, 1_000_000, true),
  seed: optionalNumber(-2_147_483_648, 2_147_483_647, true),
  systemPrompt: z.string().max(100_000).default(''),
  responseFormat: z.enum(['text', 'json_object', 'json_schema']).default('text'),
  jsonSchema: jsonText(
    z.record(z.string(), z.unknown(), { error: 'The JSON schema must be a JSON object.' }).optional(),
    { value: undefined },
  ),
  vision: z
    .union([z.boolean(), z.literal('on')])
    .optional()
    .transform((v) => v === true || v === 'on'),
})

const versionSelect = {
  id: true,
  version: true,
  connectionId: true,
  model: true,
  temperature: true,
  topP: true,
  maxTokens: true,
  seed: true,
  systemPrompt: true,
  responseFormat: true,
  jsonSchema: true,
  vision: true,
  createdAt: true,
  connection: { select: { id: true, name: true, provider: true } },
} as const

/**
 * Presets follow the same rule as connections: global, or owned by a study; seen with read access
 * to that study, created and changed with write access.
 */
const visiblePresets = visibleConnections

async function assertConnectionUsable(tx: Tx, actor: Actor, connectionId: string) {
  await usableConnection(actor, connectionId, tx)
}

export const listPresets = defineOperation({
  name: 'presets.list',
  scope: 'connections:manage',
  input: z.object({ studyId: id.optional() }),
  async run(actor, { studyId }) {
    return db.modelPreset.findMany({
      // AND, not a spread: both filters are an OR, and the second must not replace the first.
      where: { AND: [visiblePresets(actor), studyId ? { OR: [{ studyId }, { studyId: null }] } : {}] },
      select: {
        id: true,
        name: true,
        studyId: true,
        study: { select: { name: true } },
        updatedAt: true,
        versions: { select: versionSelect, orderBy: { version: 'desc' }, take: 1 },
        _count: { select: { versions: true } },
      },
      orderBy: { name: 'asc' },
    })
  },
})

export const getPreset = defineOperation({
  name: 'presets.get',
  scope: 'connections:manage',
  input: z.object({ presetId: id }),
  async run(actor, { presetId }) {
    const preset = await db.modelPreset.findFirst({
      where: { id: presetId, ...visiblePresets(actor) },
      select: {
        id: true,
        name: true,
        studyId: true,
        study: { select: { name: true } },
        versions: { select: versionSelect, orderBy: { version: 'desc' } },
      },
    })
    if (!preset) throw notFound('Preset')
    return preset
  },
})

export const createPreset = defineOperation({
  name: 'presets.create',
  scope: 'connections:manage',
  input: PresetSettings.extend({
    name: z.string({ error: 'Name the preset.' }).trim().min(1, 'Name the preset.').max(100),
    studyId: id.optional(),
  }),
  async run(actor, { name, studyId, ...settings }) {
    return db.$transaction(async (tx) => {
      if (studyId) await requireStudyAccess(tx, actor, studyId, 'write')
      else if (!hasScope(actor.role, 'connections:manage-global')) {
        throw forbidden('Only admins create global presets. Choose one of your studies.')
      }
      await assertConnectionUsable(tx, actor, settings.connectionId)
      const preset = await tx.modelPreset.create({
        data: {
          name,
          studyId: studyId ?? null,
          versions: {
            create: {
              ...settings,
              jsonSchema: settings.jsonSchema as object | undefined,
              version: 1,
              createdById: actor.userId || null,
            },
          },
        },
        select: { id: true, name: true, versions: { select: versionSelect } },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'preset.create',
        resourceType: 'preset',
        resourceId: preset.id,
        studyId,
        after: { name, ...settings },
      })
      return preset
    })
  },
})

/** A changed preset is a new version; old versions stay for the sessions that used them. */
export const updatePreset = defineOperation({
  name: 'presets.update',
  scope: 'connections:manage',
  input: PresetSettings.extend({ presetId: id }),
  async run(actor, { presetId, ...settings }) {
    return db.$transaction(async (tx) => {
      const preset = await tx.modelPreset.findFirst({ where: { id: presetId, ...visiblePresets(actor) } })
      if (!preset) throw notFound('Preset')
      if (preset.studyId) await requireStudyAccess(tx, actor, preset.studyId, 'write')
      else if (!hasScope(actor.role, 'connections:manage-global')) {
        throw forbidden('Only admins change global presets.')
      }
      await assertConnectionUsable(tx, actor, settings.connectionId)
      // Serialise concurrent edits of one preset so version numbers stay unique and gapless.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${presetId}))`
      const latest = await tx.modelPresetVersion.findFirst({ where: { presetId }, orderBy: { version: 'desc' } })
      const same =
        latest &&
        JSON.stringify(comparable(latest)) ===
          JSON.stringify(comparable({ ...settings, jsonSchema: settings.jsonSchema ?? null }))
      if (same) return { id: preset.id, version: latest.version, created: false }
      const version = (latest?.version ?? 0) + 1
      const row = await tx.modelPresetVersion.create({
        data: {
          ...settings,
          jsonSchema: settings.jsonSchema as object | undefined,
          presetId,
          version,
          createdById: actor.userId || null,
        },
      })
      await tx.modelPreset.update({ where: { id: presetId }, data: { updatedAt: new Date() } })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'preset.new-version',
        resourceType: 'preset',
        resourceId: presetId,
        studyId: preset.studyId,
        before: latest ? comparable(latest) : undefined,
        after: { version, ...comparable(row) },
      })
      return { id: preset.id, version, created: true }
    })
  },
})

function comparable(v: Record<string, unknown>) {
  const keys = [
    'connectionId',
    'model',
    'temperature',
    'topP',
    'maxTokens',
    'seed',
    'systemPrompt',
    'responseFormat',
    'jsonSchema',
    'vision',
  ]
  return Object.fromEntries(keys.map((k) => [k, v[k] ?? null]))
}
