import { spawnSync } from 'node:child_process'
import path from 'node:path'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterAll, describe, expect, it } from 'vitest'
import { type Endpoint, endpoints } from '@/lib/server/api/endpoints'
import { handle } from '@/lib/server/api/handler'
import { openApiDocument } from '@/lib/server/api/openapi'
import { db } from '@/lib/server/db'
import { pluginFor } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import { createRun } from '@/lib/server/services/runs'
import { evinceFixture } from '../../protocols/evince/fixture'
import { pxpFixture } from '../../protocols/pxp/fixture'
import { scorekeepingFixture } from '../../protocols/scorekeeping/fixture'
import type { World } from '../engine/fixtures/types'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { ROOT } from '../support/processes'

/**
 * One seat vocabulary: POST /runs (and `parley runs create`) takes the same body for every protocol:
 * seats as SeatFills by the protocol's seat names, its config and its options. A bad seat is refused
 * before anything is written, with a 400 whose message and field name the seat.
 */
const fake = useFakeLlm()
afterAll(async () => {
  await stopBoss()
})

async function world(): Promise<World & { key: string; outsider: string; viewer: string; other: string }> {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const other = await makeUser('expert')
  const viewer = await makeUser('researcher')
  const outsider = await makeUser('expert')
  const study = await makeStudy(researcher, [expert, other, { ...viewer, role: 'viewer' }])
  const conn = await fakeConnection(study.id, fake())
  const k = await execute(createApiKey, researcher, { name: 'script' })
  if (!k.ok) throw new Error(k.error)
  return {
    researcher,
    expert,
    studyId: study.id,
    connectionId: conn.id,
    fake: fake(),
    key: k.data.key,
    outsider: outsider.userId,
    viewer: viewer.userId,
    other: other.userId,
  }
}

