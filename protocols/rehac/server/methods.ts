import { z } from 'zod'
import { type Actor, db, hasScope, requireStudyAccess } from '@/lib/server/sdk'
import { rehacReward } from '@/protocols/rehac/core/metrics'
import { choicePath, type RehacState, type RehacStep } from '@/protocols/rehac/core/protocol'
import { coverage, MESSAGES_PER_STEP, parseBranchKey } from '@/protocols/rehac/core/tree'
import { type ImportedReward, replayStored } from '@/protocols/rehac/server/session'
import { DEFAULT_LAMBDA, resultOf } from '@/protocols/rehac/server/views'

/**
 * ReHAC's pages under a study (issue: method comparison, Table 4 / Figure 2 of Feng et al.):
 *   /studies/{id}/p/rehac/methods?lambda=0.08   one row per ReHAC run (= a method): HIR, T, C, R, n
 *   /studies/{id}/p/rehac/tree/{runId}/{instanceId}?lambda=…   one question's trajectory tree
 * and the study card linking to them. The method table is one SQL query over the stored sessions and
 * messages (λ bound as a parameter), the same figures as core/metrics.ts on the replayed episodes
 * (protocols/rehac/tests/methods.test.ts holds them equal).
 */

export const LAMBDA_PRESETS = [0.06, 0.08, 0.1] as const

const lambdaArg = z.object({
  lambda: z.coerce
    .number({ error: 'λ must be a number between 0 and 1 (e.g. 0.08).' })
    .finite('λ must be a finite number.')
    .min(0, 'λ must be at least 0.')
    .max(1, 'λ is at most 1.')
    .default(DEFAULT_LAMBDA),
})

/** λ of a page from its search parameters: the value, or the default and the message to show. */
export function lambdaOf(args: Record<string, string>): { lambda: number; error: string | null; raw: string } {
  const raw = args.lambda ?? ''
  const r = lambdaArg.safeParse(raw.trim() === '' ? {} : { lambda: raw.trim() })
  if (r.success) return { lambda: r.data.lambda, error: null, raw }
  return { lambda: DEFAULT_LAMBDA, error: r.error.issues[0]?.message ?? 'Invalid λ.', raw }
}

/** A run's method, named from its decider seat fill (agent-only, random seed k, prompt, HTTP, trained …). */
export function methodLabel(seats: unknown): string {
  const d = (
    seats as {
      decider?: {
        kind?: string
        program?: string
        params?: Record<string, unknown>
        model?: { model?: string }
      }
    } | null
  )?.decider
  if (!d?.kind) return 'Unknown decider'
  if (d.kind === 'llm') return `Prompt (${d.model?.model ?? 'LLM'})`
  if (d.kind === 'human') return 'A person decides'
  if (d.kind !== 'program') return d.kind
  const p = d.params ?? {}
  const seed = typeof p.seed === 'number' ? ` seed ${p.seed}` : ''
  switch (d.program) {
    case 'agent-only':
      return 'Agent only'
    case 'human-only':
      return 'Human only'
    case 'random':
      return `Random${seed}`
    case 'tree':
      return `Collection tree${seed}`
    case 'schedule':
      return `Schedule${typeof p.solvers === 'string' ? ` ${p.solvers}` : ''}`
    case 'http-policy':
      return 'HTTP policy'
    case 'trained-policy':
      return 'Trained policy'
    case 'imported':
      return 'Imported (from a file)'
    default:
      return `Program ${d.program ?? '?'}`
  }
}

// The answer normalisation of core/metrics.ts `normalizeAnswer`, as PostgreSQL regular expressions.
const PUNCT = String.raw`[!"#$%&'()*+,\-./:;<=>?@[\\\]^_\`{|}~]`
const ARTICLES = String.raw`(^|[^a-z0-9_])(a|an|the)(?=[^a-z0-9_]|$)`
const SPACES = String.raw`\s+`
const REWARD = String.raw`reward = ([0-9]*\.?[0-9]+|[0-9]+\.)\s*$`

export interface MethodRow {
  runId: string
  name: string
  status: string
  method: string
  createdAt: Date
  /** Finished trajectories (sessions done). */
  n: number
  steps: number
  humanSteps: number
  /** Fractions (the page shows ×100); null without finished trajectories. */
  hir: number | null
  T: number | null
  C: number | null
  R: number | null
}

