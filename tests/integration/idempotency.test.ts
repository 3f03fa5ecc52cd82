import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { POST as postDataset } from '@/app/api/v1/datasets/route'
import { POST as postRun } from '@/app/api/v1/runs/route'
import { POST as postStudy } from '@/app/api/v1/studies/route'
import { fingerprintOf } from '@/lib/server/api/idempotency'
import { db, sql } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { executeOrThrow } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

/**
 * Creates over REST can be retried safely with an Idempotency-Key (draft-ietf-httpapi-idempotency-
 * key-header): the same key and request answer the first answer again without creating twice, even
 * when the retries race the first request; another request with the key is a 422.
 */
const fake = useFakeLlm()
afterAll(async () => {
  await stopBoss()
})

type Actor = Awaited<ReturnType<typeof makeUser>>
let researcher: Actor
let key: string
let studyId: string
let datasetId: string
let connectionId: string

beforeAll(async () => {
  researcher = await makeUser('researcher')
  key = (await executeOrThrow(createApiKey, researcher, { name: 'retries' })).key
  const study = await makeStudy(researcher)
  studyId = study.id
  connectionId = (await fakeConnection(study.id, fake())).id
  datasetId = (
    await db.dataset.create({
      data: {
        studyId,
        name: 'one ester',
        kind: 'drug',
        source: 'inline',
        instances: {
          create: { index: 0, input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'ester' },
        },
      },
    })
  ).id
})

