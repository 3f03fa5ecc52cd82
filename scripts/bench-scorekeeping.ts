/**
 * `npm run bench:scorekeeping`: the clembench scorekeeping game on the job queue against the fake LLM.
 *
 *   - 500 episodes (50 game instances × 10 repetitions) of Parley's demo game at 100 ms model latency
 *     with 16 concurrent steps: wall time vs the ideal max(total LLM time / 16, the longest episode's
 *     chain of calls). The game master is a program seat (no model call); the answerer is the model.
 *     Target ratio ≤ 1.25.
 *   - Replaying one finished episode's log and scoring it (clembench's scores.json): p50 over 2,000
 *     replays. Target < 1 ms.
 *
 * Last line: JSON.
 *
 *   npx tsx scripts/bench-scorekeeping.ts [--instances 50] [--repetitions 10] [--latency 100] [--concurrency 16]
 */
import os from 'node:os'
import { benchArgs } from './bench-args'
import { benchWorld, fakeLlmChild, quantile, round, throwawayDatabase } from './bench-support'

const values = benchArgs(
  `Usage: npm run bench:scorekeeping -- [options]

The clembench scorekeeping game on the job queue against the fake LLM (a throwaway database on the
server in DATABASE_URL, or the embedded PostgreSQL). Last line: JSON.

  --instances N      game instances (default 50)
  --repetitions N    repetitions of each (default 10)
  --latency MS       model latency (default 100)
  --concurrency N    steps at once (default 16)
  -h, --help         this text`,
  {
    instances: { type: 'string', default: '50' },
    repetitions: { type: 'string', default: '10' },
    latency: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '16' },
  },
)
const INSTANCES = Number(values.instances)
const REPETITIONS = Number(values.repetitions)
const LATENCY = Number(values.latency)
const CONCURRENCY = Number(values.concurrency)
const database = await throwawayDatabase()
// The answerer: "no" to every side question, and a one-line answer to every request.
const fake = await fakeLlmChild({
  latencyMs: LATENCY,
  script: [
    { match: { model: 'gen', contains: 'Answer this question with yes or no' }, replies: [{ text: 'ASIDE: no' }] },
    { match: { model: 'gen' }, replies: [{ text: 'ANSWER: On Monday at noon, please.' }] },
  ],
})

const { db, sql } = await import('../lib/server/db')
const { execute } = await import('../lib/server/operation')
const { createRun, startRun } = await import('../lib/server/services/runs')
const { startWorkers } = await import('../lib/server/engine/jobs')
const { demoInstances } = await import('../protocols/scorekeeping/server/demo')
const { scorekeeping, episodeOf } = await import('../protocols/scorekeeping/core')
const { replay } = await import('../lib/protocols/types')
const { scoresJson } = await import('../protocols/scorekeeping/core/clemscore')

let summary = ''
try {
  const { actor, study, conn } = await benchWorld({
    baseURL: fake.url,
    defaultModel: 'gen',
    maxConcurrency: CONCURRENCY * 2,
  })
  const dataset = async (n: number) =>
    db.dataset.create({
      data: {
        studyId: study.id,
        name: `games ${n}`,
        kind: 'clembench',
        source: 'generated',
        instances: {
          create: demoInstances(n, 11).map((i, index) => ({
            index,
            input: i as object,
            prediction: '',
            explanation: '',
            meta: { experiment: i.experiment ?? '', gameId: i.gameId ?? null },
          })),
        },
      },
    })
  const run = async (name: string, datasetId: string, repetitions: number) => {
    const created = await execute(createRun, actor, {
      protocol: 'scorekeeping',
      studyId: study.id,
      name,
      datasetId,
      repetitions,
      answerer: { kind: 'llm', connectionId: conn.id, model: 'gen' },
    })
    if (!created.ok) throw new Error(created.error)
    return created.data.id
  }
  const waitDone = async (id: string) => {
    for (;;) {
      const { rows } = await sql().query<{ status: string; stalled: string | null }>(
        `SELECT e.status, (SELECT max("stallError") FROM "ProtocolSession" WHERE "runId" = e.id AND status = 'stalled') AS stalled
         FROM "Run" e WHERE e.id = $1`,
        [id],
      )
      if (rows[0]?.stalled) throw new Error(`an episode stalled: ${rows[0].stalled}`)
      if (rows[0]?.status === 'done') return
      await new Promise((r) => setTimeout(r, 25))
    }
  }

  const workers = await startWorkers(CONCURRENCY)
  // Warm-up: JIT, pools, the queue schema.
  const warm = await run('warm-up', (await dataset(4)).id, 2)
  await execute(startRun, actor, { runId: warm })
  await waitDone(warm)
  const ds = await dataset(INSTANCES)
  const runId = await run('bench', ds.id, REPETITIONS)
  const t0 = performance.now()
  await execute(startRun, actor, { runId })
  await waitDone(runId)
  const wall = performance.now() - t0
  await workers.stop()

  const chains = await db.$queryRaw<Array<{ ms: number; calls: bigint }>>`
    SELECT sum(c."latencyMs")::float AS ms, count(*) AS calls FROM "LlmCall" c
    JOIN "ProtocolSession" s ON s.id = c."sessionRef" WHERE s."runId" = ${runId}
    GROUP BY s.id`
  const messages = await db.protocolMessage.count({ where: { session: { runId: runId } } })
  const sequential = chains.reduce((a, c) => a + c.ms, 0)
  const longest = Math.max(...chains.map((c) => c.ms))
  const ideal = Math.max(sequential / CONCURRENCY, longest)

  // Replay and score one finished episode, many times.
  const one = await db.protocolSession.findFirstOrThrow({
    where: { runId: runId },
    include: { messages: { orderBy: { seq: 'asc' }, select: { body: true } } },
  })
  const bodies = one.messages.map((m) => m.body)
  const times: number[] = []
  let score: unknown
  for (let i = 0; i < 2000; i++) {
    const t = performance.now()
    const state = replay(scorekeeping, {}, one.instance as never, bodies as never)
    score = scoresJson(episodeOf(state as never))
    times.push(performance.now() - t)
  }
  if (!score) throw new Error('nothing scored')

  const result = {
    episodes: INSTANCES * REPETITIONS,
    messages,
    llm_calls: chains.reduce((a, c) => a + Number(c.calls), 0),
    latency_ms: LATENCY,
    concurrency: CONCURRENCY,
    wall_ms: round(wall, 0),
    ideal_ms: round(ideal, 0),
    ratio: round(wall / ideal),
    episode_messages: bodies.length,
    replay_score_p50_ms: round(quantile(times, 0.5), 3),
    replay_score_p95_ms: round(quantile(times, 0.95), 3),
    load_avg_1m: round(os.loadavg()[0] ?? 0),
  }
  console.log(
    `Scorekeeping: ${result.episodes} episodes, ${messages} messages, ${result.llm_calls} calls in ${result.wall_ms} ms ` +
      `(ideal ${result.ideal_ms} ms, ratio ${result.ratio}); replaying and scoring one episode (${bodies.length} messages) p50 ${result.replay_score_p50_ms} ms`,
  )
  summary = JSON.stringify(result)
} finally {
  fake.stop()
  await database.drop() // releases the queue, the pools and the heartbeat first
}
if (summary) console.log(summary)
else process.exitCode = 1
