/**
 * bench:labelling's database sections (scripts/bench-labelling.ts says what each measures): the
 * agreement page over 10,000 items × 3 labels, and annotators claiming and labelling against the
 * production server. Call after `throwawayDatabase`.
 */
import { Agent, request } from 'undici'
import { itemsDataset, labelChecks, labelEverything, labellingRun, labellingWorld } from './bench-labelling-seed'
import { processTreeRss, quantile, round, startProductionServer } from './bench-support'

const PASSWORD = 'bench-labelling-password-1'
const AGREEMENT_TARGET_MS = 1000
const SUBMIT_P95_TARGET_MS = 150

/** The agreement page's data function over `items` × 3 labels with gold: p50 and max of `runs` after a warm-up. */
export async function agreementSection(opts: { items: number; runs: number }) {
  const t0 = performance.now()
  const world = await labellingWorld({ people: 3, password: PASSWORD, name: 'bench agreement' })
  const datasetId = await itemsDataset(world.studyId, world.researcher.userId, opts.items)
  const runId = await labellingRun(world.researcher, world.studyId, datasetId, {
    slots: 3,
    start: true,
    name: 'bench agreement',
  })
  await labelEverything(
    runId,
    world.people.map((p) => p.id),
  )
  const seedSeconds = round((performance.now() - t0) / 1000, 1)
  const { agreementPage, projectPage } = await import('../protocols/labelling/server/pages')
  const time = async <T>(fn: () => Promise<T>, check: (d: T) => void) => {
    check(await fn()) // warm-up, and the figures are the run's
    const ms: number[] = []
    for (let r = 0; r < opts.runs; r++) {
      const t = performance.now()
      await fn()
      ms.push(performance.now() - t)
    }
    return { p50: round(quantile(ms, 0.5), 1), max: round(Math.max(...ms), 1) }
  }
  let figures: { fleiss: number | null; alpha: number | null; goldItems: number } | undefined
  const agreement = await time(
    () => agreementPage(world.studyId, runId, {}),
    (d) => {
      if (!d || d.items !== opts.items || d.labels !== 3 * opts.items)
        throw new Error(`the agreement page saw ${d?.items} items and ${d?.labels} labels, not ${opts.items} × 3`)
      figures = { fleiss: d.fleiss.kappa, alpha: d.alpha.alpha, goldItems: d.gold?.items ?? 0 }
    },
  )
  const project = await time(
    () => projectPage(world.studyId, runId, {}),
    (d) => {
      if (d?.totals.labels !== 3 * opts.items) throw new Error(`the project page saw ${d?.totals.labels} labels`)
    },
  )
  console.log(
    `agreementPage: ${opts.items} items × 3 labels: p50 ${agreement.p50} ms, max ${agreement.max} ms (target < ${AGREEMENT_TARGET_MS}); project page p50 ${project.p50} ms`,
  )
  return {
    items: opts.items,
    labels: 3 * opts.items,
    runs: opts.runs,
    seedSeconds,
    p50Ms: agreement.p50,
    maxMs: agreement.max,
    targetMs: AGREEMENT_TARGET_MS,
    pass: agreement.max < AGREEMENT_TARGET_MS,
    projectPage: { p50Ms: project.p50, maxMs: project.max },
    ...figures,
  }
}

class Timings {
  ms: number[] = []
  errors = 0
  statuses: Record<string, number> = {}
  fail(status: number | string) {
    this.errors++
    this.statuses[status] = (this.statuses[status] ?? 0) + 1
  }
  summary() {
    return {
      n: this.ms.length,
      p50Ms: round(quantile(this.ms, 0.5), 1),
      p95Ms: round(quantile(this.ms, 0.95), 1),
      maxMs: round(Math.max(0, ...this.ms), 1),
      errors: this.errors,
      ...(this.errors ? { errorStatuses: this.statuses } : {}),
    }
  }
}

/** `fn` over `items`, at most `limit` at a time. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i] as T)
      }
    }),
  )
  return out
}

/**
 * `annotators` people against the production server for `durationMs`: each in a loop claims the next
 * slot of the run (`POST /runs/{id}/claim-next`), spends about `thinkMs` on the item (uniform in
 * 0.5–1.5 × thinkMs, as a person reads and labels; 0: a closed loop, the server's saturation), and
 * sends the label. Then the labels are counted in SQL.
 */
