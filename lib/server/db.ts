import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaClient } from '@/lib/generated/prisma/client'

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

function isEmptyWhere(where: unknown): boolean {
  return where == null || (typeof where === 'object' && Object.keys(where as object).length === 0)
}

export function createPrisma(connectionString: string) {
  const base = new PrismaClient({
    adapter: new PrismaPg({ connectionString, max: Number(process.env.PARLEY_DB_POOL_MAX ?? 20) }),
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

const globalForDb = globalThis as unknown as { parleyDb?: Db; parleyPool?: pg.Pool }

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
export function sql(): pg.Pool {
  if (!globalForDb.parleyPool) {
    const pool = new pg.Pool({ connectionString: databaseUrl(), max: Number(process.env.PARLEY_DB_HOT_POOL_MAX ?? 10) })
    pool.on('error', (err) => console.error('[parley] database pool:', err.message))
    globalForDb.parleyPool = pool
  }
  return globalForDb.parleyPool
}

/** One client per process (kept across hot reloads in development). */
export const db: Db = new Proxy({} as Db, {
  get(_target, prop) {
    if (prop === '$disconnect')
      return async () => {
        const pool = globalForDb.parleyPool
        globalForDb.parleyPool = undefined
        await Promise.all([globalForDb.parleyDb?.$disconnect(), pool?.end()])
      }
    globalForDb.parleyDb ??= createPrisma(databaseUrl())
    const value = Reflect.get(globalForDb.parleyDb as object, prop)
    return typeof value === 'function' ? value.bind(globalForDb.parleyDb) : value
  },
})