type Route = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>
function post(route: Route, path: string, body: unknown, headers: Record<string, string> = {}, apiKey = key) {
  const form = body instanceof FormData
  return route(
    new Request(`http://127.0.0.1/api/v1${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(form ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: form ? body : JSON.stringify(body),
    }),
    { params: Promise.resolve({}) },
  )
}

const studiesNamed = (name: string) => db.study.count({ where: { name } })
const runBody = (name: string) => ({
  studyId,
  protocol: 'pxp',
  name,
  datasetId,
  n: 4,
  generator: { connectionId, model: 'gen' },
  checker: { connectionId, model: 'judge' },
})

describe('Idempotency-Key on creates', () => {
  it('answers a retry with the first answer, and creates once', async () => {
    const name = `retried ${randomUUID()}`
    const k = { 'idempotency-key': randomUUID() }
    const first = await post(postStudy, '/studies', { name }, k)
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const again = await post(postStudy, '/studies', { name }, k)
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await again.json()).toEqual(await first.json())
    expect(await studiesNamed(name)).toBe(1)
    // The draft's Structured Field form ("…") is the same key.
    const quoted = await post(postStudy, '/studies', { name }, { 'idempotency-key': `"${k['idempotency-key']}"` })
    expect(quoted.headers.get('idempotent-replayed')).toBe('true')
    expect(await studiesNamed(name)).toBe(1)
    // Without a key, every POST creates.
    await post(postStudy, '/studies', { name })
    expect(await studiesNamed(name)).toBe(2)
  })

  it('refuses the key for another request with 422, and for another path', async () => {
    const k = { 'idempotency-key': randomUUID() }
    const name = `first ${randomUUID()}`
    expect((await post(postStudy, '/studies', { name }, k)).status).toBe(201)
    const other = await post(postStudy, '/studies', { name: `${name} and more` }, k)
    expect(other.status).toBe(422)
    expect((await other.json()).error).toMatch(/Idempotency-Key/)
    expect(await studiesNamed(`${name} and more`)).toBe(0)
    const elsewhere = await post(postRun, '/runs', runBody(name), k)
    expect(elsewhere.status).toBe(422)
    expect(await db.run.count({ where: { name } })).toBe(0)
  })

  it('keys are per account', async () => {
    const other = await makeUser('researcher')
    const otherKey = (await executeOrThrow(createApiKey, other, { name: 'k' })).key
    const k = { 'idempotency-key': randomUUID() }
    const name = `shared key ${randomUUID()}`
    expect((await post(postStudy, '/studies', { name }, k)).status).toBe(201)
    const theirs = await post(postStudy, '/studies', { name }, k, otherKey)
    expect(theirs.status).toBe(201)
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    expect(await studiesNamed(name)).toBe(2)
  })

  it('a refused request keeps nothing: the corrected one goes through with the same key', async () => {
    const k = { 'idempotency-key': randomUUID() }
    expect((await post(postStudy, '/studies', { name: '' }, k)).status).toBe(400)
    const name = `corrected ${randomUUID()}`
    const fixed = await post(postStudy, '/studies', { name }, k)
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get('idempotent-replayed')).toBeNull()
    expect(await studiesNamed(name)).toBe(1)
  })

  it('a malformed key is a 400 and creates nothing', async () => {
    const name = `bad key ${randomUUID()}`
    for (const bad of ['', '   ', 'clé', 'x'.repeat(256)]) {
      const res = await post(postStudy, '/studies', { name }, { 'idempotency-key': bad })
      expect(res.status, JSON.stringify(bad)).toBe(400)
    }
    expect(await studiesNamed(name)).toBe(0)
  })

  it('while the first request runs, a retry gets 409 with Retry-After; keys expire after 24 hours', async () => {
    const k = randomUUID()
    const name = `slow ${randomUUID()}`
    const fingerprint = await fingerprintOf('POST', '/api/v1/studies', { name })
    await sql().query(`INSERT INTO "IdempotencyKey" ("userId", key, fingerprint) VALUES ($1, $2, $3)`, [
      researcher.userId,
      k,
      fingerprint,
    ])
    const busy = await post(postStudy, '/studies', { name }, { 'idempotency-key': k })
    expect(busy.status).toBe(409)
    expect(busy.headers.get('retry-after')).toBe('1')
    expect(await studiesNamed(name)).toBe(0)
    // A day later the key is free again, for any request.
    await sql().query(
      `UPDATE "IdempotencyKey" SET "createdAt" = now() - interval '25 hours' WHERE "userId" = $1 AND key = $2`,
      [researcher.userId, k],
    )
    const later = await post(postStudy, '/studies', { name: `${name} later` }, { 'idempotency-key': k })
    expect(later.status).toBe(201)
    expect(await studiesNamed(`${name} later`)).toBe(1)
  })

  it('eight racing requests with one key create one run; each answers 201 with it or 409', async () => {
    const k = { 'idempotency-key': randomUUID() }
    const name = `raced ${randomUUID()}`
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(postRun, '/runs', runBody(name), k)))
    const statuses = answers.map((a) => a.status)
    expect(
      statuses.every((s) => s === 201 || s === 409),
      String(statuses),
    ).toBe(true)
    expect(await db.run.count({ where: { name } })).toBe(1)
    const run = await db.run.findFirstOrThrow({ where: { name } })
    for (const a of answers.filter((a) => a.status === 201)) expect((await a.json()).id).toBe(run.id)
    expect(answers.filter((a) => a.status === 201 && !a.headers.get('idempotent-replayed'))).toHaveLength(1)
    // After the race every retry is the first answer.
    const late = await post(postRun, '/runs', runBody(name), k)
    expect(late.status).toBe(201)
    expect((await late.json()).id).toBe(run.id)
  })

  it('an upload retried while it is stored, and after, creates one dataset (the file is part of the request)', async () => {
    const k = { 'idempotency-key': randomUUID() }
    const name = `uploaded ${randomUUID()}`
    const form = (csv: string) => {
      const f = new FormData()
      f.set('studyId', studyId)
      f.set('name', name)
      f.set('kind', 'drug')
      f.set('file', new File([csv], 'retro.csv'))
      return f
    }
    const csv = 'output,input,explanation\nCCO.CC(=O)O,CCOC(C)=O,Ester.\n'
    const answers = await Promise.all(Array.from({ length: 4 }, () => post(postDataset, '/datasets', form(csv), k)))
    expect(answers.map((a) => a.status).every((s) => s === 201 || s === 409)).toBe(true)
    expect(await db.dataset.count({ where: { name } })).toBe(1)
    const replay = await post(postDataset, '/datasets', form(csv), k)
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    // The same fields with another file are another request.
    const otherFile = await post(postDataset, '/datasets', form(`${csv}CCCO.CC(=O)O,CCCOC(C)=O,Ester.\n`), k)
    expect(otherFile.status).toBe(422)
    expect(await db.dataset.count({ where: { name } })).toBe(1)
  })
})
