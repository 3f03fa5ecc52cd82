import { z } from 'zod'
import { crossCopy } from '@/lib/cross-copy'

/**
 * Parley's configuration: every environment variable it reads, validated with zod when a process
 * starts (the web server in instrumentation.ts, `parley worker`), so a bad value refuses to start
 * with a message naming the variable instead of running with a silent default
 * (`PARLEY_WORKERS=four` used to run no workers). README "Configuration" and `.env.example` list
 * the same variables. Modules read their values through {@link config}, which parses the current
 * environment (cheap; tests change variables between calls).
 */

const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v)

/** A whole number in [min, max], written in decimal. */
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^\s*\d+\s*$/, `expected a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}`)
      .transform(Number)
      .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
      .optional(),
  )

/** A positive decimal number. */
const positive = () =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^\s*\d+(\.\d+)?\s*$/, 'expected a positive number')
      .transform(Number)
      .pipe(z.number().positive('expected a positive number'))
      .optional(),
  )

const url = (protocols: string[]) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine(
        (v) => {
          try {
            return protocols.includes(new URL(v).protocol)
          } catch {
            return false
          }
        },
        `expected a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
      )
      .optional(),
  )

const flag = () => z.preprocess(blankToUndefined, z.enum(['0', '1'], 'expected 0 or 1').optional())

const text = () => z.preprocess(blankToUndefined, z.string().optional())

/** 32 bytes as 64 hex characters or base64. */
const key32 = () =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine(
        (v) => (/^[0-9a-f]{64}$/i.test(v) ? true : Buffer.from(v, 'base64').length === 32),
        'expected 32 bytes (64 hex characters or base64)',
      )
      .optional(),
  )

export const ConfigSchema = z.object({
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  BETTER_AUTH_SECRET: z.preprocess(
    blankToUndefined,
    z.string().min(32, 'expected 32 or more random characters').optional(),
  ),
  BETTER_AUTH_URL: url(['http:', 'https:']),
  PARLEY_TRUSTED_ORIGINS: text(),
  PARLEY_ADMIN_EMAIL: text(),
  PARLEY_ADMIN_PASSWORD: text(),
  PARLEY_ADMIN_NAME: text(),
  PARLEY_DEMO: flag(),
  PORT: int(1, 65535),
  HOST: text(),
  PARLEY_SESSION_HOURS: positive(),
  PARLEY_SIGNIN_PER_MINUTE: int(1),
  PARLEY_CHECK_ANSWER_PER_MINUTE: int(1),
  PARLEY_TRY_MATCH_PER_MINUTE: int(1),
  PARLEY_SIGNIN_FREE_FAILURES: int(1, 1000),
  PARLEY_SIGNIN_ACCOUNT_PER_HOUR: int(1),
  PARLEY_TRUSTED_PROXIES: text(),
  PARLEY_PG_PORT: int(1, 65535),
  PARLEY_DATA_DIR: text(),
  PARLEY_ENCRYPTION_KEY: key32(),
  PARLEY_ALLOWED_LLM_HOSTS: text(),
  PARLEY_WORKERS: int(0, 1000),
  PARLEY_WEB_PROCESSES: int(1, 256),
  PARLEY_HEAP_MB: positive(),
  PARLEY_MALLOC: z.preprocess(
    (v) => (typeof v === 'string' ? blankToUndefined(v.trim().toLowerCase()) : v),
    z.enum(['auto', 'jemalloc', 'system'], 'expected auto, jemalloc or system').optional(),
  ),
  PARLEY_AUTH_RATE_LIMIT: z.preprocess(blankToUndefined, z.enum(['on', 'off'], 'expected on or off').optional()),
  PARLEY_JOB_EXPIRE_SECONDS: int(1),
  PARLEY_JOB_MAINTENANCE_SECONDS: int(1),
  PARLEY_JOB_SLICE_MS: int(0),
  PARLEY_HEARTBEAT_SECONDS: int(1, 60),
  PARLEY_SEAT_LEASE_SECONDS: int(1, 7 * 24 * 3600),
  PARLEY_SHUTDOWN_SECONDS: int(1, 600),
  PARLEY_DRAIN_SECONDS: int(0, 600),
  PARLEY_DB_POOL_MAX: int(1, 1000),
  PARLEY_DB_HOT_POOL_MAX: int(1, 1000),
  PARLEY_JOB_POOL_MAX: int(2, 1000),
  PARLEY_MAX_UPLOAD_MB: positive(),
  PARLEY_MAX_IMPORT_ROWS: int(1),
  PARLEY_MAX_IMAGES_MB: positive(),
  PARLEY_MAX_SESSIONS: int(1),
  PARLEY_LOG_LEVEL: z.preprocess(
    blankToUndefined,
    z
      .enum(
        ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
        'expected fatal, error, warn, info, debug, trace or silent',
      )
      .optional(),
  ),
  PARLEY_LOG_FORMAT: z.preprocess(blankToUndefined, z.enum(['json', 'pretty'], 'expected json or pretty').optional()),
  PARLEY_METRICS_TOKEN: z.preprocess(
    blankToUndefined,
    z.string().min(16, 'expected 16 or more characters (it guards /api/v1/metrics)').optional(),
  ),
  PARLEY_WORKER_HEALTH_PORT: int(1, 65535),
  PARLEY_DEPLOYMENT_ID: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^[\w.-]{1,64}$/, 'expected 1 to 64 letters, digits, dots, dashes or underscores')
      .optional(),
  ),
  NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine(
        (v) => [16, 24, 32].includes(Buffer.from(v, 'base64').length),
        'expected an AES key in base64 (32 bytes: `openssl rand -base64 32`)',
      )
      .optional(),
  ),
  HTTPS_PROXY: url(['http:', 'https:']),
  HTTP_PROXY: url(['http:', 'https:']),
  https_proxy: url(['http:', 'https:']),
  http_proxy: url(['http:', 'https:']),
  NO_PROXY: text(),
  no_proxy: text(),
})

export type RawConfig = z.infer<typeof ConfigSchema>

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Parley's configuration is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}
crossCopy(ConfigError, 'ConfigError')

/** Parse an environment; throws a {@link ConfigError} naming every bad variable and its value. */
export function parseConfig(env: Record<string, string | undefined> = process.env): RawConfig {
  const r = ConfigSchema.safeParse(env)
  if (r.success) return r.data
  throw new ConfigError(
    r.error.issues.map((i) => {
      const name = String(i.path[0] ?? '?')
      const value = env[name]
      const secret = /SECRET|PASSWORD|KEY|TOKEN/.test(name)
      return `${name}: ${i.message}${value !== undefined && !secret ? ` (got "${value}")` : ''}`
    }),
  )
}

/**
 * Database pool sizes per process when they are not set, by kind of process (`PARLEY_PROCESS`:
 * `parley worker` sets `worker`; a web process, the CLI and tests are `web`). Sized so the documented
 * layout, three hosts each running `npm run start:next` (two web processes by default) and two
 * workers, fits PostgreSQL's default max_connections = 100 with room to spare (docs/OPERATIONS.md
 * "Connection budget"): a web process's pages use Prisma and the plain pool, a worker's steps the
 * plain pool (a step and a bulk job of each kind at once) and Prisma hardly at all.
 */
export const POOL_DEFAULTS = {
  web: { dbPoolMax: 4, dbHotPoolMax: 4, jobPoolMax: 2 },
  worker: { dbPoolMax: 2, dbHotPoolMax: 6, jobPoolMax: 3 },
} as const
export type ProcessKind = keyof typeof POOL_DEFAULTS
export const processKind = (env: Record<string, string | undefined> = process.env): ProcessKind =>
  env.PARLEY_PROCESS === 'worker' ? 'worker' : 'web'

/** The values with their defaults (README "Configuration"); the whole environment is validated. */
export function config(env: Record<string, string | undefined> = process.env) {
  return withDefaults(parseConfig(env), processKind(env))
}

/**
 * The schema of a set of variables, built once per set: `settings` runs on hot paths (every submitted
 * turn reads the seat lease, every request the sign-in limits), and a zod schema built per call cost
 * its construction and its first-parse compilation each time (bench:load: 0.3 ms of CPU per submit).
 */
const picks = new Map<string, z.ZodType>()
function pickedSchema(keys: ReadonlyArray<keyof RawConfig>): z.ZodType {
  const id = keys.join(',')
  let schema = picks.get(id)
  if (!schema) {
    const mask = Object.fromEntries(keys.map((k) => [k, true])) as Partial<Record<keyof RawConfig, true>>
    schema = ConfigSchema.pick(mask as never)
    picks.set(id, schema)
  }
  return schema
}

/** How many variable sets `settings` has built a schema for (tests). */
export const settingsSchemas = () => picks.size

/**
 * The same values, validating only the variables named: what running code reads (a pool's size, the
 * job settings), so a variable one module does not use never breaks another at run time. The whole
 * configuration is validated once, at start.
 */
export function settings(keys: ReadonlyArray<keyof RawConfig>, env: Record<string, string | undefined> = process.env) {
  const picked = Object.fromEntries(keys.map((k) => [k, env[k]]))
  const r = pickedSchema(keys).safeParse(picked)
  if (!r.success) parseConfig(picked) // throws the ConfigError naming the variable
  return withDefaults(r.data as RawConfig, processKind(env))
}

function withDefaults(c: RawConfig, kind: ProcessKind) {
  const pools = POOL_DEFAULTS[kind]
  return {
    ...c,
    workers: c.PARLEY_WORKERS ?? 4,
    jobExpireSeconds: c.PARLEY_JOB_EXPIRE_SECONDS ?? 600,
    jobMaintenanceSeconds: c.PARLEY_JOB_MAINTENANCE_SECONDS ?? 5,
    jobSliceMs: c.PARLEY_JOB_SLICE_MS ?? 400,
    heartbeatSeconds: c.PARLEY_HEARTBEAT_SECONDS ?? 2,
    seatLeaseSeconds: c.PARLEY_SEAT_LEASE_SECONDS ?? 900,
    shutdownSeconds: c.PARLEY_SHUTDOWN_SECONDS ?? 20,
    drainSeconds: c.PARLEY_DRAIN_SECONDS ?? 5,
    dbPoolMax: c.PARLEY_DB_POOL_MAX ?? pools.dbPoolMax,
    dbHotPoolMax: c.PARLEY_DB_HOT_POOL_MAX ?? pools.dbHotPoolMax,
    jobPoolMax: c.PARLEY_JOB_POOL_MAX ?? pools.jobPoolMax,
    checkAnswerPerMinute: c.PARLEY_CHECK_ANSWER_PER_MINUTE ?? 120,
    tryMatchPerMinute: c.PARLEY_TRY_MATCH_PER_MINUTE ?? 30,
    logLevel: c.PARLEY_LOG_LEVEL ?? 'info',
    logFormat: c.PARLEY_LOG_FORMAT ?? (process.env.NODE_ENV === 'development' ? 'pretty' : 'json'),
  }
}

export type Config = ReturnType<typeof withDefaults>
