/**
 * `npm run bench:mint`: MINT (issue 26, section Performance): its Python sandbox, then whole episodes on
 * the engine against the fake LLM.
 *
 *   - Sandbox (protocols/mint/server/sandbox.ts, no database): warm latency of `print(1)` in a live
 *     sandbox (a cell's round trip Node → driver → Node), p50 and p95 over --runs cells after a warm-up,
 *     target p50 < 80 ms; warm latency of a sympy solve (sympy already imported); cold start (bwrap,
 *     namespaces, python3 and the driver up to the first `print(1)`, and with `import numpy, sympy`);
 *     --cells sandboxes (8) each running a sympy solve at once, every output checked: no failures.
 *   - Episodes: --episodes MINT episodes (100, k = 5, p = 2, no feedback) through the real engine (a run,
 *     the job queue's workers, sessions in PostgreSQL, the openai SDK against the fake OpenAI-compatible
 *     server in a child process at --latency ms), --concurrency episodes at once (the run's "sessions at
 *     once", maxInFlight, and as many workers). Every episode uses 4 of its 5 turns: a Python cell, a
 *     wrong proposal, a second cell that reads the first cell's variables, the right proposal (4 model
 *     calls, 2 cells, 2 verdicts).
 *     The ideal: an episode's critical path is its model calls × the latency plus its own cells' time as
 *     recorded (ProgramRun.durationMs); the ideal wall is max(Σ paths / concurrency, longest path), the
 *     lower bound for any schedule of those paths on that many lanes. Also printed: the paths scheduled
 *     whole on the lanes in order (`lanes_ms`, ⌈100/16⌉ paths when all are equal), and the ideal with
 *     the sandbox part's uncontended cells (a cold start, then warm cells) instead of the cells as
 *     measured in the run. Target: wall
 *     ≤ 1.3 × ideal.
 *
 *     Where the time goes: an episode's span (first model call to last message) against its path, the
 *     episodes on the workers on average, per message the time beyond its own work (queue, runner,
 *     database), the CPU the run used (this process, the sandboxes, the fake server, its PostgreSQL
 *     backends; the sandboxes with the spawner that starts them), event-loop utilisation and delay, and
 *     how long Node's spawn() held the event loop (fork/exec is synchronous in Node and grows with the
 *     process's memory: why the sandboxes are started by the spawner, which Node starts once).
 *     The run sets "sessions at once" to --concurrency: without it (--in-flight 0) all episodes
 *     advance round robin and each one's sandbox is evicted between its cells (replays); the pool is
 *     sized to the concurrency (--sandboxes; the server's PARLEY_MINT_SANDBOXES defaults to 8).
 *
 * The episodes use a throwaway database on the server in DATABASE_URL (or the embedded PostgreSQL).
 * Without bubblewrap/python3 the bench prints why and a JSON line saying it skipped. Last line: one JSON
 * object with every figure.
 *
 *   npx tsx scripts/bench-mint.ts [--runs 200] [--cold 10] [--cells 8] [--batches 5]
 *                                 [--episodes 100] [--latency 100] [--concurrency 16] [--in-flight N] [--sandboxes N]
 */
import childProcess from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import os from 'node:os'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { z } from 'zod'
import { configurePool, release, releaseAll, runCell, sandboxStatus } from '../protocols/mint/server/sandbox'
import { benchArgs, checkedArgs } from './bench-args'
import { benchWorld, fakeLlmChild, procStat, quantile, round, throwawayDatabase, waitRunDone } from './bench-support'