function post(ep: Endpoint, key: string, body: unknown) {
  const req = new Request('http://127.0.0.1/api/v1/runs', {
    method: ep.method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return handle(ep)(req, { params: Promise.resolve({}) })
}

const llm = (w: World, model: string) => ({ kind: 'llm', model: { connectionId: w.connectionId, model } })

type Body = Record<string, unknown> & { seats: Record<string, unknown>; datasetId?: unknown }

/** A valid body of each protocol in the one shape, on a fresh dataset of two instances. */
const bodies: Record<'pxp' | 'evince' | 'scorekeeping', (w: World) => Promise<Body>> = {
  async pxp(w: World) {
    return {
      studyId: w.studyId,
      protocol: 'pxp',
      ...pxpFixture.setup(w, await pxpFixture.dataset(w, 2)),
    } as unknown as Body
  },
  async evince(w: World) {
    return {
      studyId: w.studyId,
      protocol: 'evince',
      ...evinceFixture.setup(w, await evinceFixture.dataset(w, 2)),
    } as unknown as Body
  },
  async scorekeeping(w: World) {
    return {
      studyId: w.studyId,
      protocol: 'scorekeeping',
      ...scorekeepingFixture.setup(w, await scorekeepingFixture.dataset(w, 2)),
    } as unknown as Body
  },
}

describe('POST /runs in one shape', () => {
  it('creates a PXP, an EVINCE and a scorekeeping run from the same body shape', async () => {
    const w = await world()
    for (const [protocol, body] of Object.entries(bodies)) {
      const b = await body(w)
      // The same keys for every protocol: nothing protocol-specific outside seats, config and options.
      expect(
        Object.keys(b).every((k) =>
          ['studyId', 'protocol', 'name', 'datasetId', 'seats', 'config', 'options'].includes(k),
        ),
      ).toBe(true)
      const res = await post(endpoints.createRun, w.key, { ...b, repetitions: 2 })
      expect(res.status, protocol).toBe(201)
      const created = (await res.json()) as { id: string; sessions: number; protocol: string }
      expect(created).toMatchObject({ protocol, sessions: 4 })
      const run = await db.run.findUniqueOrThrow({ where: { id: created.id } })
      expect(run.protocol).toBe(protocol)
      expect(Object.keys(run.seats as object).sort()).toEqual(
        { pxp: ['h', 'm'], evince: ['A', 'B', 'moderator'], scorekeeping: ['answerer', 'questioner'] }[protocol],
      )
    }
    const runs = await db.run.findMany({ where: { studyId: w.studyId } })
    const byProtocol = Object.fromEntries(runs.map((r) => [r.protocol, r]))
    // The config is the protocol's, checked and completed by its schema; options reach the plugin.
    // (carry-over, a PXP option, travels in the config: PXP's schedule reads it there)
    expect(byProtocol.pxp?.config).toEqual({ n: 4, k: 2, carryOver: false })
    expect(byProtocol.evince?.config).toMatchObject({ crit: true, report: true, labels: [], delta: { initial: 0.9 } })
    // The game master was filled for the client: the questioner seat takes only that program.
    expect((byProtocol.scorekeeping?.seats as Record<string, unknown> | undefined)?.questioner).toMatchObject({
      kind: 'program',
      program: 'game-master',
    })
  })

  it('a seat listing several people: the sessions take them round robin', async () => {
    const w = await world()
    const b = await bodies.pxp(w)
    const res = await post(endpoints.createRun, w.key, {
      ...b,
      seats: {
        ...b.seats,
        h: [
          { kind: 'human', userId: w.expert.userId },
          { kind: 'human', userId: w.other },
        ],
      },
    })
    expect(res.status).toBe(201)
    const { id } = (await res.json()) as { id: string }
    const sessions = await db.protocolSession.findMany({
      where: { runId: id },
      orderBy: { position: 'asc' },
      select: { people: { select: { seat: true, userId: true } } },
    })
    expect(sessions.map((s) => s.people.map((p) => `${p.seat}:${p.userId}`))).toEqual([
      [`h:${w.expert.userId}`],
      [`h:${w.other}`],
    ])
  })

  /** Bad seats, each with the seat its error must name (field `seats.<seat>` and the seat's label). */
  const badSeats = (w: World & { outsider: string; viewer: string }, protocol: keyof typeof bodies) =>
    ({
      pxp: [
        { seats: { m: llm(w, 'gen'), h: { kind: 'proxy', helpers: {} } }, seat: 'h', message: /AGREE checker.*Tester/ },
        {
          seats: { m: { kind: 'proxy', helpers: {} } },
          seat: 'm',
          message: /Machine seat cannot be filled by the ground-truth proxy/,
        },
        { seats: { x: llm(w, 'gen') }, seat: 'x', message: /no seat "x"/ },
      ],
      evince: [
        {
          seats: { A: llm(w, 'a'), moderator: { kind: 'program', program: 'no-judge' } },
          seat: 'B',
          message: /Debater B/,
        },
        { seats: { B: { kind: 'human', userId: w.outsider } }, seat: 'B', message: /Debater B seat is not a member/ },
        {
          seats: { moderator: { kind: 'program', program: 'oracle' } },
          seat: 'moderator',
          message: /Unknown program "oracle" for the Moderator/,
        },
        {
          seats: { A: { kind: 'llm', model: { connectionId: 'no-such-connection' } } },
          seat: 'A',
          message: /connection .* of the Debater A seat/,
        },
      ],
      scorekeeping: [
        {
          seats: { answerer: { kind: 'proxy' } },
          seat: 'answerer',
          message: /Answerer seat cannot be filled by the ground-truth proxy/,
        },
        {
          seats: { answerer: { kind: 'human', userId: w.viewer } },
          seat: 'answerer',
          message: /only reads this study .* Answerer seat/,
        },
        { seats: { answerer: { kind: 'human' } }, seat: 'answerer', message: /Name the person for the Answerer seat/ },
        {
          seats: { questioner: { kind: 'llm', model: { connectionId: w.connectionId } }, answerer: llm(w, 'gen') },
          seat: 'questioner',
          message: /Questioner/,
        },
      ],
    })[protocol]

  for (const protocol of Object.keys(bodies) as (keyof typeof bodies)[]) {
    it(`${protocol}: a bad seat is a 400 naming the seat, and nothing is written`, async () => {
      const w = await world()
      const body = await bodies[protocol](w)
      const count = async () => ({
        runs: await db.run.count({ where: { studyId: w.studyId } }),
        datasets: await db.dataset.count({ where: { studyId: w.studyId } }),
        instances: await db.instance.count({ where: { dataset: { studyId: w.studyId } } }),
        audit: await db.auditLog.count({ where: { studyId: w.studyId, action: 'run.create' } }),
      })
      const before = await count()
      for (const bad of badSeats(w, protocol)) {
        // Replacing some seats (a seat left out of `bad.seats` keeps its good fill unless it is the bad one).
        const seats = { ...body.seats, ...bad.seats }
        if (!(bad.seat in bad.seats)) delete seats[bad.seat as keyof typeof seats]
        const res = await post(endpoints.createRun, w.key, { ...body, seats })
        expect(res.status, JSON.stringify(bad.seats)).toBe(400)
        const err = (await res.json()) as { error: string; fieldErrors?: Record<string, string[]> }
        expect(err.fieldErrors, err.error).toHaveProperty([`seats.${bad.seat}`])
        expect(err.fieldErrors?.[`seats.${bad.seat}`]?.join(' ')).toMatch(bad.message)
      }
      // A typed-in EVINCE case with a bad seat: not even the typed-in case is stored.
      if (protocol === 'evince') {
        const { datasetId: _, ...rest } = body
        const res = await post(endpoints.createRun, w.key, {
          ...rest,
          seats: { ...body.seats, A: { kind: 'human', userId: w.outsider } },
          options: { case: { symptoms: 'fever and rash', truth: 'Dengue Fever' } },
        })
        expect(res.status).toBe(400)
      }
      expect(await count()).toEqual(before)
    })
  }

  it('a bad config or option is a 400 naming its field; the same shape for every protocol', async () => {
    const w = await world()
    const pxp = await bodies.pxp(w)
    const badConfig = await post(endpoints.createRun, w.key, { ...pxp, config: { n: 0, k: 2 } })
    expect(badConfig.status).toBe(400)
    expect(((await badConfig.json()) as { fieldErrors: object }).fieldErrors).toHaveProperty(['config.n'])
    const sk = await bodies.scorekeeping(w)
    const badOption = await post(endpoints.createRun, w.key, { ...sk, options: { carryOver: true } })
    expect(badOption.status).toBe(400)
    expect(((await badOption.json()) as { error: string }).error).toMatch(/^options/)
    expect(await db.run.count({ where: { studyId: w.studyId } })).toBe(0)
  })

  it('OpenAPI documents one request body for every protocol, and the bodies above validate against it', async () => {
    const w = await world()
    const doc = (await openApiDocument()) as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>
      >
    }
    const schema = doc.paths['/runs']?.post?.requestBody?.content['application/json']?.schema as {
      properties: Record<string, { enum?: string[] }>
      required: string[]
      anyOf?: unknown
      oneOf?: unknown
    }
    expect(schema.anyOf).toBeUndefined()
    expect(schema.oneOf).toBeUndefined()
    expect(schema.properties.protocol?.enum).toEqual(expect.arrayContaining(['pxp', 'evince', 'scorekeeping']))
    expect(schema.required).toEqual(expect.arrayContaining(['studyId', 'protocol', 'name', 'seats']))
    for (const k of ['seats', 'config', 'options', 'repetitions', 'maxInFlight'])
      expect(schema.properties).toHaveProperty([k])
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats(ajv)
    const validate = ajv.compile(schema)
    for (const body of Object.values(bodies)) {
      const b = await body(w)
      expect(validate(b), JSON.stringify(validate.errors)).toBe(true)
    }
    // The old per-protocol fields are not the documented shape.
    expect(validate({ studyId: 's', protocol: 'pxp', name: 'x', generator: { connectionId: 'c' } })).toBe(false)
  })
})

describe('the set-up forms post the seat picker’s fields', () => {
  it('the scorekeeping and EVINCE forms make the one body: the seats their pickers chose', async () => {
    const w = await world()
    const model = JSON.stringify({ connectionId: w.connectionId, model: 'gen' })
    const sk = await pluginFor('scorekeeping')
    const skBody = (await sk.setup()).fromForm?.({
      name: 'form run',
      datasetId: await scorekeepingFixture.dataset(w, 2),
      'seats.answerer.kind': 'llm',
      'seats.answerer.model': model,
      'seats.answerer.modelName': 'gen-2',
      'seats.answerer.temperature': '0.5',
      repetitions: '1',
    }) as Record<string, unknown>
    const a = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'scorekeeping', ...skBody })
    expect(a.ok, a.ok ? '' : a.error).toBe(true)
    if (a.ok)
      expect((await db.run.findUniqueOrThrow({ where: { id: a.data.id } })).seats).toMatchObject({
        answerer: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen-2', temperature: 0.5 } },
        questioner: { kind: 'program', program: 'game-master' },
      })
    const claim = (await sk.setup()).fromForm?.({
      name: 'claimed',
      datasetId: await scorekeepingFixture.dataset(w, 1),
      'seats.answerer.kind': 'claimable',
    }) as Record<string, unknown>
    const c = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'scorekeeping', ...claim })
    expect(c.ok).toBe(true)
    if (c.ok)
      expect((await db.run.findUniqueOrThrow({ where: { id: c.data.id } })).seats).toMatchObject({
        answerer: { kind: 'human', claimable: true },
      })

    const ev = await pluginFor('evince')
    const evBody = (await ev.setup()).fromForm?.({
      name: 'form debate',
      source: 'single',
      symptoms: 'fever, rash and joint pain',
      'seats.A.kind': 'llm',
      'seats.A.model': model,
      'seats.A.temperature': '0.2',
      'seats.B.kind': 'human',
      'seats.B.userId': w.expert.userId,
      k: '3',
    }) as Record<string, unknown>
    const d = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'evince', ...evBody })
    expect(d.ok, d.ok ? '' : d.error).toBe(true)
    if (d.ok) {
      const run = await db.run.findUniqueOrThrow({ where: { id: d.data.id } })
      expect(run.seats).toMatchObject({
        A: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen', temperature: 0.2 } },
        B: { kind: 'human', userId: w.expert.userId },
        moderator: { kind: 'program', program: 'no-judge' },
      })
      expect(run.config).toMatchObject({ k: 3, crit: false, report: false })
    }
    // A person picked but not chosen: the error names the seat.
    const missing = (await ev.setup()).fromForm?.({
      name: 'no person',
      source: 'single',
      symptoms: 'fever',
      'seats.A.kind': 'llm',
      'seats.A.model': model,
      'seats.B.kind': 'human',
    }) as Record<string, unknown>
    const m = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'evince', ...missing })
    expect(m).toMatchObject({ ok: false, status: 400 })
    if (!m.ok) expect(m.fieldErrors).toHaveProperty(['seats.B'])
  })
})