/**
 * Per ReHAC run of the study, over its finished sessions: Σ steps, Σ human steps, mean T (token F1 for
 * QA, yes/no only exact; SQL: 1 when a statement matched, the shown reward on submit, 0 at the
 * threshold; an imported episode: its file's T, `config.imported`), mean C and mean (T − λ·C). One statement; λ and the patterns are bound parameters.
 */
export async function methodRows(studyId: string, lambda: number): Promise<MethodRow[]> {
  const rows = await db.$queryRaw<
    Array<{
      runId: string
      name: string
      status: string
      seats: unknown
      createdAt: Date
      n: number
      steps: number
      human: number
      t: number | null
      c: number | null
      r: number | null
    }>
  >`
    WITH s AS (
      SELECT ps.id, ps."runId", ps.instance->>'kind' AS kind, coalesce(ps.instance->>'answer', '') AS gold,
             (ps.config->'imported'->>'T')::float8 AS imported_t
      FROM "ProtocolSession" ps JOIN "Run" r ON r.id = ps."runId"
      WHERE r."studyId" = ${studyId} AND r.protocol = 'rehac' AND ps.status = 'done'
    ),
    st AS (
      SELECT m."sessionId" AS id, count(*)::int AS steps,
             (count(*) FILTER (WHERE m.body->>'sender' = 'human'))::int AS human
      FROM "ProtocolMessage" m JOIN s ON s.id = m."sessionId"
      WHERE m.body->>'kind' = 'step'
      GROUP BY m."sessionId"
    ),
    fin AS (
      SELECT DISTINCT ON (o."sessionId") o."sessionId" AS id, o.body->>'text' AS text,
             a.body->'action'->>'type' AS type, a.body->'action'->>'arg' AS arg
      FROM "ProtocolMessage" o JOIN s ON s.id = o."sessionId"
      JOIN "ProtocolMessage" a ON a."sessionId" = o."sessionId" AND a.body->>'kind' = 'step'
                               AND a.body->>'t' = o.body->>'t'
      WHERE o.body->>'kind' = 'observation' AND (o.body->>'finished')::boolean
      ORDER BY o."sessionId", o.seq DESC
    ),
    norm AS (
      SELECT s.id, v.side,
             CASE y.n WHEN 'yes' THEN 'true' WHEN 'no' THEN 'false' ELSE y.n END AS n
      FROM s LEFT JOIN fin f ON f.id = s.id
      CROSS JOIN LATERAL (VALUES ('p', CASE WHEN f.type = 'finish' THEN f.arg ELSE '' END), ('g', s.gold)) AS v(side, raw)
      CROSS JOIN LATERAL (
        SELECT btrim(regexp_replace(
                 regexp_replace(regexp_replace(lower(v.raw), ${PUNCT}, '', 'g'), ${ARTICLES}, '\\1 ', 'g'),
                 ${SPACES}, ' ', 'g')) AS n
      ) AS y
    ),
    tok AS (
      SELECT norm.id, norm.side, t.tok, row_number() OVER (PARTITION BY norm.id, norm.side, t.tok) AS k
      FROM norm CROSS JOIN LATERAL regexp_split_to_table(norm.n, ' ') AS t(tok)
      WHERE norm.n <> ''
    ),
    counts AS (
      SELECT s.id,
             (SELECT count(*) FROM tok WHERE tok.id = s.id AND tok.side = 'p') AS np,
             (SELECT count(*) FROM tok WHERE tok.id = s.id AND tok.side = 'g') AS ng,
             (SELECT count(*) FROM tok p JOIN tok g ON g.id = p.id AND g.side = 'g' AND g.tok = p.tok AND g.k = p.k
               WHERE p.id = s.id AND p.side = 'p') AS same
      FROM s
    ),
    traj AS (
      SELECT s.id, s."runId", coalesce(st.steps, 0) AS steps, coalesce(st.human, 0) AS human,
        CASE
          WHEN s.imported_t IS NOT NULL THEN s.imported_t
          WHEN s.kind = 'sql' THEN
            CASE WHEN f.type = 'sql' THEN 1.0
                 WHEN f.type = 'submit' THEN least(1.0, greatest(0.0, coalesce(substring(f.text FROM ${REWARD})::float8, 0.0)))
                 ELSE 0.0 END
          WHEN (p.n IN ('true', 'false', 'noanswer') OR g.n IN ('true', 'false', 'noanswer')) AND p.n <> g.n THEN 0.0
          WHEN c.same = 0 THEN 0.0
          ELSE 2.0 * c.same / (c.np + c.ng)
        END::float8 AS t
      FROM s
      LEFT JOIN st ON st.id = s.id
      LEFT JOIN fin f ON f.id = s.id
      JOIN counts c ON c.id = s.id
      JOIN norm p ON p.id = s.id AND p.side = 'p'
      JOIN norm g ON g.id = s.id AND g.side = 'g'
    )
    SELECT r.id AS "runId", r.name, r.status, r.seats, r."createdAt",
           count(traj.id)::int AS n,
           coalesce(sum(traj.steps), 0)::int AS steps,
           coalesce(sum(traj.human), 0)::int AS human,
           avg(traj.t)::float8 AS t,
           avg(traj.human)::float8 AS c,
           avg(traj.t - ${lambda}::float8 * traj.human)::float8 AS r
    FROM "Run" r LEFT JOIN traj ON traj."runId" = r.id
    WHERE r."studyId" = ${studyId} AND r.protocol = 'rehac'
    GROUP BY r.id
    ORDER BY r."createdAt", r.id`
  return rows.map((r) => ({
    runId: r.runId,
    name: r.name,
    status: r.status,
    method: methodLabel(r.seats),
    createdAt: r.createdAt,
    n: r.n,
    steps: r.steps,
    humanSteps: r.human,
    hir: r.steps ? r.human / r.steps : null,
    T: r.n ? r.t : null,
    C: r.n ? r.c : null,
    R: r.n ? r.r : null,
  }))
}

