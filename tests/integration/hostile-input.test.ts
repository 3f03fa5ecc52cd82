import { Worker } from 'node:worker_threads'
import fc from 'fast-check'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { GET as ready } from '@/app/api/v1/ready/route'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { checkPxpAnswer } from '@/protocols/pxp/server/operations'
import { submitTurn } from '@/lib/server/services/sessions'
import { tryMatch } from '@/protocols/pxp/server/templates'
import { canonicalSmiles, rdkitSandbox, SMILES_LIMITS } from '@/lib/tasks/chem'
import { measureLoop } from '../support/event-loop'
import { makeAwaitingPxpSession, makeStudy, makeUser } from '../support/fixtures'

/**
 * Nothing an expert types can break a process. A DRUG prediction of about 1,000 carbons sent while
 * typing (`pxp.check-answer`) or as a turn left the process's RDKit answering "memory access out of
 * bounds" to every later call (every DRUG page a 500) while /health stayed 200, and 700 spun the
 * process at 100 % CPU for 11 minutes; a template's Try MATCH on 10,000 characters took 5–10 s of
 * the event loop, and four at once held a health query for 37 s. Each check here failed before
 * RDKit and the regex moved to worker threads with limits.
 */

const env = (name: string, value: string | undefined) => {
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
}
const saved = {
  check: process.env.PARLEY_CHECK_ANSWER_PER_MINUTE,
  tryMatch: process.env.PARLEY_TRY_MATCH_PER_MINUTE,
}
afterEach(() => {
  env('PARLEY_CHECK_ANSWER_PER_MINUTE', saved.check)
  env('PARLEY_TRY_MATCH_PER_MINUTE', saved.tryMatch)
})
beforeAll(async () => {
  await db.$executeRaw`DELETE FROM "RateLimit" WHERE true`
})
afterAll(async () => {
  await db.$disconnect()
})

async function drugExpert() {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const s = await makeAwaitingPxpSession(study.id, expert.userId)
  return { expert, sessionId: s.id }
}

/** SMILES written to hurt: long chains, deep branches, big rings, huge ring numbers, many parts, garbage. */
const hostileSmiles = fc.oneof(
  fc.integer({ min: 600, max: 5000 }).map((n) => 'C'.repeat(n)),
  fc.integer({ min: 200, max: 1500 }).map((n) => `${'C('.repeat(n)}C${')'.repeat(n)}`),
  fc.integer({ min: 200, max: 1000 }).map((n) => `C1${'C'.repeat(n)}C1`),
  fc.integer({ min: 100, max: 99_999 }).map((r) => `C%(${r})CCCCC%(${r}).CC%(${r})`),
  fc.integer({ min: 50, max: 600 }).map((n) => Array.from({ length: n }, (_, i) => `C%${10 + (i % 90)}`).join('')),
  fc.integer({ min: 21, max: 3000 }).map((n) => Array(n).fill('C').join('.')),
  fc.integer({ min: 30, max: 400 }).map((n) => 'c1ccc(cc1)'.repeat(n)),
  fc.integer({ min: 1, max: 50 }).map((n) => `C1CC2${'C'.repeat(n)}(C1)CC2`.repeat(10)),
  fc.string({ unit: fc.constantFrom(...'CNOScnos()[]=#@+-123456789%.\\/*H'.split('')), maxLength: 3000 }),
  fc.string({ maxLength: 400 }),
  // At the limits: the largest inputs RDKit is given.
  fc.constant('C'.repeat(SMILES_LIMITS.atoms)),
  fc.constant(`${'C('.repeat(SMILES_LIMITS.atoms - 1)}C${')'.repeat(SMILES_LIMITS.atoms - 1)}`),
)