const USAGE = `Usage: npm run bench:mint -- [options]

MINT: its Python sandbox (bubblewrap + /usr/bin/python3; warm print(1) and sympy cells, cold start,
cells at once), then whole episodes on the engine against the fake LLM (a throwaway database on the
server in DATABASE_URL, or the embedded PostgreSQL), wall time vs the ideal. Last line: JSON.

  --runs N          warm cells timed per measure (default 200)
  --cold N          cold starts timed (default 10)
  --cells N         sandboxes running a cell at once (default 8)
  --batches N       batches of those cells timed (default 5)
  --episodes N      episodes, k = 5 (default 100; 0 skips the part)
  --latency MS      model latency (default 100)
  --concurrency N   episodes at once, and as many workers (default 16)
  --in-flight N     the run's sessions at once (maxInFlight; default: --concurrency; 0: no limit)
  --sandboxes N     live sandboxes the pool keeps (default: --concurrency; the server's default is
                    PARLEY_MINT_SANDBOXES, 8)
  -h, --help        this text`

const count = (min: number) => z.coerce.number().int().min(min)
const args = checkedArgs(
  USAGE,
  z.object({
    runs: count(1),
    cold: count(1),
    cells: count(1),
    batches: count(1),
    episodes: count(0),
    latency: count(0),
    concurrency: count(1),
    sandboxes: count(1).optional(),
    'in-flight': count(0).optional(),
  }),
  benchArgs(USAGE, {
    runs: { type: 'string', default: '200' },
    cold: { type: 'string', default: '10' },
    cells: { type: 'string', default: '8' },
    batches: { type: 'string', default: '5' },
    episodes: { type: 'string', default: '100' },
    latency: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '16' },
    sandboxes: { type: 'string' },
    'in-flight': { type: 'string' },
  }),
)
const K = 5

/**
 * The time Node's spawn() holds the event loop (fork/exec is synchronous, and its cost grows with the
 * process's memory): every spawn of this process is timed (the sandboxes' spawner among them; the
 * spawner, not Node, starts each sandbox's bwrap).
 */
const spawnTimes: number[] = []
{
  const original = childProcess.spawn
  childProcess.spawn = ((...a: Parameters<typeof original>) => {
    const t = performance.now()
    try {
      return original(...a)
    } finally {
      spawnTimes.push(performance.now() - t)
    }
  }) as typeof original
  syncBuiltinESMExports()
}
const SANDBOXES = args.sandboxes ?? args.concurrency
const IN_FLIGHT = args['in-flight'] ?? args.concurrency

const stats = (xs: number[], d = 1) => ({
  p50_ms: round(quantile(xs, 0.5), d),
  p95_ms: round(quantile(xs, 0.95), d),
  n: xs.length,
})

function check(output: string, want: string, what: string) {
  if (output !== want) throw new Error(`${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(output)}`)
}

// ───────────────────────────── the sandbox ─────────────────────────────

/** Runs `code` as the next cell of `key`'s episode (the live sandbox when it ran exactly `cells`). */
async function cell(key: string, cells: string[], code: string) {
  const t0 = performance.now()
  const r = await runCell({ sessionKey: key, cells, code })
  const ms = performance.now() - t0
  cells.push(code)
  return { r, ms }
}

// Warm print(1). The episode's cells grow by one per call, as an episode's would.
async function warmPrint() {
  const cells: string[] = []
  for (let i = 0; i < 10; i++) await cell('bench-print', cells, 'print(1)')
  const times: number[] = []
  for (let i = 0; i < args.runs; i++) {
    const { r, ms } = await cell('bench-print', cells, 'print(1)')
    check(r.output, '1\n', 'print(1)')
    if (r.coldStart) throw new Error('the warm sandbox was replaced')
    times.push(ms)
  }
  release('bench-print')
  return { ...stats(times), target_p50_ms: 80 }
}

// A new equation each time (sympy caches solve's results).
const solve = (i: number) => `sp.solve(x**2 - ${i + 1}**2, x)`
async function warmSympy() {
  const cells: string[] = []
  await cell('bench-sympy', cells, "import sympy as sp\nx = sp.symbols('x')")
  for (let i = 0; i < 5; i++) await cell('bench-sympy', cells, solve(1000 + i))
  const times: number[] = []
  for (let i = 0; i < Math.min(args.runs, 100); i++) {
    const { r, ms } = await cell('bench-sympy', cells, solve(i))
    check(r.output, `Out[${cells.length + 1}]: [${-(i + 1)}, ${i + 1}]\n`, 'sympy solve')
    times.push(ms)
  }
  release('bench-sympy')
  return stats(times)
}