// ───────────────────────────── replayed episodes of one run ─────────────────────────────

interface Replayed {
  sessionId: string
  key: string
  parentId: string | null
  forkSeq: number | null
  status: string
  instanceId: string
  state: RehacState
  /** An imported episode's reward from its file (T and EM), else null. */
  imported: ImportedReward | null
}

async function replayed(runId: string, where: { instanceId?: string } = {}): Promise<Replayed[]> {
  const sessions = await db.protocolSession.findMany({
    where: { runId, ...(where.instanceId ? { instance: { path: ['id'], equals: where.instanceId } } : {}) },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: {
      id: true,
      key: true,
      parentId: true,
      forkSeq: true,
      status: true,
      config: true,
      instance: true,
      messages: { orderBy: { seq: 'asc' }, select: { body: true } },
    },
  })
  return sessions.map((s) => {
    const { state, imported } = replayStored(s)
    return {
      sessionId: s.id,
      key: s.key,
      parentId: s.parentId,
      forkSeq: s.forkSeq,
      status: s.status,
      instanceId: state.instance.id,
      state,
      imported,
    }
  })
}

export interface CoverageRow {
  instanceId: string
  question: string
  trajectories: number
  /** Prefixes (states) the finished trajectories reached. */
  states: number
  /** Of them, with both branches (agent and human) taken. */
  both: number
  /** With one branch only. */
  one: number
}

/** Per question of a run: of the states its finished trajectories reached, how many have both branches. */
export async function coverageRows(runId: string): Promise<CoverageRow[]> {
  const byQuestion = new Map<string, { question: string; paths: string[] }>()
  for (const e of await replayed(runId)) {
    const q = byQuestion.get(e.instanceId) ?? { question: e.state.instance.question, paths: [] }
    if (e.status === 'done' && e.state.reason) q.paths.push(choicePath(e.state))
    byQuestion.set(e.instanceId, q)
  }
  return [...byQuestion].map(([instanceId, q]) => {
    const c = coverage(q.paths)
    return {
      instanceId,
      question: q.question.slice(0, 200),
      trajectories: q.paths.length,
      states: c.states,
      both: c.covered,
      one: c.states - c.covered,
    }
  })
}

// ───────────────────────────── the pages ─────────────────────────────

export interface MethodsPageData {
  kind: 'methods'
  lambda: number
  lambdaInput: string
  error: string | null
  presets: readonly number[]
  rows: MethodRow[]
  /** Per run with trajectories (forking runs, i.e. collections, first): its coverage per question. */
  coverage: Array<{ runId: string; name: string; method: string; forks: boolean; questions: CoverageRow[] }>
}

