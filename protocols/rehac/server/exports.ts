import { z } from 'zod'
import { db, type ExportTable } from '@/lib/server/sdk'
import { advantageTables } from '@/protocols/rehac/core/advantages'
import { RehacEvaluator, rehacReward } from '@/protocols/rehac/core/metrics'
import { parseBranchKey } from '@/protocols/rehac/core/tree'
import type { Episode } from '@/protocols/rehac/server/views'

/**
 * ReHAC's data tables of a run beside its trajectories and episodes (issue 24): the offline-RL file,
 * the Monte-Carlo table and the imitation file at a chosen λ (core/advantages.ts, the same rows as
 * `parley rehac advantages` on the run's trajectories export), the evaluation tree (one row per
 * session) and the evaluation figures per method and λ (core/metrics.ts, as `parley rehac eval`).
 *
 * λ is the table's own export parameter (`?lambda=0.06`, ExportTable.args); the metrics table takes a
 * list (`?lambdas=0.06,0.08,0.10`). The tables get the run's episodes from the caller (views.ts), so
 * this module does not import the views at load time.
 */

/** λ as an export parameter: a finite number ≥ 0, at most 1 (default: the paper's 0.08). */
const lambdaArg = z.object({
  lambda: z.coerce
    .number({ error: 'λ must be a number (e.g. 0.08).' })
    .finite('λ must be a finite number.')
    .min(0, 'λ must be at least 0.')
    .max(1, 'λ is at most 1.')
    .default(0.08),
})
const lambdasArg = z.object({
  lambdas: z
    .string()
    .default('0.06,0.08,0.1')
    .transform((s) => s.split(',').map((x) => (x.trim() === '' ? Number.NaN : Number(x))))
    .pipe(
      z
        .array(
          z
            .number({ error: 'Each λ must be a number (e.g. 0.06,0.08,0.1).' })
            .finite('Each λ must be a finite number.')
            .min(0, 'Each λ must be at least 0.')
            .max(1, 'Each λ is at most 1.'),
        )
        .min(1)
        .max(10, 'At most 10 values of λ.'),
    ),
})

/** The parameters the export checked, or the defaults when called without (tests, other callers). */
const parsed = <S extends z.ZodType>(schema: S, args: Record<string, unknown> | undefined): z.output<S> =>
  (args ?? schema.parse({})) as z.output<S>

type Episodes = (runId: string) => Promise<Episode[]>

/** The ended episodes as the authors' pipeline reads them (trajectory text and T). */
async function trajectoriesOf(episodes: Episodes, runId: string) {
  const out: { trajectory: string; f1: number; em: boolean }[] = []
  for (const e of await episodes(runId))
    if (e.result && e.trajectory !== null) out.push({ trajectory: e.trajectory, f1: e.result.f1, em: e.result.em })
  return out
}

/** The run's decider, as the method of its metrics rows ("program:random", "llm:gpt-4o", "human"). */
export function methodOf(seats: unknown): string {
  const d = (seats as { decider?: { kind?: string; program?: string; model?: { model?: string } } } | null)?.decider
  if (!d?.kind) return 'unknown'
  if (d.kind === 'program') return `program:${d.program ?? '?'}`
  if (d.kind === 'llm') return `llm:${d.model?.model ?? '?'}`
  return d.kind
}

/** The run's Monte-Carlo, advantage and imitation tables at the export's λ (one computation per export). */
async function tablesAt(episodes: Episodes, runId: string, args: Record<string, unknown> | undefined) {
  const { lambda } = parsed(lambdaArg, args)
  return advantageTables(await trajectoriesOf(episodes, runId), { lambda })
}

export function rehacDataTables(episodes: Episodes): Record<string, ExportTable> {
  return {
    advantages: {
      label: 'Offline-RL rows at λ (state, action, reward = A(s,a), count): the policy’s training file',
      description:
        'Two rows per state seen with both actions, as `parley rehac advantages` computes them on the trajectories export. Parameter: lambda (default 0.08).',
      args: lambdaArg,
      async *rows(runId, _format, args) {
        const t = await tablesAt(episodes, runId, args)
        for (const r of t.advantages) yield { state: r.state, action: r.action, reward: r.reward, count: r.count }
      },
    },
    'monte-carlo': {
      label: 'Monte-Carlo returns at λ (state, action, mean return R̄(s,a), count)',
      description: 'Every (state, action) the episodes reached. Parameter: lambda (default 0.08).',
      args: lambdaArg,
      async *rows(runId, _format, args) {
        const t = await tablesAt(episodes, runId, args)
        for (const r of t.monteCarlo)
          yield { state: r.state, action: r.action, meanReturn: r.meanReturn, count: r.count }
      },
    },
    imitation: {
      label: 'Imitation rows at λ (state, the better action, count)',
      description:
        'One row per state seen with both actions: the action with the higher mean return. Parameter: lambda (default 0.08).',
      args: lambdaArg,
      async *rows(runId, _format, args) {
        const t = await tablesAt(episodes, runId, args)
        for (const r of t.imitation) yield { state: r.state, action: r.action, count: r.count }
      },
    },
    tree: {
      label: 'Evaluation tree (one row per session: key, question, branch, path, parent, steps, T, C, R at λ)',
      description:
        'The branch is what a collection started the session for; parent is the key of the session it was forked from. Parameter: lambda (default 0.08).',
      args: lambdaArg,
      async *rows(runId, _format, args) {
        const { lambda } = parsed(lambdaArg, args)
        const list = await episodes(runId)
        const parents = await db.protocolSession.findMany({ where: { runId }, select: { id: true, parentId: true } })
        const parentOf = new Map(parents.map((p) => [p.id, p.parentId]))
        const keyOf = new Map(list.map((e) => [e.sessionId, e.key]))
        for (const e of list) {
          const b = parseBranchKey(e.key)
          const parent = parentOf.get(e.sessionId)
          yield {
            key: e.key,
            question: e.taskId,
            branch: b?.branch ?? '',
            sample: b?.sample ?? 1,
            path: e.path,
            parent: parent ? (keyOf.get(parent) ?? parent) : '',
            status: e.status,
            steps: e.result?.steps ?? null,
            T: e.result?.T ?? null,
            C: e.result?.humanSteps ?? null,
            R: e.result ? rehacReward(e.result.T, e.result.humanSteps, lambda) : null,
          }
        }
      },
    },
    metrics: {
      label: 'Metrics per method and λ (T, EM, C, R, HIR, as `parley rehac eval`)',
      description:
        'One row per λ for the run’s decider over its ended episodes. Parameter: lambdas (default 0.06,0.08,0.1).',
      args: lambdasArg,
      async *rows(runId, _format, args) {
        const { lambdas } = parsed(lambdasArg, args)
        const run = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { seats: true } })
        const method = methodOf(run.seats)
        const lines = await trajectoriesOf(episodes, runId)
        for (const lambda of lambdas) {
          const e = new RehacEvaluator(lambda)
          for (const l of lines) e.add(l)
          const r = e.result()
          yield {
            method,
            lambda,
            episodes: r.trajectories,
            T: r.T,
            em: r.em,
            C: r.trajectories ? r.humanSteps / r.trajectories : 0,
            cost: r.cost,
            R: r.R,
            hir: r.hir,
            humanSteps: r.humanSteps,
            steps: r.steps,
          }
        }
      },
    },
  }
}