async function cold() {
  const plain: number[] = []
  const withImports: number[] = []
  for (let i = 0; i < args.cold; i++) {
    const a = await cell(`bench-cold-${i}`, [], 'print(1)')
    check(a.r.output, '1\n', 'cold print(1)')
    if (!a.r.coldStart) throw new Error('not a cold start')
    plain.push(a.ms)
    release(`bench-cold-${i}`)
    const b = await cell(`bench-cold-imports-${i}`, [], 'import numpy, sympy\nprint(1)')
    check(b.r.output, '1\n', 'cold imports')
    withImports.push(b.ms)
    release(`bench-cold-imports-${i}`)
  }
  return { print_1: stats(plain), numpy_sympy_import: stats(withImports) }
}

async function atOnce() {
  const n = args.cells
  const keys = Array.from({ length: n }, (_, j) => `bench-conc-${j}`)
  const cells = keys.map(() => [] as string[])
  await Promise.all(keys.map((k, j) => cell(k, cells[j] as string[], "import sympy as sp\nx = sp.symbols('x')")))
  const walls: number[] = []
  const each: number[] = []
  for (let b = 0; b < args.batches; b++) {
    const t0 = performance.now()
    const v = (j: number) => b * n + j
    const rs = await Promise.all(keys.map((k, j) => cell(k, cells[j] as string[], `sp.solve(x - ${v(j)}, x)`)))
    walls.push(performance.now() - t0)
    rs.forEach(({ r, ms }, j) => {
      check(r.output, `Out[${(cells[j] as string[]).length + 1}]: [${v(j)}]\n`, `concurrent cell ${j}`)
      if (r.exitStatus !== 0) throw new Error(`concurrent cell ${j} failed`)
      each.push(ms)
    })
  }
  // Cold: n new sandboxes at once, each importing sympy and solving.
  for (const k of keys) release(k)
  const t0 = performance.now()
  const rs = await Promise.all(
    keys.map((k, j) =>
      runCell({ sessionKey: `${k}-cold`, code: `import sympy as sp\nx = sp.symbols('x')\nsp.solve(x - ${j}, x)` }),
    ),
  )
  const coldWall = performance.now() - t0
  for (const [j, r] of rs.entries()) check(r.output, `Out[2]: [${j}]\n`, `concurrent cold cell ${j}`)
  return {
    cells: n,
    warm_batch_wall: stats(walls),
    warm_cell: stats(each),
    cold_batch_wall_ms: round(coldWall, 1),
    failures: 0,
  }
}

async function sandboxPart() {
  const print1 = await warmPrint()
  console.log(`sandbox: warm print(1) p50 ${print1.p50_ms} ms, p95 ${print1.p95_ms} ms (target p50 < 80 ms)`)
  const sympy = await warmSympy()
  console.log(`sandbox: warm sympy solve p50 ${sympy.p50_ms} ms, p95 ${sympy.p95_ms} ms`)
  const coldStart = await cold()
  console.log(
    `sandbox: cold start to print(1) p50 ${coldStart.print_1.p50_ms} ms; with import numpy, sympy p50 ${coldStart.numpy_sympy_import.p50_ms} ms`,
  )
  const conc = await atOnce()
  console.log(
    `sandbox: ${conc.cells} sympy cells at once: warm batch p50 ${conc.warm_batch_wall.p50_ms} ms, cold batch ${conc.cold_batch_wall_ms} ms, no failures`,
  )
  releaseAll()
  return { warm_print_1: print1, warm_sympy_solve: sympy, cold_start: coldStart, at_once: conc }
}

