import { z } from 'zod'
import { jsonText } from '@/lib/server/input'
import type { Actor } from '@/lib/server/actor'
import { hasScope } from '@/lib/server/auth/roles'
import type { Prisma } from '@/lib/generated/prisma/client'
import { maskSecret, seal } from '@/lib/server/crypto'
import { type Db, db, type Tx } from '@/lib/server/db'
import { type HeaderMap, headerColumns, headersOfRow, publicHeaders } from '@/lib/server/llm/header-secrets'
import { refusalForRestrictedUrl } from '@/lib/server/llm/hosts'
import { DEMO_CONNECTION_ID } from '@/lib/server/llm/runtime'
import { badRequest, conflict, forbidden, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { id, requireStudyAccess, studiesWhere } from '@/lib/server/services/studies'

export const PROVIDERS = ['openai', 'azure', 'openai-compatible', 'demo'] as const
export const PROVIDER_LABELS: Record<(typeof PROVIDERS)[number], string> = {
  openai: 'OpenAI',
  azure: 'Azure OpenAI (v1 API)',
  'openai-compatible': 'OpenAI-compatible (vLLM, Ollama, LM Studio, llama.cpp, OpenRouter …)',
  demo: 'Simulated demo model (offline, rule-based)',
}
export const DEFAULT_BASE_URLS: Partial<Record<(typeof PROVIDERS)[number], string>> = {
  openai: 'https://api.openai.com/v1',
}

const FORBIDDEN_HEADERS = /^(authorization|api-key|host|content-length|content-type|connection|cookie)$/i

/** Extra headers arrive as a JSON object (REST) or its text (a form field). */
const headersInput = jsonText(
  z
    .record(
      z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'Header names use letters, digits and dashes.'),
      z.string().max(1000),
      { error: 'Extra headers must be a JSON object of strings, e.g. {"X-Team": "radiology"}.' },
    )
    .refine((h) => Object.keys(h).length <= 20, 'At most 20 extra headers.')
    .refine((h) => !Object.keys(h).some((k) => FORBIDDEN_HEADERS.test(k)), {
      message: 'Authorization, api-key, host, cookie and content headers are set by Parley; remove them.',
    }),
  { value: {} },
)

const optionalInt = (min: number, max: number) =>
  z.preprocess((v) => (v === '' || v === null ? undefined : v), z.coerce.number().int().min(min).max(max).optional())

/** A limit a change may remove: absent keeps it, null or empty (the form's "Empty: no limit") removes it. */
const clearableInt = (min: number, max: number) =>
  z.preprocess((v) => (v === '' ? null : v), z.union([z.null(), z.coerce.number().int().min(min).max(max)]).optional())

const baseUrl = z
  .string({ error: 'Enter the base URL.' })
  .trim()
  .max(500)
  .pipe(z.url({ protocol: /^https?$/, message: 'Enter an http(s) URL, e.g. http://localhost:11434/v1' }))
  .transform((u) => u.replace(/\/+$/, ''))

const fields = {
  name: z.string({ error: 'Name the connection.' }).trim().min(1, 'Name the connection.').max(100),
  provider: z.enum(PROVIDERS, { message: `Provider must be one of: ${PROVIDERS.join(', ')}.` }),
  defaultModel: z.string({ error: 'Enter a default model.' }).trim().min(1, 'Enter a default model.').max(200),
  apiVersion: z.string().trim().max(50).optional(),
  extraHeaders: headersInput.default({}),
  timeoutMs: z.coerce.number().int().min(1000).max(600_000).default(60_000),
  maxConcurrency: z.coerce.number().int().min(1).max(256).default(4),
  requestsPerMinute: optionalInt(1, 1_000_000),
  tokensPerMinute: optionalInt(1, 100_000_000),
}