describe('the PXP set-up form posts the seat picker’s fields', () => {
  it('makes the one body: the machine an LLM with the shared checker, the proxy tester with it too', async () => {
    const w = await world()
    const setup = await (await pluginFor('pxp')).setup()
    const gen = JSON.stringify({ connectionId: w.connectionId, model: 'gen' })
    const body = setup.fromForm?.({
      name: 'form experiment',
      datasetId: await pxpFixture.dataset(w, 2),
      sample: '1',
      'seats.m.kind': 'llm',
      'seats.m.model': gen,
      'seats.m.modelName': 'gen-2',
      'seats.m.temperature': '0.3',
      'seats.h.kind': 'proxy',
      'helpers.checker': gen,
      'helpers.checker.modelName': 'judge',
      'config.n': '6',
      'config.k': '2',
      'options.carryOver': 'on',
      repetitions: '2',
    }) as Record<string, unknown>
    const checker = { connectionId: w.connectionId, model: 'judge' }
    expect(body).toMatchObject({
      seats: {
        m: {
          kind: 'llm',
          model: { connectionId: w.connectionId, model: 'gen-2', temperature: 0.3 },
          helpers: { checker },
        },
        h: { kind: 'proxy', helpers: { checker } },
      },
      config: { n: 6, k: 2 },
      options: { carryOver: true },
      shuffle: false,
    })
    const r = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'pxp', ...body })
    expect(r.ok, r.ok ? '' : r.error).toBe(true)
    if (r.ok) {
      expect(r.data.sessions).toBe(2)
      const run = await db.run.findUniqueOrThrow({ where: { id: r.data.id } })
      expect(run.config).toEqual({ n: 6, k: 2, carryOver: true })
      expect(run.seats).toMatchObject({
        m: { kind: 'llm', model: { model: 'gen-2', temperature: 0.3 }, helpers: { checker } },
        h: { kind: 'proxy', helpers: { checker } },
      })
    }
  })

  it('experts in the machine seat take the sessions round robin; the tag-only proxy rule is recorded', async () => {
    const w = await world()
    const setup = await (await pluginFor('pxp')).setup()
    const gen = JSON.stringify({ connectionId: w.connectionId, model: 'gen' })
    const body = setup.fromForm?.({
      name: 'experts play the machine',
      datasetId: await pxpFixture.dataset(w, 2),
      'seats.m.kind': 'human',
      'seats.m.userId': [w.expert.userId, w.other],
      // The machine's LLM fields of a way not chosen are ignored.
      'seats.m.model': gen,
      'seats.h.kind': 'proxy',
      'helpers.checker': gen,
      'config.proxyAnswer': 'tag-only',
    }) as Record<string, unknown>
    expect((body.seats as Record<string, unknown>).m).toEqual([
      { kind: 'human', userId: w.expert.userId },
      { kind: 'human', userId: w.other },
    ])
    const r = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'pxp', ...body })
    expect(r.ok, r.ok ? '' : r.error).toBe(true)
    if (!r.ok) return
    const run = await db.run.findUniqueOrThrow({ where: { id: r.data.id } })
    expect(run.config).toMatchObject({ proxyAnswer: 'tag-only', n: 10, k: 3, carryOver: false })
    const sessions = await db.protocolSession.findMany({
      where: { runId: r.data.id },
      orderBy: { position: 'asc' },
      select: { people: { select: { seat: true, userId: true } } },
    })
    expect(sessions.map((s) => s.people.map((p) => `${p.seat}:${p.userId}`))).toEqual([
      [`m:${w.expert.userId}`],
      [`m:${w.other}`],
    ])
  })

  it('refused fields come back together, each under the name of its form field, as field errors only', async () => {
    const w = await world()
    const setup = await (await pluginFor('pxp')).setup()
    const gen = JSON.stringify({ connectionId: w.connectionId, model: 'gen' })
    const form = {
      name: 'bad bounds',
      datasetId: await pxpFixture.dataset(w, 1),
      'seats.m.kind': 'llm',
      'seats.m.model': gen,
      'seats.h.kind': 'proxy',
      'helpers.checker': gen,
      'config.n': '101',
      repetitions: '0',
    }
    const r = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'pxp',
      ...(setup.fromForm?.(form) as object),
    })
    expect(r).toMatchObject({
      ok: false,
      status: 400,
      fieldsOnly: true,
      fieldErrors: { repetitions: ['Enter a number of at least 1.'], 'config.n': ['Enter a number of at most 100.'] },
    })
    // Experts picked for the machine seat, none chosen: the error names the seat.
    const none = setup.fromForm?.({ ...form, 'config.n': '10', repetitions: '1', 'seats.m.kind': 'human' }) as object
    const m = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'pxp', ...none })
    expect(m).toMatchObject({ ok: false, status: 400 })
    if (!m.ok) expect(m.fieldErrors).toHaveProperty(['seats.m'])
    expect(await db.run.count({ where: { studyId: w.studyId } })).toBe(0)
  })
})