// ───────────────────────────── episodes ─────────────────────────────

/** Every task's answer (the wrong proposal is far from it: GSM8K accepts 5 % relative tolerance). */
const ANSWER = 42
const WRONG = 24
const task = (i: number) => ({
  id: `bench-${i}`,
  dataset: 'gsm8k',
  prompt: `Shelf ${i} of a pantry has 6 rows of 7 jars each. How many jars are on shelf ${i}? Solution output format: an integer.`,
  reference: String(ANSWER),
})

/**
 * The evaluated model, by what the conversation holds so far (the first rule that fits answers; each
 * rule's one reply repeats): a cell that computes the answer, a wrong proposal, a cell that reads the
 * first cell's variables, the right proposal. The markers are printed by the cells, so a rule fits
 * only once the tool has answered.
 */
function episodeScript(latencyMs: number) {
  const reply = (text: string) => ({ text, latencyMs })
  return [
    {
      match: { model: 'gen', contains: `bench-check ${ANSWER}` },
      replies: [reply(`<thought> The tool agrees. </thought>\nThe answer is <solution> ${ANSWER} </solution>.`)],
    },
    {
      match: { model: 'gen', contains: 'bench-guess' },
      replies: [
        reply(
          '<thought> That was wrong; I check the product again. </thought>\n<execute>\nprint("bench-check", rows * jars)\n</execute>',
        ),
      ],
    },
    {
      match: { model: 'gen', contains: `bench-solve ${ANSWER}` },
      replies: [
        reply(`<thought> bench-guess: the digits swap. </thought>\nThe answer is <solution> ${WRONG} </solution>.`),
      ],
    },
    {
      match: { model: 'gen' },
      replies: [
        reply(
          '<thought> I compute it. </thought>\n<execute>\nrows, jars = 6, 7\nprint("bench-solve", rows * jars)\n</execute>',
        ),
      ],
    },
  ]
}

/**
 * CPU time (ms) so far of what an episode run keeps busy: this process, the sandboxes (the spawner
 * that starts them, live, with the sandboxes it reaped, plus this process's reaped children: a
 * spawner that ended; bwrap waits for its python3), the fake server, and the PostgreSQL backends
 * connected to `database` (by pid, as they are at the moment).
 */
function cpuNow(fakePid: number, database: string) {
  const ms = (f: string[], a: number, b: number) => (Number(f[a]) + Number(f[b])) * 10 // USER_HZ = 100
  const self = procStat(process.pid)
  const postgres = new Map<number, number>()
  let spawners = 0
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8')
      if (cmd.startsWith('postgres') && cmd.includes(` ${database} `))
        postgres.set(Number(name), ms(procStat(name), 11, 12))
      else if (cmd.includes('spawner.py') && cmd.includes(`"owner":${process.pid}`)) {
        const f = procStat(name)
        spawners += ms(f, 11, 12) + ms(f, 13, 14)
      }
    } catch {}
  }
  let fake = 0
  try {
    fake = ms(procStat(fakePid), 11, 12)
  } catch {}
  return { node: ms(self, 11, 12), sandboxes: ms(self, 13, 14) + spawners, fake, postgres }
}

/** The CPU used between two readings of cpuNow, ms per part (a backend new since the first counts whole). */
function cpuSpent(a: ReturnType<typeof cpuNow>, b: ReturnType<typeof cpuNow>) {
  let postgres = 0
  for (const [pid, t] of b.postgres) postgres += t - (a.postgres.get(pid) ?? 0)
  const parts = { node: b.node - a.node, sandboxes: b.sandboxes - a.sandboxes, fake_server: b.fake - a.fake, postgres }
  return { ...parts, total: parts.node + parts.sandboxes + parts.fake_server + parts.postgres }
}