export async function methodsPage(studyId: string, args: Record<string, string>): Promise<MethodsPageData> {
  const { lambda, error, raw } = lambdaOf(args)
  const rows = await methodRows(studyId, lambda)
  const coverageList: MethodsPageData['coverage'] = []
  for (const r of rows) {
    const forked = await db.protocolSession.count({ where: { runId: r.runId, parentId: { not: null } } })
    // Every run with trajectories gets its per-question tree links; forking runs (collections) first.
    if (forked || r.n)
      coverageList.push({
        runId: r.runId,
        name: r.name,
        method: r.method,
        forks: forked > 0,
        questions: await coverageRows(r.runId),
      })
  }
  coverageList.sort((a, b) => Number(b.forks) - Number(a.forks))
  return { kind: 'methods', lambda, lambdaInput: raw, error, presets: LAMBDA_PRESETS, rows, coverage: coverageList }
}

export interface TrajectoryView {
  sessionId: string
  key: string
  /** The branch a collection started it for ('' root; null for a plan's session). */
  branch: string | null
  path: string
  status: string
  ended: boolean
  /** Steps (solver badges), thought, action, observation. */
  steps: Array<Pick<RehacStep, 't' | 'solver' | 'thought' | 'action' | 'observation'>>
  answer: string | null
  T: number | null
  C: number | null
  R: number | null
  parentKey: string | null
  /** The step whose decision a fork forced (1-based); null for a root. */
  forkAt: number | null
}

/**
 * A state of the tree (a prefix of choices) and its two branches: the ended trajectories through
 * prefix + '0' (agent acts at step `at`) and prefix + '1' (human acts), with their mean T and R at λ
 * (the Monte-Carlo R̄(s, a) of core/advantages.ts).
 */
export interface ForkPair {
  prefix: string
  at: number
  agent: { keys: string[]; T: number | null; R: number | null }
  human: { keys: string[]; T: number | null; R: number | null }
  /** Both branches ended and the human branch's mean T or R differs from the agent branch's. */
  changed: boolean
  deltaT: number | null
  deltaR: number | null
}

export interface TreePageData {
  kind: 'tree'
  lambda: number
  lambdaInput: string
  error: string | null
  presets: readonly number[]
  run: { id: string; name: string; method: string }
  instance: { id: string; question: string; gold: string | null }
  trajectories: TrajectoryView[]
  forks: ForkPair[]
  coverage: { states: number; both: number; one: number }
}

