import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { POST as llmStream } from '@/app/api/llm/stream/route'
import { POST as claimRoute } from '@/app/api/v1/sessions/[sessionId]/claim/route'
import { POST as createStudyRoute } from '@/app/api/v1/studies/route'
import { getAuth } from '@/lib/server/auth/auth'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import { makeSession, makeStudy, makeUser } from '../support/fixtures'

/** The app's own origin in tests (no BETTER_AUTH_URL or PORT set: http://127.0.0.1:3000 is trusted). */
const APP = 'http://127.0.0.1:3000'
/** A page on another port of the same host: same site (SameSite=Lax cookies go along), other origin. */
const OTHER_PORT = 'http://127.0.0.1:4000'
const PASSWORD = 'violet submarine lantern 42'

let researcherCookie: string
let expertCookie: string
let researcherId: string

/** A real better-auth session cookie, from signing in. */
async function sessionCookie(email: string): Promise<string> {
  const res = await getAuth().api.signInEmail({ body: { email, password: PASSWORD }, asResponse: true })
  expect(res.status).toBe(200)
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
}

beforeAll(async () => {
  const researcher = await makeUser('researcher', PASSWORD)
  researcherId = researcher.userId
  researcherCookie = await sessionCookie(researcher.email)
})
afterAll(() => db.$disconnect())

function post(path: string, headers: Record<string, string>, body?: string) {
  return new Request(`${APP}${path}`, { method: 'POST', headers, body })
}

async function studiesNamed(name: string) {
  return db.study.count({ where: { name, createdById: researcherId } })
}

describe('cookie-authenticated REST mutations', () => {
  it('refuses a study created from a page on another port (403), with a text/plain body too', async () => {
    const name = `csrf ${randomUUID()}`
    for (const contentType of ['text/plain', 'application/json']) {
      const res = await createStudyRoute(
        post(
          '/api/v1/studies',
          { cookie: researcherCookie, origin: OTHER_PORT, 'sec-fetch-site': 'same-site', 'content-type': contentType },
          JSON.stringify({ name }),
        ),
        {},
      )
      expect(res.status).toBe(403)
      expect((await res.json()).error).toMatch(/origin/i)
    }
    expect(await studiesNamed(name)).toBe(0)
  })

  it('refuses a missing Origin unless the browser says same-origin', async () => {
    const name = `csrf ${randomUUID()}`
    const bare = await createStudyRoute(
      post(
        '/api/v1/studies',
        { cookie: researcherCookie, 'sec-fetch-site': 'same-site', 'content-type': 'application/json' },
        JSON.stringify({ name }),
      ),
      {},
    )
    expect(bare.status).toBe(403)
    expect(await studiesNamed(name)).toBe(0)
    const same = await createStudyRoute(
      post(
        '/api/v1/studies',
        { cookie: researcherCookie, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' },
        JSON.stringify({ name }),
      ),
      {},
    )
    expect(same.status).toBe(201)
    expect(await studiesNamed(name)).toBe(1)
  })

  it('refuses a body that is not declared JSON, from the app origin too (415)', async () => {
    const name = `csrf ${randomUUID()}`
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await createStudyRoute(
        post(
          '/api/v1/studies',
          { cookie: researcherCookie, origin: APP, 'content-type': contentType },
          JSON.stringify({ name }),
        ),
        {},
      )
      expect(res.status).toBe(415)
      expect((await res.json()).error).toMatch(/application\/json/)
    }
    const noType = await createStudyRoute(
      post('/api/v1/studies', { cookie: researcherCookie, origin: APP }, JSON.stringify({ name })),
      {},
    )
    expect(noType.status).toBe(415)
    expect(await studiesNamed(name)).toBe(0)
    const ok = await createStudyRoute(
      post(
        '/api/v1/studies',
        { cookie: researcherCookie, origin: APP, 'content-type': 'application/json; charset=utf-8' },
        JSON.stringify({ name }),
      ),
      {},
    )
    expect(ok.status).toBe(201)
    expect(await studiesNamed(name)).toBe(1)
  })

  it("does not let another port take a seat in an expert's name", async () => {
    const expert = await makeUser('expert', PASSWORD)
    expertCookie = await sessionCookie(expert.email)
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher, [expert])
    const session = await makeSession(study.id, {
      protocol: 'pxp',
      config: { n: 10, k: 3 },
      task: 'drug',
      instance: { input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'esterification' },
      seats: {
        m: { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } },
        h: { kind: 'human', claimable: true },
      },
    })
    const ctx = { params: Promise.resolve({ sessionId: session.id }) }
    const seat = () =>
      db.sessionSeat.findUniqueOrThrow({ where: { sessionId_seat: { sessionId: session.id, seat: 'h' } } })
    const res = await claimRoute(
      post(
        `/api/v1/sessions/${session.id}/claim`,
        { cookie: expertCookie, origin: OTHER_PORT, 'content-type': 'text/plain' },
        JSON.stringify({ seat: 'h' }),
      ),
      ctx,
    )
    expect(res.status).toBe(403)
    expect((await seat()).userId).toBeNull()
    const own = await claimRoute(
      post(
        `/api/v1/sessions/${session.id}/claim`,
        { cookie: expertCookie, origin: APP, 'content-type': 'application/json' },
        JSON.stringify({ seat: 'h' }),
      ),
      ctx,
    )
    expect(own.status).toBe(200)
    expect((await seat()).userId).toBe(expert.userId)
  })

  it('leaves API-key callers as they were: no Origin, any content type', async () => {
    const owner = await makeUser('researcher')
    const key = await execute(createApiKey, owner, { name: 'script' })
    if (!key.ok) throw new Error(key.error)
    const name = `script ${randomUUID()}`
    const res = await createStudyRoute(
      post(
        '/api/v1/studies',
        { authorization: `Bearer ${key.data.key}`, 'content-type': 'text/plain' },
        JSON.stringify({ name }),
      ),
      {},
    )
    expect(res.status).toBe(201)
    expect(await db.study.count({ where: { name } })).toBe(1)
  })

  it('guards the model playground stream the same way', async () => {
    const admin = await makeUser('admin', PASSWORD)
    const cookie = await sessionCookie(admin.email)
    const res = await llmStream(
      post(
        '/api/llm/stream',
        { cookie, origin: OTHER_PORT, 'content-type': 'text/plain' },
        JSON.stringify({ connectionId: 'builtin-demo', prompt: 'hello' }),
      ),
    )
    expect(res.status).toBe(403)
    const plain = await llmStream(
      post('/api/llm/stream', { cookie, origin: APP, 'content-type': 'text/plain' }, JSON.stringify({ prompt: 'x' })),
    )
    expect(plain.status).toBe(415)
  })
})