describe('parley runs create', () => {
  const parley = (args: string[], input: string) =>
    spawnSync(process.execPath, [path.join(ROOT, 'bin/parley.mjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, PARLEY_LOG_LEVEL: 'warn' },
      input,
      encoding: 'utf8',
      timeout: 90_000,
    })

  it('creates a run from the one body on standard input; a bad seat exits 1 naming it, nothing written', async () => {
    const w = await world()
    const body = await bodies.scorekeeping(w)
    const ok = parley(['runs', 'create', '-', '--json'], JSON.stringify(body))
    expect(ok.stderr).toBe('')
    expect(ok.status).toBe(0)
    const created = JSON.parse(ok.stdout) as { id: string; sessions: number; started: boolean }
    expect(created).toMatchObject({ sessions: 2, started: false })
    const run = await db.run.findUniqueOrThrow({ where: { id: created.id } })
    expect(run).toMatchObject({ protocol: 'scorekeeping', status: 'draft', studyId: w.studyId })
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: 'run.create', resourceId: created.id } })
    expect(audit.via).toBe('cli')

    const bad = parley(['runs', 'create', '-'], JSON.stringify({ ...body, seats: { answerer: { kind: 'proxy' } } }))
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/seats\.answerer: .*Answerer seat/)
    expect(await db.run.count({ where: { studyId: w.studyId } })).toBe(1)
  }, 120_000)
})