export const CreateConnectionInput = z
  .object({
    ...fields,
    baseUrl: baseUrl.optional(),
    apiKey: z.string().trim().max(500).optional(),
    studyId: id.optional(),
  })
  .transform((v, ctx) => {
    const url = v.baseUrl ?? DEFAULT_BASE_URLS[v.provider]
    if (!url && v.provider !== 'demo') {
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: 'Enter the base URL.' })
      return z.NEVER
    }
    return { ...v, baseUrl: url ?? 'builtin:demo' }
  })

/**
 * The columns read for what pages and the API see of a connection. The sealed key never leaves the
 * server; the sealed headers are read only to tell a masked row from one not yet sealed.
 */
export const connectionPublic = {
  id: true,
  studyId: true,
  name: true,
  provider: true,
  baseUrl: true,
  apiKeyLast4: true,
  defaultModel: true,
  apiVersion: true,
  extraHeaders: true,
  extraHeadersEnc: true,
  timeoutMs: true,
  maxConcurrency: true,
  requestsPerMinute: true,
  tokensPerMinute: true,
  restrictedHosts: true,
  createdAt: true,
  updatedAt: true,
  study: { select: { id: true, name: true } },
} as const

type StoredConnection = {
  apiKeyLast4: string | null
  extraHeaders: Prisma.JsonValue
  extraHeadersEnc: string | null
  apiKeyEnc?: string | null
}

/** A connection as people see it: the key as "…abcd", extra header names with masked values. */
export function withMask<T extends StoredConnection>(c: T) {
  const { extraHeadersEnc: _sealed, apiKeyEnc: _key, ...rest } = c
  return { ...rest, extraHeaders: publicHeaders(c), apiKeyMasked: maskSecret(c.apiKeyLast4) }
}

/** A connection as the audit log records it: like {@link withMask}, extra headers by name only. */
function auditView<T extends StoredConnection>(c: T) {
  return { ...withMask(c), extraHeaders: Object.keys(publicHeaders(c)).sort() }
}

/**
 * Connections and presets an actor may see: global ones (studyId null), plus those of the studies
 * they may read (every study with studies:read-all). Using or changing one of a study needs write
 * access to it (`usableConnection`).
 */
export function visibleConnections(actor: Actor) {
  if (hasScope(actor.role, 'studies:read-all')) return {}
  return { OR: [{ studyId: null }, { study: studiesWhere(actor, 'read') }] }
}

/** Where a new connection or preset may live, as select options: "Everyone" needs manage-global. */
export async function ownerOptions(actor: Actor): Promise<Array<{ value: string; label: string }>> {
  const studies = await db.study.findMany({
    where: { ...studiesWhere(actor, 'write'), archivedAt: null },
    select: { id: true, name: true },
    orderBy: { name: 'asc' },
  })
  return [
    ...(hasScope(actor.role, 'connections:manage-global') ? [{ value: '', label: 'Everyone (global)' }] : []),
    ...studies.map((s) => ({ value: s.id, label: `Study: ${s.name}` })),
  ]
}

/**
 * The owner a new connection starts with: the study asked for (`?studyId=`, e.g. from a study page)
 * when the actor may own connections there, else the study they are working in (the study of their
 * latest change, per the audit log), else the first option. '' is global (admins).
 */
export async function defaultOwner(
  actor: Actor,
  owners: ReadonlyArray<{ value: string }>,
  requested?: string,
): Promise<string | undefined> {
  const allowed = new Set(owners.map((o) => o.value))
  if (requested !== undefined && allowed.has(requested)) return requested
  const recent = await db.auditLog.findMany({
    where: { actorUserId: actor.userId || '-', studyId: { not: null } },
    orderBy: { createdAt: 'desc' },
    select: { studyId: true },
    take: 20,
  })
  const working = recent.find((r) => r.studyId && allowed.has(r.studyId))?.studyId
  return working ?? owners[0]?.value
}

/**
 * Move a connection to another study, or make it global (admins): the actor must be able to change
 * it where it is and to own connections where it goes. Its key and settings move with it; runs and
 * preset versions that named it keep naming it.
 */
