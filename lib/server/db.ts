import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaClient } from '@/lib/generated/prisma/client'
import { settings } from '@/lib/server/config'
import { log } from '@/lib/server/log'
import { crossCopy } from '@/lib/cross-copy'

/**
 * Refuses `updateMany` / `deleteMany` with a missing or empty `where`: a bulk write over a whole
 * table of research data is never what a caller meant (cal.com does the same).
 */
export class UnguardedBulkWriteError extends Error {
  constructor(model: string, operation: string) {
    super(`${model}.${operation} needs a non-empty where clause (refusing to touch every row)`)
    this.name = 'UnguardedBulkWriteError'
  }
}
crossCopy(UnguardedBulkWriteError, 'UnguardedBulkWriteError')

function isEmptyWhere(where: unknown): boolean {
  return where == null || (typeof where === 'object' && Object.keys(where as object).length === 0)
}

export function createPrisma(connectionString: string, pool?: pg.Pool) {
  const base = new PrismaClient({
    adapter: new PrismaPg(
      pool ?? { connectionString, max: settings(['PARLEY_DB_POOL_MAX']).dbPoolMax, application_name: 'parley-prisma' },
    ),
  })
  return base.$extends({
    name: 'bulk-write-guard',
    query: {
      $allModels: {
        async updateMany({ model, operation, args, query }) {
          if (isEmptyWhere(args.where)) throw new UnguardedBulkWriteError(model, operation)
          return query(args)
        },
        async deleteMany({ model, operation, args, query }) {
          if (isEmptyWhere(args.where)) throw new UnguardedBulkWriteError(model, operation)
          return query(args)
        },
      },
    },
  })
}

export type Db = ReturnType<typeof createPrisma>
/** The client inside `db.$transaction(async (tx) => …)`. */
export type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0]

const globalForDb = globalThis as unknown as { parleyDb?: Db; parleyPool?: pg.Pool; parleyPrismaPool?: pg.Pool }

function databaseUrl(): string {
  const url = process.env.DATABASE_URL
  if (!url) {
    throw new Error(
      'DATABASE_URL is not set. Start Parley with `npm start` (it runs an embedded PostgreSQL) or set DATABASE_URL.',
    )
  }
  return url
}

/**
 * A plain `pg` pool for the few statements every protocol step runs (load a session, append a
 * message, record an LLM call, check the run's status): no query compiler in between, which under
 * load cost milliseconds of CPU per statement. Everything else goes through Prisma. Ended together
 * with the Prisma client by `db.$disconnect()`.
 */
/**
 * An idle client's error. A pool being ended (`db.$disconnect`) resolves before its sockets have closed,
 * so a database dropped or stopped right after (a bench's throwaway database, a shutdown) still ends
 * those sessions, and their termination arrives here: expected then, and not worth an error line.
 */
function poolError(pool: pg.Pool, err: Error): void {
  if ((pool as { ending?: boolean }).ending) log().debug({ err }, 'database pool error while it ends')
  else log().error({ err }, 'database pool error')
}

export function sql(): pg.Pool {
  if (!globalForDb.parleyPool) {
    const pool = new pg.Pool({
      connectionString: databaseUrl(),
      max: settings(['PARLEY_DB_HOT_POOL_MAX']).dbHotPoolMax,
      application_name: 'parley-hot',
    })
    pool.on('error', (err) => poolError(pool, err))
    globalForDb.parleyPool = pool
  }
  return globalForDb.parleyPool
}

/**
 * Run `fn` in one transaction on a client of the `sql()` pool: committed when it resolves, rolled
 * back when it throws (the error is rethrown). For writes that must be atomic on `pg`: a person's
 * turn (message, drafts, audit row; Prisma's interactive transaction cost about three times the CPU
 * of the same statements), and those that put a pg-boss job in the same commit (a dataset import,
 * a run's first steps).
 */
export async function pgTransaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await sql().connect()
  try {
    await client.query('BEGIN')
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.release()
  }
}

/** One client per process (kept across hot reloads in development). */
export const db: Db = new Proxy({} as Db, {
  get(_target, prop) {
    if (prop === '$disconnect')
      return async () => {
        const pool = globalForDb.parleyPool
        const prismaPool = globalForDb.parleyPrismaPool
        const client = globalForDb.parleyDb
        globalForDb.parleyPool = undefined
        globalForDb.parleyPrismaPool = undefined
        globalForDb.parleyDb = undefined
        await Promise.all([client?.$disconnect(), pool?.end()])
        await prismaPool?.end().catch(() => {})
      }
    if (!globalForDb.parleyDb) {
      const pool = new pg.Pool({
        connectionString: databaseUrl(),
        max: settings(['PARLEY_DB_POOL_MAX']).dbPoolMax,
        application_name: 'parley-prisma',
      })
      pool.on('error', (err) => poolError(pool, err))
      globalForDb.parleyPrismaPool = pool
      globalForDb.parleyDb = createPrisma(databaseUrl(), pool)
    }
    const value = Reflect.get(globalForDb.parleyDb as object, prop)
    return typeof value === 'function' ? value.bind(globalForDb.parleyDb) : value
  },
})

export interface PoolUse {
  max: number
  total: number
  idle: number
  waiting: number
}

/** How this process's pools are used right now (for the metrics): Prisma's and the plain one. */
export function poolUse(): Record<'prisma' | 'hot', PoolUse | undefined> {
  const of = (p: pg.Pool | undefined): PoolUse | undefined =>
    p && { max: p.options.max ?? 10, total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount }
  return { prisma: of(globalForDb.parleyPrismaPool), hot: of(globalForDb.parleyPool) }
}
