/**
 * `npm run bench:pxp`: PXP experiments on the job queue against the fake LLM.
 *
 *   - 100 proxy-tester sessions (message bound n = 10, carry-over off) at 100 ms model latency with
 *     16 concurrent steps (one worker process): wall time vs the ideal, where the ideal is the lower
 *     bound max(total LLM time / 16, the longest session's chain of sequential calls): each session
 *     is a chain of calls that cannot overlap, sessions share the 16 slots. Target ratio ≤ 1.25.
 *     Also the speed-up over running sessions one after another, as the authors' Python code does
 *     (sequential time = the sum of every session's chain).
 *   - Runner overhead per message: a step's time minus the time it waited for LLM calls (replay of
 *     M, protocol, tag logic, the M+C append, status). Target p50 < 5 ms.
 *   - The dashboard numbers for 10,000 sessions / 100,000 messages computed in SQL. Target < 1 s.
 *   - RAD with carry-over (`--rad 100`): 100 sessions of one repetition, each with its X-ray (a
 *     ~30 KB PNG), one chain (concurrency 1, as the authors' loop runs), the machine's prompt growing
 *     with every earlier dialogue of the repetition: the runner overhead per message. Target p50 < 5 ms.
 *
 * Uses a throwaway database on the server in DATABASE_URL, or the embedded PostgreSQL. The fake
 * server runs in a child process so it does not share the runner's event loop. Last line: JSON.
 *
 *   - With `--processes 2`: the steps run in that many `parley worker` processes, each with
 *     `--concurrency` steps, while the connection allows `--concurrency` calls at once in all (the
 *     global limit in PostgreSQL is what binds); the ideal is the same. The runner overhead is then
 *     not measured (it is observed in-process).
 *
 *   npx tsx scripts/bench-pxp.ts [--sessions 100] [--latency 100] [--concurrency 16] [--dashboard 10000]
 *                                [--rad 100] [--rad-latency 10] [--processes 1]
 */
import os from 'node:os'
import { benchArgs } from './bench-args'
import { spawn } from 'node:child_process'
import path from 'node:path'
import {
  benchWorld,
  esterDataset,
  fakeLlmChild,
  noisePng,
  quantile,
  round,
  throwawayDatabase,
  waitRunDone,
} from './bench-support'

/** `n` `parley worker` processes on the bench database, each working `concurrency` steps. */
async function workerProcesses(n: number, concurrency: number) {
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, [path.resolve('bin/parley.mjs'), 'worker', '--concurrency', String(concurrency)], {
      env: {
        ...process.env,
        PARLEY_LOG_LEVEL: 'warn',
        BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? 'bench-secret-bench-secret-bench-secret-0001',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  )
  return {
    async stop() {
      await Promise.all(
        children.map((c) => {
          c.kill('SIGTERM')
          return new Promise((r) => c.once('exit', r))
        }),
      )
    },
  }
}

const values = benchArgs(
  `Usage: npm run bench:pxp -- [options]

PXP experiments on the job queue against the fake LLM (a throwaway database on the server in
DATABASE_URL, or the embedded PostgreSQL). Last line: JSON.

  --sessions N       proxy-tester sessions (default 100)
  --latency MS       model latency (default 100)
  --concurrency N    steps at once, and the connection's calls at once (default 16)
  --dashboard N      sessions of the dashboard's SQL benchmark (default 10000; 0 skips it)
  --rad N            RAD sessions with carry-over, one chain (default 100; 0 skips it)
  --rad-latency MS   their model latency (default 10)
  --processes N      run the steps in N parley worker processes (default 1: in this process)
  -h, --help         this text`,
  {
    sessions: { type: 'string', default: '100' },
    latency: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '16' },
    dashboard: { type: 'string', default: '10000' },
    rad: { type: 'string', default: '100' },
    'rad-latency': { type: 'string', default: '10' },
    processes: { type: 'string', default: '1' },
  },
)
const SESSIONS = Number(values.sessions)
const LATENCY = Number(values.latency)
const CONCURRENCY = Number(values.concurrency)
const DASH_SESSIONS = Number(values.dashboard)
const RAD_SESSIONS = Number(values.rad)
const RAD_LATENCY = Number(values['rad-latency'])
const PROCESSES = Number(values.processes)
const database = await throwawayDatabase()
// The fake LLM: the generator is always wrong and the checker never agrees, so sessions are long.
const fake = await fakeLlmChild({
  latencyMs: LATENCY,
  script: [
    { match: { model: 'gen' }, replies: [{ text: 'Prediction: O\nPathway: Water.' }] },
    { match: { model: 'judge' }, replies: [{ text: 'No' }] },
  ],
})