export const moveConnection = defineOperation({
  name: 'connections.move',
  scope: 'connections:manage',
  input: z.object({
    connectionId: id,
    /** The study it moves to; '' or absent makes it global (admins only). */
    studyId: z.preprocess((v) => (v === '' ? undefined : v), id.optional()),
  }),
  async run(actor, { connectionId, studyId }) {
    return db.$transaction(async (tx) => {
      const before = await editableConnection(tx, actor, connectionId)
      if (before.id === DEMO_CONNECTION_ID)
        throw badRequest('The built-in demo model is available to everyone; it does not move.')
      await assertCanOwn(tx, actor, studyId)
      const to = studyId ?? null
      if (before.studyId === to)
        return withMask(
          await tx.llmConnection.findUniqueOrThrow({ where: { id: connectionId }, select: connectionPublic }),
        )
      const row = await tx.llmConnection.update({
        where: { id: connectionId },
        data: { studyId: to },
        select: connectionPublic,
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'connection.move',
        resourceType: 'connection',
        resourceId: row.id,
        studyId: to ?? before.studyId,
        before: { studyId: before.studyId },
        after: { studyId: to },
      })
      return withMask(row)
    })
  },
})

/**
 * A connection the actor may use (send requests on its key): a global one, or one of a study where
 * they may write. 404 when they cannot see it, 403 when they only read its study.
 */
export async function usableConnection(actor: Actor, connectionId: string, client: Tx | typeof db = db) {
  const row = await client.llmConnection.findFirst({ where: { id: connectionId, ...visibleConnections(actor) } })
  if (!row) throw notFound('Connection')
  if (row.studyId) await requireStudyAccess(client, actor, row.studyId, 'write')
  return row
}

/** The name and default model of each connection in `refs` (ids of removed connections are left out). */
export async function connectionNames(
  refs: ReadonlyArray<{ connectionId: string }>,
): Promise<Record<string, { name: string; defaultModel: string; provider: string }>> {
  const ids = [...new Set(refs.map((r) => r.connectionId))]
  if (!ids.length) return {}
  const rows = await db.llmConnection.findMany({
    where: { id: { in: ids } },
    select: { id: true, name: true, defaultModel: true, provider: true },
  })
  return Object.fromEntries(rows.map(({ id, ...c }) => [id, c]))
}

/** Load a connection the actor may change (global: needs connections:manage-global; else write in its study). */
async function editableConnection(tx: Tx | Db, actor: Actor, connectionId: string) {
  const row = await usableConnection(actor, connectionId, tx)
  if (!row.studyId && !hasScope(actor.role, 'connections:manage-global')) {
    throw forbidden('Only admins change global connections. Create one in your study instead.')
  }
  return row
}

async function assertCanOwn(tx: Tx, actor: Actor, studyId: string | undefined) {
  if (studyId) await requireStudyAccess(tx, actor, studyId, 'write')
  else if (!hasScope(actor.role, 'connections:manage-global')) {
    throw forbidden('Only admins create global connections. Choose one of your studies.')
  }
}

function keyParts(apiKey: string | undefined) {
  if (!apiKey) return {}
  return { apiKeyEnc: seal(apiKey), apiKeyLast4: apiKey.slice(-4) }
}

export const listConnections = defineOperation({
  name: 'connections.list',
  scope: 'connections:manage',
  input: z.object({ studyId: id.optional() }),
  async run(actor, { studyId }) {
    const rows = await db.llmConnection.findMany({
      // AND, not a spread: both filters are an OR, and the second must not replace the first.
      where: { AND: [visibleConnections(actor), studyId ? { OR: [{ studyId }, { studyId: null }] } : {}] },
      select: connectionPublic,
      orderBy: [{ studyId: 'asc' }, { name: 'asc' }],
    })
    return rows.map(withMask)
  },
})

export const getConnection = defineOperation({
  name: 'connections.get',
  scope: 'connections:manage',
  input: z.object({ connectionId: id }),
  async run(actor, { connectionId }) {
    const row = await db.llmConnection.findFirst({
      where: { id: connectionId, ...visibleConnections(actor) },
      select: connectionPublic,
    })
    if (!row) throw notFound('Connection')
    return withMask(row)
  },
})