describe('DRUG: hostile SMILES', () => {
  it('never break RDKit: every check answers (no 5xx), RDKit works after each, and the process keeps answering', async () => {
    process.env.PARLEY_CHECK_ANSWER_PER_MINUTE = '100000'
    const { expert, sessionId } = await drugExpert()
    const failures: string[] = []
    const report = await measureLoop(() =>
      fc.assert(
        fc.asyncProperty(hostileSmiles, async (prediction) => {
          const r = await execute(checkPxpAnswer, expert, { sessionId, prediction })
          if (!r.ok) failures.push(`${r.status} ${r.error} for ${prediction.slice(0, 40)}…`)
          expect(r.ok).toBe(true)
          expect(await canonicalSmiles('OCC')).toBe('CCO')
        }),
        { numRuns: 40, seed: 20_261_127 },
      ),
    )
    expect(failures).toEqual([])
    // The event loop never waited for RDKit: a health query kept answering meanwhile.
    expect(report.maxMs).toBeLessThan(500)
    expect(report.pingMaxMs).toBeLessThan(1000)
    expect(report.pings).toBeGreaterThan(5)
  }, 240_000)

  it('over the limits, the check and the turn say why (nothing stored), and a valid answer goes through after', async () => {
    process.env.PARLEY_CHECK_ANSWER_PER_MINUTE = '100000'
    const { expert, sessionId } = await drugExpert()
    const turn = (prediction: string) =>
      execute(submitTurn, expert, {
        sessionId,
        seq: 2,
        matchPrev: false,
        agreePrev: false,
        prediction,
        explanation: 'my reasons',
      })
    for (const [prediction, why] of [
      ['C'.repeat(1000), /has 1,000 atoms; Parley checks at most 250/],
      ['C'.repeat(700), /has 700 atoms/],
      [Array(25).fill('CCO').join('.'), /lists 25 molecules; Parley checks at most 20/],
      ['C'.repeat(2001), /has 2,001 characters; Parley checks at most 2,000/],
    ] as const) {
      const checked = await execute(checkPxpAnswer, expert, { sessionId, prediction })
      expect(checked).toMatchObject({ ok: true, data: { valid: false, error: expect.stringMatching(why), svg: null } })
      const sent = await turn(prediction)
      expect(sent).toMatchObject({ ok: false, status: 400, fieldErrors: { prediction: [expect.stringMatching(why)] } })
    }
    expect(await db.protocolMessage.count({ where: { sessionId } })).toBe(1)
    const good = await execute(checkPxpAnswer, expert, { sessionId, prediction: 'CCO.CC(=O)O' })
    expect(good).toMatchObject({ ok: true, data: { valid: true, error: null, match: false } })
    expect(good.ok && good.data.svg).toContain('<svg')
    expect(await turn('CCO.CC(=O)O')).toMatchObject({ ok: true })
  })

  it('pxp.check-answer is limited per person (PARLEY_CHECK_ANSWER_PER_MINUTE): 429 past it, others unaffected', async () => {
    process.env.PARLEY_CHECK_ANSWER_PER_MINUTE = '3'
    const a = await drugExpert()
    const b = await drugExpert()
    const check = (who: typeof a) =>
      execute(checkPxpAnswer, who.expert, { sessionId: who.sessionId, prediction: 'CCO' })
    for (let i = 0; i < 3; i++) expect(await check(a)).toMatchObject({ ok: true })
    expect(await check(a)).toMatchObject({ ok: false, status: 429, error: expect.stringMatching(/at most 3 a minute/) })
    expect(await check(b)).toMatchObject({ ok: true })
  })
})

