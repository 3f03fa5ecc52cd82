import { z } from 'zod'
import type { Actor } from '@/lib/server/actor'
import { hasScope } from '@/lib/server/auth/roles'
import { SecretUnreadableError } from '@/lib/server/crypto'
import { db } from '@/lib/server/db'
import { badRequest, notFound } from '@/lib/server/errors'
import { LlmError, clientFor, forgetPrices, recordedChat } from '@/lib/server/llm/runtime'
import { defineOperation } from '@/lib/server/operation'
import { pageInput, pageOf, skipTake, boolParam } from '@/lib/server/pagination'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { usableConnection } from '@/lib/server/services/connections'
import { id, studiesWhere } from '@/lib/server/services/studies'

/** What a restricted connection's failure says instead of the endpoint's own text. */
const GENERIC_FAILURE: Partial<Record<LlmError['kind'], string>> = {
  timeout: 'no answer in time',
  rate_limited: 'the endpoint is rate limiting',
  server: 'the endpoint reported a server error',
  connection: 'could not connect to the endpoint',
  truncated: 'the response was cut off',
  bad_response: 'the response was not valid',
  auth: 'the endpoint refused the credentials',
  client: 'the endpoint refused the request',
  aborted: 'the call was cancelled',
}

/**
 * A failed model call in words a person can act on (kind, HTTP status, provider message). For a
 * restricted connection (its address chosen by a non-admin) only the kind, the status and a generic
 * phrase: the text of whatever answered is not reflected to the page.
 */
export function describeLlmError(err: unknown, opts: { restricted?: boolean } = {}): string {
  if (err instanceof LlmError) {
    const head = `${err.kind}${err.httpStatus ? ` (HTTP ${err.httpStatus})` : ''}`
    const generic = opts.restricted ? GENERIC_FAILURE[err.kind] : undefined
    return `${head}: ${generic ?? err.message}`
  }
  if (err instanceof SecretUnreadableError) return err.message
  return err instanceof Error ? err.message : String(err)
}

/** A single prompt, with an optional system message, as chat messages. */
export function promptMessages(prompt: string, system?: string) {
  return [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user' as const, content: prompt }]
}

/**
 * "Test connection": list the models, then send a one-token request (recorded in the call log).
 * Failures are answered as data, with the provider's real error, so the page can show them.
 */
export const testConnection = defineOperation({
  name: 'connections.test',
  scope: 'connections:manage',
  input: z.object({ connectionId: id }),
  async run(actor, { connectionId }) {
    const row = await usableConnection(actor, connectionId)
    const started = Date.now()
    let models: string[] | undefined
    let modelsError: string | undefined
    try {
      models = await (await clientFor(row)).listModels({ signal: AbortSignal.timeout(row.timeoutMs) })
    } catch (err) {
      modelsError = describeLlmError(err, { restricted: row.restrictedHosts })
    }
    try {
      const r = await recordedChat(
        row,
        { model: row.defaultModel, messages: [{ role: 'user', content: 'Reply with the word OK.' }], max_tokens: 1 },
        { purpose: 'connection-test', userId: actor.userId || null, studyId: row.studyId, redactOutput: true },
      )
      return {
        ok: true as const,
        models,
        modelsError,
        reply: r.text,
        model: r.model,
        latencyMs: Date.now() - started,
        callIds: r.callIds,
      }
    } catch (err) {
      return {
        ok: false as const,
        models,
        modelsError,
        error: describeLlmError(err, { restricted: row.restrictedHosts }),
        latencyMs: Date.now() - started,
      }
    }
  },
})

/**
 * The models a connection lists (GET /models), for the preset form's model field; its default model
 * comes first. A provider that cannot list them answers with the error (and the default model), so
 * the form still offers something and says why the list is short.
 */
export const listConnectionModels = defineOperation({
  name: 'connections.models',
  scope: 'connections:manage',
  input: z.object({ connectionId: id }),
  async run(actor, { connectionId }) {
    const row = await usableConnection(actor, connectionId)
    try {
      const listed = await (await clientFor(row)).listModels({ signal: AbortSignal.timeout(row.timeoutMs) })
      const models = [...new Set([row.defaultModel, ...[...listed].sort()])]
      return { defaultModel: row.defaultModel, models, error: null as string | null }
    } catch (err) {
      return {
        defaultModel: row.defaultModel,
        models: [row.defaultModel],
        error: describeLlmError(err, { restricted: row.restrictedHosts }),
      }
    }
  },
})

export const runPrompt = defineOperation({
  name: 'llm.run-prompt',
  scope: 'connections:manage',
  input: z.object({
    connectionId: id,
    model: z.string().trim().max(200).optional(),
    system: z.string().max(100_000).optional(),
    prompt: z.string({ error: 'Write a prompt.' }).trim().min(1, 'Write a prompt.').max(100_000),
    temperature: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().min(0).max(2).optional()),
    maxTokens: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(100_000).optional()),
    replay: boolParam.default(false),
  }),
  async run(actor, input) {
    const row = await usableConnection(actor, input.connectionId)
    try {
      const r = await recordedChat(
        row,
        {
          model: input.model || row.defaultModel,
          messages: promptMessages(input.prompt, input.system),
          ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
          ...(input.maxTokens !== undefined ? { max_tokens: input.maxTokens } : {}),
        },
        {
          purpose: 'playground',
          userId: actor.userId || null,
          studyId: row.studyId,
          replay: input.replay,
          redactOutput: true,
        },
      )
      return {
        text: r.text,
        model: r.model,
        usage: r.usage,
        latencyMs: r.latencyMs,
        cached: r.cached,
        simulated: r.simulated,
        callIds: r.callIds,
      }
    } catch (err) {
      throw badRequest(`The model call failed: ${describeLlmError(err, { restricted: row.restrictedHosts })}`)
    }
  },
})