export const createConnection = defineOperation({
  name: 'connections.create',
  scope: 'connections:manage',
  input: CreateConnectionInput,
  async run(actor, input) {
    const restrictedHosts = restrictedFor(actor, input.provider)
    if (restrictedHosts) await assertPublicAddress(input.baseUrl)
    return db.$transaction(async (tx) => {
      await assertCanOwn(tx, actor, input.studyId)
      const { apiKey, extraHeaders, ...rest } = input
      assertProviderFields(input.provider, apiKey)
      const row = await tx.llmConnection.create({
        data: {
          ...rest,
          ...keyParts(apiKey),
          ...headerColumns(extraHeaders),
          restrictedHosts,
          createdById: actor.userId || null,
        },
        select: connectionPublic,
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'connection.create',
        resourceType: 'connection',
        resourceId: row.id,
        studyId: row.studyId,
        after: auditView(row),
      })
      return withMask(row)
    })
  },
})

export const updateConnection = defineOperation({
  name: 'connections.update',
  scope: 'connections:manage',
  input: z.object({
    connectionId: id,
    name: fields.name.optional(),
    baseUrl: baseUrl.optional(),
    /** Empty or absent keeps the stored key; send clearApiKey to remove it. */
    apiKey: z.string().trim().max(500).optional(),
    clearApiKey: z.union([z.boolean(), z.literal('on')]).optional(),
    defaultModel: fields.defaultModel.optional(),
    apiVersion: fields.apiVersion,
    /** Empty or absent keeps the stored headers; an object replaces them all ({} removes them). */
    extraHeaders: z.preprocess((v) => (typeof v === 'string' && !v.trim() ? undefined : v), headersInput.optional()),
    timeoutMs: z.coerce.number().int().min(1000).max(600_000).optional(),
    maxConcurrency: z.coerce.number().int().min(1).max(256).optional(),
    /** Absent keeps the limit; null (or empty) removes it. */
    requestsPerMinute: clearableInt(1, 1_000_000),
    tokensPerMinute: clearableInt(1, 100_000_000),
  }),
  async run(actor, { connectionId, apiKey, clearApiKey, extraHeaders, ...changes }) {
    // A new address is checked before the transaction (it may resolve a name).
    const current = await editableConnection(db, actor, connectionId)
    const url = changes.baseUrl
    if (url !== undefined && url !== current.baseUrl && restrictedFor(actor, current.provider)) {
      await assertPublicAddress(url)
    }
    return db.$transaction(async (tx) => {
      const before = await editableConnection(tx, actor, connectionId)
      const moved = destinationChanges(before, { ...changes, extraHeaders })
      assertSecretsReentered(before, moved, { apiKey, clearApiKey: !!clearApiKey, extraHeaders })
      const data = {
        ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)),
        // Whoever sets the address decides whether it may be internal: a new address from a non-admin
        // is limited to public ones; an admin saving the address (new or the same) vouches for it.
        ...(moved.includes('baseUrl') || (changes.baseUrl !== undefined && !restrictedFor(actor, before.provider))
          ? { restrictedHosts: restrictedFor(actor, before.provider) }
          : {}),
        ...(clearApiKey ? { apiKeyEnc: null, apiKeyLast4: null } : keyParts(apiKey)),
        ...(extraHeaders ? headerColumns(extraHeaders) : {}),
      }
      const row = await tx.llmConnection.update({ where: { id: connectionId }, data, select: connectionPublic })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'connection.update',
        resourceType: 'connection',
        resourceId: row.id,
        studyId: row.studyId,
        before: auditView(before),
        after: {
          ...auditView(row),
          ...(moved.length ? { destinationChanged: moved } : {}),
          keyReentered: !!apiKey && !clearApiKey,
        },
      })
      return withMask(row)
    })
  },
})

