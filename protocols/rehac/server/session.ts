import { z } from 'zod'
import { fnv1a } from '@/lib/llm/text'
import { type ProtocolError, replay } from '@/lib/protocols/types'
import { badRequest, sql } from '@/lib/server/sdk'
import { type RehacMessage, type RehacState, rehac, rehacConfig } from '@/protocols/rehac/core/protocol'
import { rehacEnvData, sqlSlug } from '@/protocols/rehac/server/agents'

/**
 * What the plugin's hooks and ReHAC's own operations (server/operations.ts) share: the session's config
 * and the run's extras, the SQL environment of a snapshot, and a refused step as a 400 on its field.
 * Its own module so that the operations need not import the plugin (which loads them).
 */

// ───────────────────────────── the run's extras ─────────────────────────────

export const RehacExtras = z.object({
  /** Collection: the coverage scheduler forks episodes until every reached prefix has both branches. */
  tree: z.boolean().default(false),
  /** Human samples per human branch (real annotators may repeat a path; simulated ones: 1). */
  humanSamples: z.number().int().min(1).max(5).default(1),
})
export type RehacExtras = z.output<typeof RehacExtras>

/** Longest example trajectory the prompt policy is shown (longer finished trajectories are not picked). */
export const MAX_EXAMPLE_CHARS = 20_000

/**
 * The prompt policy's two few-shot examples, fixed when the run is set up (server/examples.ts):
 * `study`: two finished trajectories of the study's own ReHAC data, with the sessions they came from;
 * `parley-default`: the built-in pair (agents.ts PROMPT_EXAMPLES), and why the study's data gave none.
 */
export const PromptExamplesConfig = z.discriminatedUnion('source', [
  z.object({
    source: z.literal('study'),
    /** Example 1's and example 2's sessions. */
    sessionIds: z.tuple([z.string().min(1).max(100), z.string().min(1).max(100)]),
    example1: z.string().min(1).max(MAX_EXAMPLE_CHARS),
    example2: z.string().min(1).max(MAX_EXAMPLE_CHARS),
  }),
  z.object({ source: z.literal('parley-default'), reason: z.string().max(500) }),
])
export type PromptExamplesConfig = z.output<typeof PromptExamplesConfig>

/**
 * An imported episode's reward as its file gave it (the released `f1` and `em`): T and EM of the
 * session, since an imported task has no gold answer to score against. `idx` and `line` say where it
 * came from.
 */
export const ImportedReward = z.object({
  T: z.number().min(0).max(1),
  em: z.boolean(),
  idx: z.number().int().min(0).optional(),
  line: z.number().int().min(1),
})
export type ImportedReward = z.output<typeof ImportedReward>

export const RehacStoredConfig = rehacConfig.extend({
  collection: RehacExtras.optional(),
  examples: PromptExamplesConfig.optional(),
  imported: ImportedReward.optional(),
})

/**
 * A stored config → the protocol's config, the collection extras, the prompt policy's examples and an
 * imported episode's reward.
 */
export function splitStoredConfig(raw: unknown) {
  const { collection, examples, imported, ...config } = RehacStoredConfig.parse(raw ?? {})
  return {
    config: rehacConfig.parse(config),
    extras: RehacExtras.parse(collection ?? {}),
    examples: examples ?? null,
    imported: imported ?? null,
  }
}

/** A stored session's state (its messages replayed on its stored config) and an imported episode's reward. */
export function replayStored(s: { config: unknown; instance: unknown; messages: { body: unknown }[] }) {
  const { config, imported } = splitStoredConfig(s.config)
  const state = replay(
    rehac,
    config,
    s.instance as never,
    s.messages.map((m) => m.body as RehacMessage),
  ) as RehacState
  return { state, imported }
}

export function sessionConfig(raw: unknown) {
  const { config, extras, examples, imported } = splitStoredConfig(raw)
  return { config, extras: { ...extras, examples, imported } }
}
export type RehacSessionExtras = ReturnType<typeof sessionConfig>['extras']

// ───────────────────────────── the SQL environment ─────────────────────────────

const loaded = new Map<string, Promise<void>>()
/** Loads the task set's schema once per process (content-addressed: the same file is the same schema). */
function ensureSchema(slug: string, schemaSql: string): Promise<void> {
  let p = loaded.get(slug)
  if (!p) {
    p = (async () => {
      const env = await import('@/protocols/rehac/server/sql-env')
      // Loaded already (by another process, or before a restart) when its schema is in this database and
      // its reader can log in with the current secret; roles are cluster-wide, so the role alone says nothing.
      const { rows } = await sql().query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [env.sqlNames(slug).schema])
      if (rows.length) {
        const probe = await env.runSqlStatement(slug, 'SELECT 1').catch(() => null)
        if (probe?.ok) return
      }
      await env.loadSqlSchema(slug, schemaSql)
    })().catch((err) => {
      loaded.delete(slug)
      throw err
    })
    loaded.set(slug, p)
  }
  return p
}

/** The SQL environment of a session's snapshot, its schema loaded (the environment's step, a person's preview). */
export async function sqlEnvOf(instance: unknown) {
  const { schemaSql } = rehacEnvData.parse(instance)
  if (!schemaSql) throw new Error('the SQL task has no schema: import it with its SQL file')
  const slug = sqlSlug(schemaSql, fnv1a)
  await ensureSchema(slug, schemaSql)
  return { env: await import('@/protocols/rehac/server/sql-env'), slug }
}

// ───────────────────────────── a refused step ─────────────────────────────

const FIELD_OF: Record<string, string> = {
  'invalid-action': 'action.arg',
}

/** A step the protocol refused, as a 400 on the field it is about (sending it, or previewing it). */
export function refusedStep(err: ProtocolError) {
  const field = err.code === 'invalid-action' && /takes/.test(err.message) ? 'action.type' : FIELD_OF[err.code]
  return badRequest(err.message, field ? { [field]: [err.message] } : undefined)
}
