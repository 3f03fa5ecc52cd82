import { afterAll, describe, expect, it } from 'vitest'
import type { RecordedRequest } from '@/lib/llm/fake-server'
import { db, sql } from '@/lib/server/db'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { cancelRun, createRun, startRun } from '@/lib/server/services/runs'
import { pxpFixture as fx } from '../../protocols/pxp/fixture'
import { makeStudy, makeUser } from '../support/fixtures'
import { useFakeLlm } from '../support/llm'
import { hasBuild, type Proc, startWeb, startWorker, waitFor } from '../support/processes'

/**
 * The LLM limits of a connection hold across processes (lib/server/llm/global-limits.ts): two
 * `parley worker` processes with 4 steps each, plus a web process (`next start`, which works the
 * queue too) when there is a build, on one connection limited to 2 calls at once and 60 requests a
 * minute; the fake server counts what it really receives.
 */
const fake = useFakeLlm()
const procs: Proc[] = []

afterAll(async () => {
  for (const p of procs) await p.stop('SIGKILL')
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

async function newRun(limits: { maxConcurrency: number; requestsPerMinute?: number }, instances: number) {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const conn = await db.llmConnection.create({
    data: {
      studyId: study.id,
      name: 'limited',
      provider: 'openai-compatible',
      baseUrl: fake().url,
      defaultModel: 'gen',
      timeoutMs: 10_000,
      ...limits,
    },
  })
  const w = { researcher, expert: researcher, studyId: study.id, connectionId: conn.id, fake: fake() }
  const datasetId = await fx.dataset(w, instances)
  const r = await execute(createRun, researcher, { studyId: study.id, protocol: 'pxp', ...fx.setup(w, datasetId) })
  if (!r.ok) throw new Error(r.error)
  return { researcher, runId: r.data.id, connectionId: conn.id }
}

/** The most requests the fake received within any window of `ms`. */
function mostInWindow(requests: RecordedRequest[], ms: number): number {
  const t = requests.map((r) => r.receivedAt).sort((a, b) => a - b)
  let most = 0
  for (let i = 0, j = 0; i < t.length; i++) {
    while ((t[i] as number) - (t[j] as number) >= ms) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}

const chat = () => fake().requests.filter((r) => r.path.endsWith('/chat/completions'))

describe('global LLM limits across processes', () => {
  it('two workers and a web process on one connection: never more than 2 calls in flight, never more than 60 a minute', async () => {
    fake().setScript(fx.script(400))
    fake().reset()
    const { researcher, runId } = await newRun({ maxConcurrency: 2, requestsPerMinute: 60 }, 12)
    const env = { PARLEY_HEARTBEAT_SECONDS: '1' }
    // The web process works the queue with its in-process workers (PARLEY_WORKERS, 4 steps).
    if (hasBuild()) procs.push(await startWeb(3404, { ...env, PARLEY_WORKERS: '4' }))
    procs.push(startWorker(env, ['--concurrency', '4']), startWorker(env, ['--concurrency', '4']))
    await execute(startRun, researcher, { runId })
    await waitFor(
      'calls',
      async () => chat().length,
      (n) => n >= 1,
      60_000,
    )
    // 12 s of traffic.
    await new Promise((r) => setTimeout(r, 12_000))
    await execute(cancelRun, researcher, { runId })
    const requests = chat()
    console.info(
      `2 workers × 4 steps and a web process, limit 2 at once / 60 rpm: ${requests.length} calls in 12 s, max in flight ${fake().maxInFlight}, max in any 5 s ${mostInWindow(requests, 5000)}`,
    )
    expect(fake().maxInFlight).toBeLessThanOrEqual(2)
    // 60/min = 1 a second, with a burst of one second's budget: at most 5 + 1 in any 5 s, 12 + 1 in 12 s.
    expect(mostInWindow(requests, 5000)).toBeLessThanOrEqual(6)
    expect(requests.length).toBeLessThanOrEqual(14)
    expect(requests.length).toBeGreaterThanOrEqual(8)
    for (const p of procs.splice(0)) await p.stop('SIGTERM')
  }, 120_000)

  it('two workers on one connection limited to 2 at once: the fake sees 2 in flight, not 4', async () => {
    fake().setScript(fx.script(300))
    fake().reset()
    const { researcher, runId } = await newRun({ maxConcurrency: 2 }, 8)
    const env = { PARLEY_HEARTBEAT_SECONDS: '1' }
    procs.push(startWorker(env, ['--concurrency', '4']), startWorker(env, ['--concurrency', '4']))
    await execute(startRun, researcher, { runId })
    await waitFor(
      'calls',
      async () => chat().length,
      (n) => n >= 1,
      60_000,
    )
    await new Promise((r) => setTimeout(r, 6000))
    await execute(cancelRun, researcher, { runId })
    console.info(`2 workers × 4 steps, limit 2 at once: ${chat().length} calls, max in flight ${fake().maxInFlight}`)
    expect(fake().maxInFlight).toBe(2)
    for (const p of procs.splice(0)) await p.stop('SIGTERM')
  }, 120_000)

  it('a 429 from the provider pauses the connection in every process', async () => {
    // The third call is answered 429 with Retry-After 3 s; every other call succeeds after 150 ms.
    const ok = { text: 'Prediction: O\nPathway: Water.', latencyMs: 150 }
    fake().setScript([
      { match: { model: 'gen' }, replies: [ok, ok, { fault: '429', retryAfterMs: 3000 }, ok] },
      { match: { model: 'judge' }, replies: [{ text: 'No', latencyMs: 150 }] },
    ])
    fake().reset()
    const { researcher, runId } = await newRun({ maxConcurrency: 4 }, 8)
    const env = { PARLEY_HEARTBEAT_SECONDS: '1' }
    procs.push(startWorker(env, ['--concurrency', '3']), startWorker(env, ['--concurrency', '3']))
    await execute(startRun, researcher, { runId })
    const limited = await waitFor(
      'the 429',
      async () => chat().find((r) => r.reply === 'fault:429'),
      (r) => r?.done === true,
      60_000,
    )
    const answeredAt = (limited?.receivedAt ?? 0) + (limited?.durationMs ?? 0)
    await new Promise((r) => setTimeout(r, 5000))
    await execute(cancelRun, researcher, { runId })
    // Calls already sent when the 429 came back finish; no process sends a new one until the pause ends.
    const during = chat().filter((r) => r.receivedAt > answeredAt + 200 && r.receivedAt < answeredAt + 2800)
    const after = chat().filter((r) => r.receivedAt >= answeredAt + 2800)
    console.info(`429 with Retry-After 3 s: ${during.length} calls sent during the pause, ${after.length} after it`)
    expect(during).toEqual([])
    expect(after.length).toBeGreaterThan(0)
    for (const p of procs.splice(0)) await p.stop('SIGTERM')
  }, 120_000)
})