export const deleteConnection = defineOperation({
  name: 'connections.delete',
  scope: 'connections:manage',
  input: z.object({ connectionId: id }),
  async run(actor, { connectionId }) {
    return db.$transaction(async (tx) => {
      const before = await editableConnection(tx, actor, connectionId)
      const used = await tx.modelPresetVersion.count({ where: { connectionId } })
      if (used)
        throw conflict(
          `Presets use this connection (${used} version${used === 1 ? '' : 's'}); keep it for their history.`,
        )
      await tx.llmConnection.delete({ where: { id: connectionId } })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'connection.delete',
        resourceType: 'connection',
        resourceId: connectionId,
        studyId: before.studyId,
        before: auditView(before),
      })
      return { deleted: true }
    })
  },
})

/**
 * A connection whose address someone without connections:internal-hosts chose reaches public
 * addresses only. The demo provider always talks to Parley's own built-in server, whatever its URL.
 */
function restrictedFor(actor: Actor, provider: string): boolean {
  return provider !== 'demo' && !hasScope(actor.role, 'connections:internal-hosts')
}

async function assertPublicAddress(url: string) {
  const why = await refusalForRestrictedUrl(url)
  if (why) throw badRequest(why, { baseUrl: [why] })
}

/** The settings that decide where a connection's key and headers are sent. */
type Destination = { baseUrl?: string; apiVersion?: string; extraHeaders?: HeaderMap }

/** Which of them an update changes (a resubmitted identical value is no change). */
function destinationChanges(
  before: {
    baseUrl: string
    apiVersion: string | null
    extraHeaders: Prisma.JsonValue
    extraHeadersEnc: string | null
  },
  next: Destination,
): string[] {
  const moved: string[] = []
  if (next.baseUrl !== undefined && next.baseUrl !== before.baseUrl) moved.push('baseUrl')
  if (next.apiVersion !== undefined && (next.apiVersion || null) !== (before.apiVersion || null))
    moved.push('apiVersion')
  if (next.extraHeaders !== undefined) {
    let stored: HeaderMap | undefined
    try {
      stored = headersOfRow(before)
    } catch {
      // Unreadable (the secret changed): whatever is sent now counts as a change.
    }
    if (!stored || !sameHeaders(stored, next.extraHeaders)) moved.push('extraHeaders')
  }
  return moved
}

function sameHeaders(a: HeaderMap, b: HeaderMap): boolean {
  const ka = Object.keys(a)
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k])
}

/**
 * Stored secrets never follow a connection to a new destination: changing the base URL, the API
 * version or the extra headers needs the API key entered again (anyone could otherwise point an
 * admin's connection at their own server and press Test), and changing the base URL or API version
 * needs the stored extra headers entered again too. Applies to everyone, creators and admins included.
 */
function assertSecretsReentered(
  before: { apiKeyEnc: string | null; extraHeaders: Prisma.JsonValue; extraHeadersEnc: string | null },
  moved: string[],
  given: { apiKey?: string; clearApiKey: boolean; extraHeaders?: HeaderMap },
) {
  if (!moved.length) return
  const fieldErrors: Record<string, string[]> = {}
  if (before.apiKeyEnc && !given.apiKey && !given.clearApiKey) {
    fieldErrors.apiKey = ['Enter the API key again to change where it is sent.']
  }
  const headersStored = Object.keys(publicHeaders(before)).length > 0
  if (headersStored && given.extraHeaders === undefined && moved.some((m) => m !== 'extraHeaders')) {
    fieldErrors.extraHeaders = ['Enter the extra headers again to change where they are sent ({} removes them).']
  }
  if (Object.keys(fieldErrors).length) {
    throw badRequest(
      `Changing ${moved.join(', ')} sends the stored secrets somewhere new: enter them again.`,
      fieldErrors,
    )
  }
}

export function assertProviderFields(provider: string, apiKey: string | undefined) {
  if (provider === 'openai' && !apiKey) throw badRequest('OpenAI needs an API key.', { apiKey: ['Enter the API key.'] })
}
