import { randomUUID } from 'node:crypto'
import { sql } from '@/lib/server/db'
import type { ExecOptions, ExecResult, ProgramDef, ProgramFn, ProtocolPlugin } from '@/lib/server/engine/plugin'
import { pgJson, pgText } from '@/lib/server/pg-text'
import { crossCopy } from '@/lib/cross-copy'

/**
 * `ctx.exec`: a step runs one of its plugin's programs and the engine records it, one ProgramRun row
 * per (session, message number, program, call index within the step), the way every LLM call is a
 * row. Jobs are at-least-once, so a step can run again (its worker was killed, its run was paused, a
 * researcher pressed Retry); the row makes the program's side effect happen once:
 *
 * - a finished row with the same input is the answer (`reused`): the program does not run again;
 * - a row that started and never finished (its worker died), was interrupted (the step was stopped by
 *   a pause, a cancel or its seat's time limit), or was run on another input (the step's model call
 *   before it answered differently this time) runs again in the same row (`attempts` + 1).
 *
 * A started row without a result is taken for a dead worker's: the queue hands a step back only when
 * its worker died (heartbeats) or its job expired, and a seat's time limit ends a step well before that.
 */

/** Why a step was stopped (the reason of `ctx.signal`). */
export class StepAborted extends Error {
  constructor(
    readonly kind: 'paused' | 'cancelled' | 'timeout',
    message: string,
  ) {
    super(message)
    this.name = 'StepAborted'
  }
}
crossCopy(StepAborted, 'StepAborted')

/** Thrown by a program to report an exit status other than 0, with its output and a limit it hit. */
export class ProgramExit extends Error {
  constructor(
    readonly exitStatus: number | null,
    readonly output: unknown = null,
    readonly limitsHit: string | null = null,
    message = `The program exited with status ${exitStatus ?? 'none'}.`,
  ) {
    super(message)
    this.name = 'ProgramExit'
  }
}
crossCopy(ProgramExit, 'ProgramExit')

interface ExecToolsOptions {
  plugin: ProtocolPlugin
  sessionId: string
  seq: number
  /** The step's signal (pause, cancel, the seat's time limit). */
  signal: AbortSignal
}

function definition(p: ProgramFn | ProgramDef | undefined): ProgramDef | undefined {
  return typeof p === 'function' ? { run: p } : p
}

type Row = {
  id: string
  output: unknown
  exitStatus: number | null
  limitsHit: string | null
  error: string | null
  durationMs: number | null
}

