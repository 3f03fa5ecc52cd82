import { z } from 'zod'
import type { Actor } from '@/lib/server/actor'
import { hasScope, type Scope } from '@/lib/server/auth/roles'
import { UnguardedBulkWriteError } from '@/lib/server/db'
import { AppError, isDatabaseBusy } from '@/lib/server/errors'
import { inputProblem } from '@/lib/server/input'
import { log } from '@/lib/server/log'
import { isSandboxUnavailable } from '@/lib/tasks/sandbox'
import { humanIssueMessage } from '@/lib/zod-messages'
import { crossCopy } from '@/lib/cross-copy'

// Plain words for validation failures ("Enter a number of at least 1."), wherever zod parses on the
// server; a message a schema sets itself still wins.
z.config({ customError: humanIssueMessage })

/**
 * One business procedure: zod input → scope check → scoped query → audit row. Server actions,
 * REST routes, the CLI and tests all call the same operation through `execute`, so validation and
 * permission checks cannot differ between entry points.
 */
export interface Operation<I, O> {
  name: string
  scope: Scope
  input: z.ZodType<I>
  run(actor: Actor, input: I, ctx: OperationContext): Promise<O>
}

export interface OperationContext {
  /** Request headers where the caller has them (better-auth needs them for password changes). */
  headers?: Headers
  /** The browser session making the call, where there is one. */
  sessionId?: string
}

export function defineOperation<I, O>(op: Operation<I, O>): Operation<I, O> {
  return op
}

export type Failure = {
  ok: false
  status: number
  error: string
  fieldErrors?: Record<string, string[]>
  /** `error` only sums up `fieldErrors` (a form shows those beside their fields instead). */
  fieldsOnly?: boolean
}
export type Result<O> = { ok: true; data: O } | Failure

/** Inputs larger than this are refused before parsing (413). */
export const MAX_INPUT_BYTES = 256 * 1024

function sizeOf(raw: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(raw) ?? '')
  } catch {
    return Number.POSITIVE_INFINITY // cyclic or unserialisable: not an input anyone sent us
  }
}

export function validationFailure(error: z.ZodError): Failure {
  const flat = z.flattenError(error)
  const fieldErrors: Record<string, string[]> = {}
  for (const [k, v] of Object.entries(flat.fieldErrors as Record<string, string[] | undefined>)) {
    if (v?.length) fieldErrors[k] = v
  }
  const first = error.issues[0]
  const where = first?.path.length ? `${first.path.join('.')}: ` : ''
  const hasFields = Object.keys(fieldErrors).length > 0
  return {
    ok: false,
    status: 400,
    error: `Invalid input. ${where}${first?.message ?? ''}`.trim(),
    ...(hasFields ? { fieldErrors } : {}),
    ...(hasFields && flat.formErrors.length === 0 ? { fieldsOnly: true } : {}),
  }
}

export function failureFrom(err: unknown, opName: string): Failure {
  if (err instanceof AppError) {
    return {
      ok: false,
      status: err.status,
      error: err.message,
      ...(err.fieldErrors ? { fieldErrors: err.fieldErrors } : {}),
      ...(err.fieldErrors && err.fieldsOnly ? { fieldsOnly: true } : {}),
    }
  }
  if (err instanceof z.ZodError) return validationFailure(err)
  if (err instanceof UnguardedBulkWriteError) {
    log().error({ op: opName, err }, 'refused an unguarded bulk write')
    return { ok: false, status: 500, error: 'Refused an unsafe bulk write. Nothing was changed.' }
  }
  if (isDatabaseBusy(err)) {
    log().warn({ op: opName, err }, 'database busy')
    return {
      ok: false,
      status: 503,
      error: 'The server is busy right now. Nothing was saved; please try again in a moment.',
    }
  }
  if (isSandboxUnavailable(err)) {
    // RDKit's or the regex worker could not start, or had too much queued: nothing was written.
    log().warn({ op: opName, err: err.message }, 'worker unavailable')
    return { ok: false, status: 503, error: `${err.message} Nothing was saved; please try again in a moment.` }
  }
  log().error({ op: opName, err }, 'operation failed')
  return { ok: false, status: 500, error: 'Something went wrong on our side. Nothing was saved; please try again.' }
}

export async function execute<I, O>(
  op: Operation<I, O>,
  actor: Actor | null,
  raw: unknown,
  ctx: OperationContext = {},
): Promise<Result<O>> {
  if (!actor) return { ok: false, status: 401, error: 'Sign in to continue.' }
  if (!hasScope(actor.role, op.scope)) {
    return { ok: false, status: 403, error: 'You do not have permission to do that.' }
  }
  // The rules for every input (lib/server/input.ts) before any schema: no U+0000 or unpaired
  // surrogate in any string or key, no nesting deeper than MAX_INPUT_DEPTH.
  const problem = inputProblem(raw)
  if (problem) {
    const field = problem.path[0]
    return {
      ok: false,
      status: 400,
      error: `Invalid input. ${problem.path.length ? `${problem.path.join('.')}: ` : ''}${problem.message}`,
      ...(field !== undefined ? { fieldErrors: { [String(field)]: [problem.message] }, fieldsOnly: true } : {}),
    }
  }
  if (sizeOf(raw) > MAX_INPUT_BYTES) {
    return { ok: false, status: 413, error: `Input too large (limit ${MAX_INPUT_BYTES / 1024} KiB).` }
  }
  const parsed = op.input.safeParse(raw)
  if (!parsed.success) return validationFailure(parsed.error)
  try {
    return { ok: true, data: await op.run(actor, parsed.data, ctx) }
  } catch (err) {
    return failureFrom(err, op.name)
  }
}

/** For callers that want a thrown AppError instead of a Result (CLI, seed, tests). */
export async function executeOrThrow<I, O>(
  op: Operation<I, O>,
  actor: Actor | null,
  raw: unknown,
  ctx: OperationContext = {},
): Promise<O> {
  const r = await execute(op, actor, raw, ctx)
  if (r.ok) return r.data
  throw new OperationFailed(r)
}

export class OperationFailed extends Error {
  constructor(readonly failure: Failure) {
    super(failure.error)
    this.name = 'OperationFailed'
  }
}
crossCopy(OperationFailed, 'OperationFailed')