/**
 * Calls an actor may read: all with calls:read-all; else those of the studies they may read (their
 * study role, not only their membership) and those they caused themselves.
 */
async function visibleCallsWhere(actor: Actor) {
  if (hasScope(actor.role, 'calls:read-all')) return {}
  const studies = await db.study.findMany({ where: studiesWhere(actor, 'read'), select: { id: true } })
  return { OR: [{ userId: actor.userId }, { studyId: { in: studies.map((s) => s.id) } }] }
}

const callFilters = {
  studyId: id.optional(),
  model: z.string().trim().max(200).optional(),
  status: z.enum(['ok', 'error']).optional(),
  from: z.coerce.date().optional(),
  to: z.coerce.date().optional(),
}

export const listCalls = defineOperation({
  name: 'calls.list',
  scope: 'calls:read',
  input: z.object({ ...pageInput, ...callFilters }),
  async run(actor, { page, pageSize, studyId, model, status, from, to }) {
    const where = {
      AND: [
        await visibleCallsWhere(actor),
        {
          ...(studyId ? { studyId } : {}),
          ...(model ? { modelRequested: model } : {}),
          ...(status ? { status } : {}),
          ...(from || to ? { createdAt: { ...(from ? { gte: from } : {}), ...(to ? { lte: to } : {}) } } : {}),
        },
      ],
    }
    const [items, total, totals] = await Promise.all([
      db.llmCall.findMany({
        where,
        select: {
          id: true,
          createdAt: true,
          purpose: true,
          provider: true,
          modelRequested: true,
          modelReported: true,
          status: true,
          errorKind: true,
          attempt: true,
          tokensIn: true,
          tokensOut: true,
          latencyMs: true,
          ttftMs: true,
          costUsd: true,
          cached: true,
          studyId: true,
          connection: { select: { name: true } },
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        ...skipTake(page, pageSize),
      }),
      db.llmCall.count({ where }),
      // Totals per study and model, computed in PostgreSQL.
      db.llmCall.groupBy({
        by: ['studyId', 'modelRequested'],
        where,
        _count: { _all: true },
        _sum: { tokensIn: true, tokensOut: true, costUsd: true },
        orderBy: [{ studyId: 'asc' }, { modelRequested: 'asc' }],
      }),
    ])
    const studyNames = Object.fromEntries(
      (
        await db.study.findMany({
          where: { id: { in: totals.map((t) => t.studyId).filter((s): s is string => !!s) } },
          select: { id: true, name: true },
        })
      ).map((s) => [s.id, s.name]),
    )
    return {
      ...pageOf(items, total, page, pageSize),
      totals: totals.map((t) => ({
        studyId: t.studyId,
        studyName: t.studyId ? (studyNames[t.studyId] ?? t.studyId) : null,
        model: t.modelRequested,
        calls: t._count._all,
        tokensIn: t._sum.tokensIn ?? 0,
        tokensOut: t._sum.tokensOut ?? 0,
        costUsd: t._sum.costUsd,
      })),
    }
  },
})

export const getCall = defineOperation({
  name: 'calls.get',
  scope: 'calls:read',
  input: z.object({ callId: id }),
  async run(actor, { callId }) {
    const call = await db.llmCall.findFirst({
      where: { AND: [{ id: callId }, await visibleCallsWhere(actor)] },
      include: { connection: { select: { id: true, name: true, provider: true } } },
    })
    if (!call) throw notFound('Call')
    return call
  },
})

export const listPrices = defineOperation({
  name: 'prices.list',
  scope: 'calls:read',
  input: z.object({}),
  async run() {
    return db.modelPrice.findMany({ orderBy: { model: 'asc' } })
  },
})

export const upsertPrice = defineOperation({
  name: 'prices.upsert',
  scope: 'prices:manage',
  input: z.object({
    model: z
      .string({ error: 'Enter a model name.' })
      .trim()
      .min(1, 'Enter a model name.')
      .max(200)
      .regex(/^[^*]+\*?$/, 'Use an exact name or a prefix ending in *, e.g. gpt-4o*'),
    inputPerMTok: z.coerce.number().min(0).max(100_000),
    outputPerMTok: z.coerce.number().min(0).max(100_000),
  }),
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      const before = await tx.modelPrice.findUnique({ where: { model: input.model } })
      const row = await tx.modelPrice.upsert({ where: { model: input.model }, create: input, update: input })
      forgetPrices()
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: before ? 'price.update' : 'price.create',
        resourceType: 'price',
        resourceId: row.id,
        before,
        after: input,
      })
      return row
    })
  },
})

export const deletePrice = defineOperation({
  name: 'prices.delete',
  scope: 'prices:manage',
  input: z.object({ priceId: id }),
  async run(actor, { priceId }) {
    return db.$transaction(async (tx) => {
      const before = await tx.modelPrice.findUnique({ where: { id: priceId } })
      if (!before) throw notFound('Price')
      await tx.modelPrice.delete({ where: { id: priceId } })
      forgetPrices()
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'price.delete',
        resourceType: 'price',
        resourceId: priceId,
        before,
      })
      return { deleted: true }
    })
  },
})
