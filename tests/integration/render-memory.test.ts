import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { makeAwaitingPxpSession, makeStudy, makeUser } from '../support/fixtures'
import { hasBuild, type Proc, ROOT, signInCookie, startWeb } from '../support/processes'

/**
 * A production web process under sustained page loads (lib/server/abort-reasons.ts): a completed
 * render used to keep the renders after it, so under load a process grew until its collector
 * worked on a full heap and its page rate fell to a third (README "Load"). The server is preloaded
 * with a probe (tests/support/heap-probe.cjs) that counts the finished responses still reachable
 * after full collections.
 */
const PORT = 3411
const PROBE = 3412
const base = `http://127.0.0.1:${PORT}`
let server: Proc | undefined
afterAll(async () => {
  await server?.stop('SIGKILL')
})

interface Probe {
  pid: number
  heldResponses: number
  heapUsedMb: number
}
async function probe(): Promise<Probe> {
  const r = await fetch(`http://127.0.0.1:${PROBE}/`)
  return (await r.json()) as Probe
}

/** `count` page loads, `concurrency` at a time (so the database pools open connections mid-render). */
async function load(url: string, cookie: string, count: number, concurrency: number) {
  let started = 0
  const statuses: Record<number, number> = {}
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < count) {
        started++
        const r = await fetch(url, { headers: { cookie } })
        await r.arrayBuffer()
        statuses[r.status] = (statuses[r.status] ?? 0) + 1
      }
    }),
  )
  return statuses
}

describe.skipIf(!hasBuild())('a web process under sustained page loads', () => {
  it('keeps no completed render: 800 more session pages leave no more responses reachable', async () => {
    server = await startWeb(
      PORT,
      {
        NODE_OPTIONS: [process.env.NODE_OPTIONS, `--require ${path.join(ROOT, 'tests/support/heap-probe.cjs')}`]
          .filter(Boolean)
          .join(' '),
        PARLEY_HEAP_PROBE_PORT: String(PROBE),
        PARLEY_WEB_PROCESSES: '1',
      },
      { serve: true },
    )
    // The expert's session page, as bench:load loads it: a DRUG session awaiting them.
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const s = await makeAwaitingPxpSession(study.id, expert.userId, {
      prediction: 'CCO.CC(=O)O',
      explanation: 'An ester: hydrolysis gives the acid and the alcohol.',
    })
    const cookie = await signInCookie(base, expert.email)
    const page = `${base}/sessions/${s.id}`

    // Warm-up: code compiled, pools grown (a connection opened mid-render keeps that one render:
    // bounded by the pools' size, and not what this test is about).
    expect(await load(page, cookie, 150, 50)).toEqual({ 200: 150 })
    const before = await probe()
    expect(before.pid).not.toBe(server.child.pid) // a web process, not the cluster's primary
    expect(await load(page, cookie, 800, 50)).toEqual({ 200: 800 })
    const after = await probe()
    expect(after.pid).toBe(before.pid)
    // Before the fix about 50 more were kept here (and, in bench:load's longer runs, nearly all).
    expect(after.heldResponses - before.heldResponses).toBeLessThan(15)
  }, 180_000)
})