describe('readiness while RDKit cannot start', () => {
  const options = { ...rdkitSandbox().settings }
  afterEach(async () => {
    rdkitSandbox().configure(options)
    await rdkitSandbox().ensureStarted(true)
  })

  it('/api/v1/ready answers 503 naming RDKit, DRUG checks answer 503, and both recover once it starts', async () => {
    process.env.PARLEY_CHECK_ANSWER_PER_MINUTE = '100000'
    const { expert, sessionId } = await drugExpert()
    expect((await ready()).status).toBe(200)
    const sb = rdkitSandbox()
    await sb.stop()
    // RDKit's WebAssembly cannot be loaded, as when the worker cannot be created again.
    sb.configure({
      retryAfterMs: 0,
      create: () =>
        new Worker(new URL('../../lib/tasks/rdkit-worker.mjs', import.meta.url), {
          execArgv: [],
          workerData: { wasm: '/nonexistent/RDKit_minimal.wasm' },
        }),
    })
    const checked = await execute(checkPxpAnswer, expert, { sessionId, prediction: 'CCO' })
    expect(checked).toMatchObject({ ok: false, status: 503, error: expect.stringMatching(/^RDKit cannot start/) })
    const res = await ready()
    expect(res.status).toBe(503)
    expect(await res.json()).toMatchObject({ status: 'error', workers: [expect.stringMatching(/^RDKit cannot start/)] })

    sb.configure({ create: options.create })
    expect((await ready()).status).toBe(200)
    expect(await execute(checkPxpAnswer, expert, { sessionId, prediction: 'CCO' })).toMatchObject({
      ok: true,
      data: { valid: true },
    })
  })
})

describe('regex MATCH: Try on long texts', () => {
  const match = { mode: 'regex', pattern: '(\\w+\\s?){1,1000}z', flags: 'i' }
  const text = 'a'.repeat(10_000)

  it('four 10,000-character Tries at once leave the process answering; each answers or says it ran out of time', async () => {
    const researcher = await makeUser('researcher')
    const t0 = performance.now()
    const one = await execute(tryMatch, researcher, { match, a: text, b: text })
    const oneMs = performance.now() - t0
    const report = await measureLoop(() =>
      Promise.all([1, 2, 3, 4].map(() => execute(tryMatch, researcher, { match, a: text, b: text }))),
    )
    console.log(
      JSON.stringify({
        oneTryMs: Math.round(oneMs),
        fourAtOnce: { loopMaxMs: report.maxMs, pings: report.pings, pingMaxMs: Math.round(report.pingMaxMs) },
      }),
    )
    for (const r of [one, ...report.result]) {
      if (r.ok) expect(r.data.match).toBe(false)
      else
        expect(r).toMatchObject({
          status: 422,
          error: expect.stringMatching(/^Regex MATCH took longer than 2000 ms on this input\. Simplify the pattern/),
        })
    }
    expect(report.maxMs).toBeLessThan(500)
    expect(report.pingMaxMs).toBeLessThan(1000)
    expect(report.pings).toBeGreaterThan(3)
    // An ordinary pattern on the same texts answers at once.
    expect(
      await execute(tryMatch, researcher, { match: { mode: 'regex', pattern: 'grade (\\d)' }, a: text, b: 'grade 2' }),
    ).toMatchObject({ ok: true, data: { match: false } })
  }, 120_000)

  it('refuses texts over 10,000 characters with a message, before any matching', async () => {
    const researcher = await makeUser('researcher')
    const r = await execute(tryMatch, researcher, { match, a: 'a'.repeat(10_001), b: 'b' })
    expect(r).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { a: ['Try MATCH takes up to 10,000 characters per prediction.'] },
    })
  })

  it('is limited per person (PARLEY_TRY_MATCH_PER_MINUTE): 429 past it, others unaffected', async () => {
    process.env.PARLEY_TRY_MATCH_PER_MINUTE = '3'
    const a = await makeUser('researcher')
    const b = await makeUser('researcher')
    const tryIt = (who: typeof a) => execute(tryMatch, who, { match: { mode: 'exact' }, a: 'x', b: 'x' })
    for (let i = 0; i < 3; i++) expect(await tryIt(a)).toMatchObject({ ok: true, data: { match: true } })
    expect(await tryIt(a)).toMatchObject({ ok: false, status: 429, error: expect.stringMatching(/at most 3 a minute/) })
    expect(await tryIt(b)).toMatchObject({ ok: true })
  })
})
