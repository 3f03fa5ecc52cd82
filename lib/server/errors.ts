import { crossCopy } from '@/lib/cross-copy'
/** Errors a caller can act on. Each maps to an HTTP status at the boundary (REST, actions, CLI). */
export class AppError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429,
    message: string,
    readonly fieldErrors?: Record<string, string[]>,
    /** The message only sums up `fieldErrors` (a form shows those beside their fields instead). */
    readonly fieldsOnly?: boolean,
  ) {
    super(message)
    this.name = 'AppError'
  }
}
crossCopy(AppError, 'AppError')

export const badRequest = (message: string, fieldErrors?: Record<string, string[]>) =>
  new AppError(400, message, fieldErrors)
export const forbidden = (message = 'You do not have permission to do that.') => new AppError(403, message)
export const notFound = (what = 'That item') => new AppError(404, `${what} was not found.`)
export const conflict = (message: string) => new AppError(409, message)
export const tooLarge = (message: string) => new AppError(413, message)

export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err)) return false
  const e = err as {
    code: unknown
    meta?: { driverAdapterError?: { cause?: { originalCode?: string; code?: string } } }
  }
  if (e.code === 'P2002') return true
  // The plain pg pool (lib/server/db.ts `sql`): PostgreSQL's own code.
  if (e.code === '23505') return true
  // A raw query (P2010) that PostgreSQL refused with unique_violation.
  const cause = e.meta?.driverAdapterError?.cause
  return e.code === 'P2010' && (cause?.originalCode === '23505' || cause?.code === '23505')
}

/**
 * The database had no room for this request in time: Prisma could not start an interactive
 * transaction (P2028) or get a pooled connection (P2024), or the plain pg pool timed out waiting for
 * one. Nothing was written; the caller should try again, so the boundary answers 503, not 500.
 */
export function isDatabaseBusy(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const code = 'code' in err ? (err as { code: unknown }).code : undefined
  if (code === 'P2028' || code === 'P2024') return true
  const message = err instanceof Error ? err.message : ''
  return (
    /^timeout exceeded when trying to connect$/i.test(message) ||
    /Unable to start a transaction in the given time/i.test(message)
  )
}

/** Network errors of a connection to PostgreSQL that could not be made or was cut. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
])
/**
 * PostgreSQL's own: the server shutting down or starting up (57P01–57P03), too many connections
 * (53300), connection exceptions (class 08); Prisma's "can't reach the server" and "closed".
 */
const UNAVAILABLE_SQLSTATES = /^(57P0[123]|53300|08\w{3}|P1001|P1002|P1017)$/

/**
 * The database cannot be reached right now (refused, cut, restarting): nothing about the statement
 * was wrong, and the same work will do once it is back. Workers hand such a step back to the queue
 * instead of stalling the session, and `parley worker` lives through such errors (processes.ts).
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  const code = typeof e.code === 'string' ? e.code : ''
  if (UNREACHABLE_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code)) return true
  const message = typeof e.message === 'string' ? e.message : ''
  if (
    /^Connection terminated|Connection terminated unexpectedly|Client has encountered a connection error|the database system is (starting up|shutting down)|Can't reach database server/i.test(
      message,
    )
  )
    return true
  // An AggregateError (a connection tried on several addresses), or an error wrapping the cause.
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true
  return isDatabaseUnavailable(e.cause, depth + 1)
}