/** The least time `paths` take on `lanes` lanes when each path runs whole on one lane, in order. */
function lanesMs(paths: readonly number[], lanes: number): number {
  const free = Array.from({ length: lanes }, () => 0)
  for (const p of paths) {
    let at = 0
    for (let j = 1; j < lanes; j++) if ((free[j] as number) < (free[at] as number)) at = j
    free[at] = (free[at] as number) + p
  }
  return Math.max(...free)
}

async function episodesPart(quiet: { coldMs: number; warmMs: number }) {
  const N = args.episodes
  const C = args.concurrency
  configurePool({ maxLive: SANDBOXES })
  const database = await throwawayDatabase({ prefix: 'parley_mintbench' })
  const fake = await fakeLlmChild({ latencyMs: args.latency, script: episodeScript(args.latency) })
  try {
    const { db } = await import('../lib/server/db')
    const { execute } = await import('../lib/server/operation')
    const { createRun, startRun } = await import('../lib/server/services/runs')
    const { startWorkers } = await import('../lib/server/engine/jobs')
    const { observeSteps } = await import('../lib/server/engine/runner')
    const { mintDataset } = await import('../protocols/mint/fixture')
    // In-process: the workers and the run's sessions-at-once bound the concurrency, not the connection.
    const { actor, study, conn } = await benchWorld({ baseURL: fake.url, defaultModel: 'gen', maxConcurrency: C * 2 })
    const run = async (name: string, n: number) => {
      const created = await execute(createRun, actor, {
        protocol: 'mint',
        studyId: study.id,
        name,
        datasetId: await mintDataset(
          study.id,
          n,
          Array.from({ length: n }, (_, i) => task(i)),
        ),
        ...(IN_FLIGHT > 0 ? { maxInFlight: IN_FLIGHT } : {}),
        config: { k: K, feedback: { mode: 'none' } },
        seats: {
          agent: { kind: 'llm', model: { connectionId: conn.id, model: 'gen' } },
          feedback: { kind: 'program', program: 'no-feedback' },
        },
      })
      if (!created.ok) throw new Error(`${created.error} ${JSON.stringify(created.fieldErrors ?? {})}`)
      return created.data.id
    }
    const workers = await startWorkers(C)
    // Warm-up: JIT, pools, the queue schema, the prompts.
    const warm = await run('warm-up', 4)
    await execute(startRun, actor, { runId: warm })
    await waitRunDone(warm)

    const steps: Array<{ kind: string; totalMs: number; llmMs: number }> = []
    observeSteps((t) => steps.push(t))
    const runId = await run('bench', N)
    const t0 = performance.now()
    const dbName = new URL(process.env.DATABASE_URL as string).pathname.slice(1)
    const fakePid = fake.child.pid as number
    const cpu0 = cpuNow(fakePid, dbName)
    const elu0 = performance.eventLoopUtilization()
    const spawned = spawnTimes.length
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    await execute(startRun, actor, { runId })
    await waitRunDone(runId)
    const wall = performance.now() - t0
    const cpu = cpuSpent(cpu0, cpuNow(fakePid, dbName))
    const elu = performance.eventLoopUtilization(elu0)
    delay.disable()
    const spawns = spawnTimes.slice(spawned)
    observeSteps(undefined)
    await workers.stop()

    const perEpisode = await db.$queryRaw<
      Array<{
        id: string
        status: string
        reason: string | null
        calls: number
        llm_ms: number
        cells: number
        cell_ms: number
        cold: number
        replayed: number
        first_ms: number
        last_ms: number
      }>
    >`
      SELECT s.id, s.status, s."stopReason" AS reason,
        (SELECT count(*)::int FROM "LlmCall" c WHERE c."sessionRef" = s.id) AS calls,
        (SELECT coalesce(sum(c."latencyMs"), 0)::float FROM "LlmCall" c WHERE c."sessionRef" = s.id) AS llm_ms,
        (SELECT count(*)::int FROM "ProgramRun" p WHERE p."sessionId" = s.id AND p.program = 'python') AS cells,
        (SELECT coalesce(sum(p."durationMs"), 0)::float FROM "ProgramRun" p WHERE p."sessionId" = s.id) AS cell_ms,
        (SELECT count(*)::int FROM "ProgramRun" p WHERE p."sessionId" = s.id AND (p.output->>'coldStart')::boolean) AS cold,
        (SELECT coalesce(sum((p.output->>'replayed')::int), 0)::int FROM "ProgramRun" p WHERE p."sessionId" = s.id) AS replayed,
        (SELECT extract(epoch FROM min(c."createdAt"))::float * 1000 - min(c."latencyMs") FROM "LlmCall" c WHERE c."sessionRef" = s.id) AS first_ms,
        (SELECT extract(epoch FROM max(m."createdAt"))::float * 1000 FROM "ProtocolMessage" m WHERE m."sessionId" = s.id) AS last_ms
      FROM "ProtocolSession" s WHERE s."runId" = ${runId} ORDER BY s.position`
    const messages = await db.protocolMessage.count({ where: { session: { runId } } })
    // Per message: the time since the session's previous message minus the step's own work (the model
    // call's measured latency, the cell's recorded duration; a verdict has none): queue, runner, database.
    const gaps = await db.$queryRaw<Array<{ sender: string; gap_ms: number | null }>>`
      SELECT m.sender,
        extract(epoch FROM m."createdAt" - lag(m."createdAt") OVER (PARTITION BY m."sessionId" ORDER BY m.seq))::float * 1000
          - coalesce((SELECT c."latencyMs" FROM "LlmCall" c WHERE c.id = m."llmCallId"), 0)
          - coalesce((SELECT sum(p."durationMs") FROM "ProgramRun" p WHERE p."sessionId" = m."sessionId" AND p.seq = m.seq), 0)
          AS gap_ms
      FROM "ProtocolMessage" m JOIN "ProtocolSession" s ON s.id = m."sessionId" WHERE s."runId" = ${runId}`
    const gapBy: Record<string, { p50_ms: number; p95_ms: number; n: number }> = {}
    for (const sender of new Set(gaps.map((g) => g.sender))) {
      const xs = gaps.filter((g) => g.sender === sender && g.gap_ms !== null).map((g) => g.gap_ms as number)
      if (xs.length) gapBy[sender] = stats(xs, 1)
    }
    const paths = perEpisode.map((e) => e.calls * args.latency + e.cell_ms)
    const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0)
    const ideal = Math.max(sum(paths) / C, Math.max(...paths))
    const lanes = lanesMs(paths, C)
    // The same paths with the sandbox part's uncontended cells: an episode's first cell a cold start
    // (its sandbox is new), the others warm (p50s).
    const quietPaths = perEpisode.map(
      (e) => e.calls * args.latency + (e.cells ? quiet.coldMs + (e.cells - 1) * quiet.warmMs : 0),
    )
    const quietIdeal = Math.max(sum(quietPaths) / C, Math.max(...quietPaths))
    const appended = steps.filter((s) => s.kind === 'appended')
    const overhead = appended.filter((s) => s.llmMs > 0).map((s) => s.totalMs - s.llmMs)
    const cellTimes = perEpisode.map((e) => e.cell_ms)
    const reasons: Record<string, number> = {}
    for (const e of perEpisode) reasons[e.reason ?? e.status] = (reasons[e.reason ?? e.status] ?? 0) + 1
    // Where the time goes: an episode's span (its first model call's start to its last message) against
    // its path, and the episodes on the workers on average (Σ spans / wall; at most the concurrency).
    const spans = perEpisode.map((e) => e.last_ms - e.first_ms)
    const result = {
      episodes: N,
      k: K,
      episodes_done: perEpisode.filter((e) => e.status === 'done').length,
      terminate_reasons: reasons,
      messages,
      llm_calls: sum(perEpisode.map((e) => e.calls)),
      cells: sum(perEpisode.map((e) => e.cells)),
      cold_starts: sum(perEpisode.map((e) => e.cold)),
      replayed_cells: sum(perEpisode.map((e) => e.replayed)),
      latency_ms: args.latency,
      concurrency: C,
      sandboxes: SANDBOXES,
      in_flight: IN_FLIGHT || null,
      wall_ms: round(wall, 0),
      ideal_ms: round(ideal, 0),
      ratio: round(wall / ideal),
      ratio_target: 1.3,
      lanes_ms: round(lanes, 0),
      ratio_lanes: round(wall / lanes),
      ideal_uncontended_cells_ms: round(quietIdeal, 0),
      ratio_uncontended_cells: round(wall / quietIdeal),
      path_p50_ms: round(quantile(paths, 0.5), 0),
      span_p50_ms: round(quantile(spans, 0.5), 0),
      span_p95_ms: round(quantile(spans, 0.95), 0),
      mean_in_flight: round(sum(spans) / wall, 1),
      step_gap_by_sender: gapBy,
      // CPU the run used (this process: runner, sandbox pool, openai SDK; the sandboxes; the fake server;
      // its PostgreSQL backends), and as a share of the machine over the wall time.
      cpu_ms: cpu,
      cpu_share_of_machine: round(cpu.total / (wall * os.cpus().length), 2),
      event_loop_utilization: round(elu.utilization, 2),
      event_loop_delay_p99_ms: round(delay.percentile(99) / 1e6, 1),
      event_loop_delay_max_ms: round(delay.max / 1e6, 1),
      // Node's spawn()s (the sandbox spawner, when it starts): the event loop is held for each.
      spawns: spawns.length,
      spawn_blocked_ms: {
        ...stats(spawns, 1),
        total: round(
          spawns.reduce((a, x) => a + x, 0),
          0,
        ),
      },
      rss_mb: round(process.memoryUsage().rss / 1048576, 0),
      episode_cell_ms: stats(cellTimes, 0),
      llm_measured_ms_total: round(sum(perEpisode.map((e) => e.llm_ms)), 0),
      overhead_llm_steps_p50_ms: overhead.length ? round(quantile(overhead, 0.5), 1) : null,
      overhead_llm_steps_p95_ms: overhead.length ? round(quantile(overhead, 0.95), 1) : null,
    }
    console.log(
      `episodes: ${N} (k = ${K}), ${result.llm_calls} model calls, ${result.cells} cells (${result.cold_starts} cold starts), ` +
        `${result.episodes_done} done ${JSON.stringify(reasons)}; wall ${result.wall_ms} ms, ideal ${result.ideal_ms} ms ` +
        `(Σ paths / ${C}, a path = calls × ${args.latency} ms + its cells), ratio ${result.ratio} (target ≤ 1.3); ` +
        `whole paths on ${C} lanes ${result.lanes_ms} ms (ratio ${result.ratio_lanes})`,
    )
    return result
  } finally {
    fake.stop()
    releaseAll()
    await database.drop() // releases the queue, the pools and the heartbeat first
  }
}

const status = await sandboxStatus()
if (!status.available) {
  console.log(`skipped: MINT's sandbox is unavailable: ${status.reason}`)
  console.log(JSON.stringify({ skipped: true, reason: status.reason }))
  process.exit(0)
}
let sandbox: Awaited<ReturnType<typeof sandboxPart>>
try {
  sandbox = await sandboxPart()
} finally {
  releaseAll()
}
const episodes =
  args.episodes > 0
    ? await episodesPart({ coldMs: sandbox.cold_start.print_1.p50_ms, warmMs: sandbox.warm_print_1.p50_ms })
    : null
// The JSON line last, after the clean-up (whose messages would otherwise follow it).
console.log(
  JSON.stringify({
    sandbox,
    episodes: episodes ?? { skipped: true },
    cpus: os.cpus().length,
    load_avg_1m: round(os.loadavg()[0] ?? 0),
  }),
)