const { db } = await import('../lib/server/db')
const { execute } = await import('../lib/server/operation')
const { createRun, startRun } = await import('../lib/server/services/runs')
const { startWorkers } = await import('../lib/server/engine/jobs')
const { observeSteps } = await import('../lib/server/engine/runner')
const { experimentIntelligibility } = await import('../protocols/pxp/server/dashboard')

let summary = ''
try {
  const { actor, study, conn } = await benchWorld({
    baseURL: fake.url,
    defaultModel: 'gen',
    // In-process: the workers bound the concurrency. Several processes: the connection's global limit.
    maxConcurrency: PROCESSES > 1 ? CONCURRENCY : CONCURRENCY * 2,
  })
  const ds = await esterDataset(study.id, 'bench', SESSIONS)
  const run = async (name: string, n: number) => {
    const created = await execute(createRun, actor, {
      protocol: 'pxp',
      studyId: study.id,
      name,
      datasetId: ds.id,
      n,
      k: 3,
      carryOver: 'false',
      generator: { connectionId: conn.id, model: 'gen' },
      checker: { connectionId: conn.id, model: 'judge' },
    })
    if (!created.ok) throw new Error(created.error)
    return created.data.id
  }

  // Warm-up: JIT, pools, RDKit, the queue schema.
  const workers = PROCESSES > 1 ? await workerProcesses(PROCESSES, CONCURRENCY) : await startWorkers(CONCURRENCY)
  const warm = await run('warm-up', 4)
  await execute(startRun, actor, { runId: warm })
  await waitRunDone(warm)

  const steps: Array<{ kind: string; totalMs: number; llmMs: number }> = []
  observeSteps((t) => steps.push(t))
  const runId = await run('bench', 10)
  const t0 = performance.now()
  await execute(startRun, actor, { runId: runId })
  await waitRunDone(runId)
  const wall = performance.now() - t0
  observeSteps(undefined)
  await workers.stop()

  // Each session's chain: the sum of its calls' latencies (calls of a session never overlap).
  const chains = await db.$queryRaw<Array<{ ms: number; calls: bigint }>>`
    SELECT sum(c."latencyMs")::float AS ms, count(*) AS calls FROM "LlmCall" c
    JOIN "ProtocolSession" s ON s.id = c."sessionRef" WHERE s."runId" = ${runId}
    GROUP BY s.id`
  const messages = await db.protocolMessage.count({ where: { session: { runId } } })
  const sequential = chains.reduce((a, c) => a + c.ms, 0)
  const longest = Math.max(...chains.map((c) => c.ms))
  const ideal = Math.max(sequential / CONCURRENCY, longest)
  const overhead = steps.filter((s) => s.kind === 'appended').map((s) => s.totalMs - s.llmMs)

  // Dashboard at scale: 10,000 sessions, 100,000 messages, bulk-inserted with generate_series.
  const big = await db.run.create({
    data: {
      studyId: study.id,
      name: 'dashboard',
      protocol: 'pxp',
      task: 'drug',
      datasetId: ds.id,
      config: { n: 10, k: 3 },
      seats: {},
      repetitions: 5,
      status: 'done',
    },
  })
  await db.$executeRaw`
    INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, repetition, position, status, "updatedAt")
    SELECT ${big.id} || '-' || g, ${study.id}, ${big.id}, 'pxp', '1', '{}', 'drug', '{}', '{}', 1 + g % 5, g / 5, 'done', now()
    FROM generate_series(0, ${DASH_SESSIONS - 1}) g`
  await db.$executeRaw`
    INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label)
    SELECT ${big.id} || '-' || g || '-' || j, ${big.id} || '-' || g, j,
      CASE WHEN j % 2 = 1 THEN 'm' ELSE 'h' END, CASE WHEN j % 2 = 1 THEN 'h' ELSE 'm' END,
      CASE WHEN j = 1 THEN 'INIT' ELSE (ARRAY['RATIFY', 'REFUTE', 'REVISE', 'REJECT'])[1 + ((g * 7 + j * 13) % 4)] END
    FROM generate_series(0, ${DASH_SESSIONS - 1}) g, generate_series(1, 10) j`
  await db.$executeRaw`ANALYZE "ProtocolMessage"`
  await db.$executeRaw`ANALYZE "ProtocolSession"`
  const dash: number[] = []
  for (let i = 0; i < 5; i++) {
    const t = performance.now()
    const r = await experimentIntelligibility(big.id)
    dash.push(performance.now() - t)
    if (r?.repetitions !== 5) throw new Error('dashboard computed nothing')
  }

  // RAD with carry-over: one chain of RAD_SESSIONS sessions with X-rays, at concurrency 1.
  let rad: { messages: number; p50: number; p95: number; wall: number } | undefined
  if (RAD_SESSIONS > 0) {
    const radFake = await fakeLlmChild({
      latencyMs: RAD_LATENCY,
      script: [
        {
          match: { model: 'gen' },
          replies: [{ text: 'Prediction: Pneumonia\nExplanation: Consolidation in the lower zone.' }],
        },
        { match: { model: 'judge' }, replies: [{ text: 'No' }] },
      ],
    })
    try {
      const radConn = await db.llmConnection.create({
        data: {
          studyId: study.id,
          name: 'rad fake',
          provider: 'openai-compatible',
          baseUrl: radFake.url,
          defaultModel: 'gen',
          maxConcurrency: 4,
        },
      })
      const labels = ['Atelectasis', 'Cardiomegaly', 'Effusion', 'Pneumothorax']
      const rds = await db.dataset.create({
        data: { studyId: study.id, name: 'rad bench', kind: 'rad', source: 'generated' },
      })
      for (let i = 0; i < RAD_SESSIONS; i++) {
        await db.asset.create({
          data: {
            datasetId: rds.id,
            name: `x${i}.png`,
            mime: 'image/png',
            bytes: new Uint8Array(await noisePng(170, 170, i + 1)),
          },
        })
        await db.instance.create({
          data: {
            datasetId: rds.id,
            index: i,
            input: { image: `x${i}.png` },
            prediction: labels[i % labels.length] as string,
            explanation: `Finding ${i} of the ${labels[i % labels.length]} series.`,
          },
        })
      }
      const created = await execute(createRun, actor, {
        protocol: 'pxp',
        studyId: study.id,
        name: 'rad carry-over',
        datasetId: rds.id,
        n: 10,
        k: 3,
        carryOver: 'true',
        generator: { connectionId: radConn.id, model: 'gen', vision: true },
        checker: { connectionId: radConn.id, model: 'judge' },
      })
      if (!created.ok) throw new Error(created.error)
      const radSteps: Array<{ kind: string; totalMs: number; llmMs: number }> = []
      const one = await startWorkers(1)
      observeSteps((t) => radSteps.push(t))
      const t1 = performance.now()
      await execute(startRun, actor, { runId: created.data.id })
      await waitRunDone(created.data.id)
      const radWall = performance.now() - t1
      observeSteps(undefined)
      await one.stop()
      const o = radSteps.filter((x) => x.kind === 'appended').map((x) => x.totalMs - x.llmMs)
      rad = { messages: o.length, p50: quantile(o, 0.5), p95: quantile(o, 0.95), wall: radWall }
    } finally {
      radFake.stop()
    }
  }

  const result = {
    sessions: SESSIONS,
    messages,
    llm_calls: chains.reduce((a, c) => a + Number(c.calls), 0),
    latency_ms: LATENCY,
    concurrency: CONCURRENCY,
    processes: PROCESSES,
    wall_ms: round(wall, 0),
    ideal_ms: round(ideal, 0),
    ratio: round(wall / ideal),
    sequential_ms: round(sequential, 0),
    speedup_vs_sequential: round(sequential / wall),
    overhead_p50_ms: overhead.length ? round(quantile(overhead, 0.5)) : null,
    overhead_p95_ms: overhead.length ? round(quantile(overhead, 0.95)) : null,
    dashboard_sessions: DASH_SESSIONS,
    dashboard_messages: DASH_SESSIONS * 10,
    dashboard_p50_ms: round(quantile(dash, 0.5), 1),
    dashboard_max_ms: round(Math.max(...dash), 1),
    ...(rad
      ? {
          rad_carry_sessions: RAD_SESSIONS,
          rad_carry_messages: rad.messages,
          rad_carry_wall_ms: round(rad.wall, 0),
          rad_carry_overhead_p50_ms: round(rad.p50),
          rad_carry_overhead_p95_ms: round(rad.p95),
        }
      : {}),
    load_avg_1m: round(os.loadavg()[0] ?? 0),
  }
  console.log(
    `PXP: ${SESSIONS} sessions, ${messages} messages in ${result.wall_ms} ms (ideal ${result.ideal_ms} ms, ratio ${result.ratio}); ` +
      `${result.speedup_vs_sequential}× faster than one session after another; runner overhead p50 ${result.overhead_p50_ms} ms; ` +
      `dashboard over ${DASH_SESSIONS} sessions p50 ${result.dashboard_p50_ms} ms` +
      (rad ? `; RAD with carry-over: ${rad.messages} messages, runner overhead p50 ${round(rad.p50)} ms` : ''),
  )
  summary = JSON.stringify(result)
} finally {
  fake.stop()
  await database.drop() // releases the queue, the pools and the heartbeat first
}
// The JSON line last, after the clean-up (whose messages would otherwise follow it).
if (summary) console.log(summary)
else process.exitCode = 1