export async function annotatorsSection(opts: {
  appDir: string
  port: number
  annotators: number
  items: number
  durationMs: number
  thinkMs: number
}) {
  const t0 = performance.now()
  const world = await labellingWorld({ people: opts.annotators, password: PASSWORD, name: 'bench annotators' })
  const datasetId = await itemsDataset(world.studyId, world.researcher.userId, opts.items)
  const runId = await labellingRun(world.researcher, world.studyId, datasetId, {
    slots: 3,
    start: true,
    name: 'bench annotators',
  })
  const { db, sql } = await import('../lib/server/db')
  await db.$executeRawUnsafe('ANALYZE')
  const seedSeconds = round((performance.now() - t0) / 1000, 1)
  const server = await startProductionServer({
    appDir: opts.appDir,
    port: opts.port,
    databaseUrl: process.env.DATABASE_URL as string,
  })
  const { origin } = server
  const agent = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 30_000 })
  let peakRss = processTreeRss(server.child.pid as number)
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, processTreeRss(server.child.pid as number))
  }, 250)
  try {
    const call = async (
      stats: Timings | null,
      url: string,
      o: { cookie?: string; json?: unknown; expect: number[] },
    ): Promise<{ status: number; text: string | null }> => {
      const t = performance.now()
      try {
        const r = await request(url, {
          method: o.json === undefined ? 'GET' : 'POST',
          dispatcher: agent,
          headers: {
            ...(o.cookie ? { cookie: o.cookie } : {}),
            ...(o.json === undefined ? {} : { 'content-type': 'application/json', origin }),
          },
          body: o.json === undefined ? undefined : JSON.stringify(o.json),
        })
        const text = await r.body.text()
        if (o.expect.includes(r.statusCode)) stats?.ms.push(performance.now() - t)
        else stats?.fail(r.statusCode)
        return { status: r.statusCode, text }
      } catch (err) {
        stats?.fail((err as { code?: string }).code ?? 'network')
        return { status: 0, text: null }
      }
    }
    const signIn = async (email: string) => {
      const r = await request(`${origin}/api/auth/sign-in/email`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ email, password: PASSWORD }),
      })
      await r.body.dump()
      if (r.statusCode !== 200) throw new Error(`sign-in of ${email} answered ${r.statusCode}`)
      const set = r.headers['set-cookie']
      return (Array.isArray(set) ? set : set ? [set] : []).map((c) => c.split(';')[0]).join('; ')
    }
    // People sign in a few at a time, as they arrive (not 100 password hashes at once).
    const cookies = await mapLimit(world.people, 8, (p) => signIn(p.email))
    const rssAfterSignInMb = round(processTreeRss(server.child.pid as number) / 2 ** 20, 0)
    // The run started at seed time: the server's worker steps each of its sessions once (queued →
    // awaiting its annotator), one job a session. The annotators' 30 s measure a run that is under way,
    // so they begin once that is done; how long it took is a figure of its own (readySeconds).
    const ready0 = performance.now()
    for (;;) {
      const { rows } = await sql().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "ProtocolSession" WHERE "runId" = $1 AND status = 'queued'`,
        [runId],
      )
      if (!rows[0]?.n) break
      if (performance.now() - ready0 > 600_000) throw new Error(`${rows[0].n} sessions still queued after 10 min`)
      await new Promise((r) => setTimeout(r, 500))
    }
    const readySeconds = round((performance.now() - ready0) / 1000, 1)
    peakRss = 0
    const claim = new Timings()
    const submit = new Timings()
    // A lost race: claim-next answered 409 (every seat it picked was taken meanwhile; SKIP LOCKED
    // makes this rare). Its 404 is not a lost race but the end of the work: nothing left to claim.
    const lostRaces = { 409: 0 }
    let claims = 0
    let emptyQueues = 0
    const end = performance.now() + opts.durationMs
    const startedAt = performance.now()
    await Promise.all(
      cookies.map(async (cookie, who) => {
        while (performance.now() < end) {
          // One call picks and claims the next free slot of the run (no list, no race for one slot);
          // its timings (claim) include the final "nothing left" answers.
          const c = await call(claim, `${origin}/api/v1/runs/${runId}/claim-next`, {
            cookie,
            json: {},
            expect: [200, 404, 409],
          })
          if (c.status === 404) {
            emptyQueues++
            break // nothing left to claim for this person
          }
          if (c.status === 409) {
            lostRaces[409]++
            continue
          }
          if (c.status !== 200) continue
          claims++
          const picked = JSON.parse(c.text ?? '{}') as { sessionId: string }
          if (opts.thinkMs > 0) await new Promise((r) => setTimeout(r, opts.thinkMs * (0.5 + Math.random())))
          await call(submit, `${origin}/api/v1/sessions/${picked.sessionId}/turns`, {
            cookie,
            json: { seq: 1, answers: { O: String((who + picked.sessionId.charCodeAt(0)) % 3) }, elapsedMs: 1500 },
            expect: [201],
          })
        }
      }),
    )
    const seconds = (performance.now() - startedAt) / 1000
    const peakRssMb = round(Math.max(peakRss, processTreeRss(server.child.pid as number)) / 2 ** 20, 0)
    const checks = await labelChecks(runId)
    const s = submit.summary()
    const errors = claim.errors + submit.errors
    const result = {
      annotators: opts.annotators,
      thinkMs: opts.thinkMs,
      items: opts.items,
      slots: 3 * opts.items,
      seconds: round(seconds, 1),
      seedSeconds,
      readySeconds,
      submit: s,
      claim: claim.summary(),
      claims,
      lostRaces: { taken409: lostRaces[409] },
      submits: s.n,
      submitsPerSecond: round(s.n / seconds, 1),
      errors,
      labelsInDb: checks.labels,
      slotsLabelledTwice: checks.twice,
      itemsLabelledTwiceByOnePerson: checks.personTwice,
      ranOutOfSlots: emptyQueues,
      rssAfterSignInMb,
      peakRssMb,
      targets: { submitP95Ms: SUBMIT_P95_TARGET_MS, errors: 0, slotsLabelledTwice: 0 },
      pass: s.p95Ms < SUBMIT_P95_TARGET_MS && errors === 0 && checks.twice === 0 && checks.labels === s.n,
    }
    console.log(
      `annotators: ${opts.annotators} for ${result.seconds} s: ${s.n} submits (p50 ${s.p50Ms} ms, p95 ${s.p95Ms} ms; target < ${SUBMIT_P95_TARGET_MS}), ${result.claims} claims, ${lostRaces[409]} lost races, ${errors} errors (target 0), ${checks.twice} slots labelled twice (target 0), peak RSS ${peakRssMb} MB`,
    )
    return result
  } finally {
    clearInterval(sampler)
    await server.stop()
    await agent.close()
  }
}