export async function treePage(
  studyId: string,
  runId: string,
  instanceId: string,
  args: Record<string, string>,
): Promise<TreePageData | null> {
  const run = await db.run.findUnique({
    where: { id: runId },
    select: { id: true, studyId: true, protocol: true, name: true, seats: true },
  })
  if (!run || run.studyId !== studyId || run.protocol !== 'rehac') return null
  const { lambda, error, raw } = lambdaOf(args)
  const list = await replayed(runId, { instanceId })
  if (!list.length) return null
  const keyOf = new Map(list.map((e) => [e.sessionId, e.key]))
  const trajectories: TrajectoryView[] = list.map((e) => {
    const ended = e.status === 'done' && e.state.reason !== null
    const res = ended ? resultOf(e.state, lambda, e.imported) : null
    return {
      sessionId: e.sessionId,
      key: e.key,
      branch: parseBranchKey(e.key)?.branch ?? null,
      path: choicePath(e.state),
      status: e.status,
      ended,
      steps: e.state.steps.map((s) => ({
        t: s.t,
        solver: s.solver,
        thought: s.thought,
        action: s.action,
        observation: s.observation,
      })),
      answer: res ? res.answer : null,
      T: res?.T ?? null,
      C: res?.humanSteps ?? null,
      R: res ? rehacReward(res.T, res.humanSteps, lambda) : null,
      parentKey: e.parentId ? (keyOf.get(e.parentId) ?? null) : null,
      forkAt: e.parentId && e.forkSeq !== null ? Math.floor(e.forkSeq / MESSAGES_PER_STEP) + 1 : null,
    }
  })
  const ended = trajectories.filter((t) => t.ended)
  const side = (branch: string) => {
    const through = ended.filter((t) => t.path.startsWith(branch))
    const mean = (xs: number[]) => (xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : null)
    return {
      keys: through.map((t) => t.key),
      T: mean(through.map((t) => t.T as number)),
      R: mean(through.map((t) => t.R as number)),
    }
  }
  const states = new Set<string>()
  for (const t of ended) for (let i = 0; i < t.path.length; i++) states.add(t.path.slice(0, i))
  const forks: ForkPair[] = [...states]
    .sort((a, b) => a.length - b.length || a.localeCompare(b))
    .map((prefix) => {
      const agent = side(`${prefix}0`)
      const human = side(`${prefix}1`)
      const both = agent.R !== null && human.R !== null
      const deltaT = both ? (human.T as number) - (agent.T as number) : null
      const deltaR = both ? (human.R as number) - (agent.R as number) : null
      return {
        prefix,
        at: prefix.length + 1,
        agent,
        human,
        changed: both && (Math.abs(deltaT as number) > 1e-12 || Math.abs(deltaR as number) > 1e-12),
        deltaT,
        deltaR,
      }
    })
  const c = coverage(ended.map((t) => t.path))
  const first = list[0] as Replayed
  const anyEnded = trajectories.some((t) => t.ended)
  return {
    kind: 'tree',
    lambda,
    lambdaInput: raw,
    error,
    presets: LAMBDA_PRESETS,
    run: { id: run.id, name: run.name, method: methodLabel(run.seats) },
    // The gold answer only once an episode of the question has ended (as the session page shows it).
    instance: {
      id: instanceId,
      question: first.state.instance.question,
      gold: anyEnded ? first.state.instance.answer : null,
    },
    trajectories: trajectories.sort((a, b) => a.path.localeCompare(b.path) || a.key.localeCompare(b.key)),
    forks,
    coverage: { states: c.states, both: c.covered, one: c.states - c.covered },
  }
}

const segment = z.string().min(1).max(100)

export interface TrainPageData {
  kind: 'train'
  runs: { id: string; name: string; ended: number }[]
}

/**
 * The training form's page: the study's ReHAC runs with their ended episodes. Training reads every
 * trajectory of the study, researcher work like its exports: write access, as `rehac.train` checks.
 */
async function trainPage(actor: Actor, studyId: string): Promise<TrainPageData> {
  await requireStudyAccess(db, actor, studyId, 'write')
  const runs = await db.run.findMany({
    where: { studyId, protocol: 'rehac' },
    select: { id: true, name: true },
    orderBy: { createdAt: 'asc' },
  })
  const ended = await db.protocolSession.groupBy({
    by: ['runId'],
    where: { runId: { in: runs.map((r) => r.id) }, status: 'done' },
    _count: { _all: true },
  })
  const count = new Map(ended.map((e) => [e.runId, e._count._all]))
  return { kind: 'train', runs: runs.map((r) => ({ ...r, ended: count.get(r.id) ?? 0 })) }
}

/** `views.studyPage`: read access is checked by the service; null → 404. */
export async function rehacStudyPage(
  actor: Actor,
  studyId: string,
  path: string[],
  args: Record<string, string>,
): Promise<{ title: string; data: unknown } | null> {
  if (path.length === 1 && path[0] === 'methods')
    return { title: 'ReHAC method comparison', data: await methodsPage(studyId, args) }
  if (path.length === 1 && path[0] === 'train')
    return { title: 'Train a ReHAC collaboration policy', data: await trainPage(actor, studyId) }
  if (path.length === 3 && path[0] === 'tree') {
    const runId = segment.safeParse(path[1])
    const instanceId = segment.safeParse(path[2])
    if (!runId.success || !instanceId.success) return null
    const data = await treePage(studyId, runId.data, instanceId.data, args)
    return data ? { title: `ReHAC tree: ${data.instance.id}`, data } : null
  }
  return null
}

/** `views.studyPanel`: the study's ReHAC runs (null when it has none: no card). */
export async function rehacStudyPanel(actor: Actor, studyId: string) {
  const { access } = await requireStudyAccess(db, actor, studyId, 'read')
  const runs = await db.run.count({ where: { studyId, protocol: 'rehac' } })
  // The training page is staff work (as `rehac.train`): offered only to those it opens for.
  return { runs, canTrain: access.includes('write') && hasScope(actor.role, 'exports:read') }
}