/** The `exec` of one step: counts each program's calls within the step, which with (session, seq) names the row. */
export function execTools(
  o: ExecToolsOptions,
): (program: string, input: unknown, opts?: ExecOptions) => Promise<ExecResult> {
  const calls = new Map<string, number>()
  return async (program, input, opts = {}) => {
    const def = definition(o.plugin.programs?.[program])
    if (!def) throw new Error(`The ${o.plugin.protocol.id} plugin has no program "${program}".`)
    if (o.signal.aborted) throw o.signal.reason
    const callIndex = calls.get(program) ?? 0
    calls.set(program, callIndex + 1)
    const inputJson = pgJson(input ?? null)
    // Claim the row: new, or again when it never finished, was interrupted or ran on another input.
    const claimed = await sql().query<{ id: string }>(
      `INSERT INTO "ProgramRun" (id, "sessionId", seq, program, "callIndex", input)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       ON CONFLICT ("sessionId", seq, program, "callIndex") DO UPDATE
         SET input = EXCLUDED.input, output = NULL, "exitStatus" = NULL, "limitsHit" = NULL, error = NULL,
             interrupted = false, attempts = "ProgramRun".attempts + 1, "startedAt" = now(), "durationMs" = NULL
         WHERE "ProgramRun"."durationMs" IS NULL OR "ProgramRun".interrupted
            OR "ProgramRun".input IS DISTINCT FROM EXCLUDED.input
       RETURNING id`,
      [randomUUID(), o.sessionId, o.seq, program, callIndex, inputJson],
    )
    const id = claimed.rows[0]?.id
    if (!id) {
      const { rows } = await sql().query<Row>(
        `SELECT id, output, "exitStatus", "limitsHit", error, "durationMs" FROM "ProgramRun"
         WHERE "sessionId" = $1 AND seq = $2 AND program = $3 AND "callIndex" = $4`,
        [o.sessionId, o.seq, program, callIndex],
      )
      const r = rows[0] as Row
      return {
        output: r.output,
        exitStatus: r.exitStatus,
        limitsHit: r.limitsHit,
        error: r.error,
        durationMs: r.durationMs ?? 0,
        reused: true,
      }
    }
    const timeoutSeconds = opts.timeoutSeconds ?? def.timeoutSeconds
    const own = new AbortController()
    const timer =
      timeoutSeconds !== undefined
        ? setTimeout(
            () => own.abort(new Error(`The program ${program} took longer than ${timeoutSeconds} s.`)),
            timeoutSeconds * 1000,
          )
        : undefined
    const signal = AbortSignal.any([o.signal, own.signal])
    const limits = {
      ...(def.limits ?? {}),
      ...(opts.limits ?? {}),
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    }
    const t0 = performance.now()
    type Settled = { ok: true; value: unknown } | { ok: false; err: unknown } | { aborted: true }
    let onAbort: (() => void) | undefined
    const settled: Settled = await Promise.race([
      Promise.resolve()
        .then(() => def.run(input, { signal, limits, sessionId: o.sessionId, seq: o.seq }))
        .then(
          (value): Settled => ({ ok: true, value }),
          (err): Settled => ({ ok: false, err }),
        ),
      // A program that ignores its signal is not waited for (its result, if any, is dropped).
      new Promise<Settled>((resolve) => {
        onAbort = () => resolve({ aborted: true })
        if (signal.aborted) onAbort()
        else signal.addEventListener('abort', onAbort, { once: true })
      }),
    ])
    if (timer) clearTimeout(timer)
    if (onAbort) signal.removeEventListener('abort', onAbort)
    const durationMs = Math.round(performance.now() - t0)
    let result: Omit<ExecResult, 'durationMs' | 'reused'>
    const interrupted = o.signal.aborted && !('ok' in settled && settled.ok)
    if (interrupted) {
      const reason = o.signal.reason
      result = {
        output: null,
        exitStatus: null,
        limitsHit: reason instanceof StepAborted ? reason.kind : 'cancelled',
        error: reason instanceof Error ? reason.message : 'The step was stopped.',
      }
    } else if ('ok' in settled && settled.ok) {
      result = { output: settled.value ?? null, exitStatus: 0, limitsHit: null, error: null }
    } else if (own.signal.aborted) {
      result = { output: null, exitStatus: null, limitsHit: 'timeout', error: (own.signal.reason as Error).message }
    } else {
      const err = (settled as { err: unknown }).err
      result =
        err instanceof ProgramExit
          ? { output: err.output ?? null, exitStatus: err.exitStatus, limitsHit: err.limitsHit, error: err.message }
          : { output: null, exitStatus: 1, limitsHit: null, error: err instanceof Error ? err.message : String(err) }
    }
    await sql().query(
      `UPDATE "ProgramRun" SET output = $2::jsonb, "exitStatus" = $3, "limitsHit" = $4, error = $5, interrupted = $6,
         "durationMs" = $7
       WHERE id = $1`,
      [
        id,
        result.output === null ? null : pgJson(result.output),
        result.exitStatus,
        result.limitsHit,
        pgText(result.error?.slice(0, 4000) ?? null),
        interrupted,
        durationMs,
      ],
    )
    if (interrupted) throw o.signal.reason
    return { ...result, durationMs, reused: false }
  }
}
