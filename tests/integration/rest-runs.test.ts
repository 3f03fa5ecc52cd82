import { afterAll, describe, expect, it } from 'vitest'
import { type Endpoint, endpoints } from '@/lib/server/api/endpoints'
import { handle } from '@/lib/server/api/handler'
import { openApiDocument } from '@/lib/server/api/openapi'
import { db } from '@/lib/server/db'
import { startWorkers } from '@/lib/server/engine/jobs'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import { makeStudy, makeUser } from '../support/fixtures'
import { useBulkWorkers } from '../support/imports'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { GET as exportGET } from '@/app/api/v1/runs/[runId]/export/route'
import { POST as restPOST } from '@/app/api/v1/[...rest]/route'
import { strToU8, zipSync } from 'fflate'
import { demoGameFiles } from '@/protocols/scorekeeping/server/demo'

/**
 * A researcher scripts a study over REST with an API key, as Langfuse users do with its SDK: create a
 * run of any protocol, start it, follow its status, read the results; an expert answers their turn.
 */
const fake = useFakeLlm()
// Imports are jobs: this process works their queue, as the web server does.
useBulkWorkers()
afterAll(async () => {
  await stopBoss()
})

async function keyFor(actor: Awaited<ReturnType<typeof makeUser>>) {
  const k = await execute(createApiKey, actor, { name: 'script' })
  if (!k.ok) throw new Error(k.error)
  return k.data.key
}

function call(
  ep: Endpoint,
  key: string,
  init: { path: string; params?: Record<string, string>; body?: unknown; query?: string },
) {
  const url = `http://127.0.0.1/api/v1${init.path}${init.query ? `?${init.query}` : ''}`
  const req = new Request(url, {
    method: ep.method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  })
  return handle(ep)(req, { params: Promise.resolve(init.params ?? {}) })
}

describe('REST for runs and sessions', () => {
  it('creates, starts and follows a run of a protocol, and an expert takes their turn', async () => {
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const conn = await fakeConnection(study.id, fake())
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: 'Prediction: O\nPathway: Water.' }] },
      { match: { model: 'judge' }, replies: [{ text: 'No' }] },
    ])
    const ds = await db.dataset.create({
      data: {
        studyId: study.id,
        name: 'one',
        kind: 'drug',
        source: 'inline',
        instances: {
          create: { index: 0, input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'ester' },
        },
      },
    })
    const key = await keyFor(researcher)
    const bad = await call(endpoints.createRun, key, {
      path: '/runs',
      body: { studyId: study.id, protocol: 'pxp', name: '' },
    })
    expect(bad.status).toBe(400)
    expect((await bad.json()).fieldErrors).toHaveProperty('name')
    const created = await call(endpoints.createRun, key, {
      path: '/runs',
      body: {
        studyId: study.id,
        protocol: 'pxp',
        name: 'scripted',
        datasetId: ds.id,
        n: 4,
        tester: 'expert',
        expertIds: [expert.userId],
        generator: { connectionId: conn.id, model: 'gen' },
        checker: { connectionId: conn.id, model: 'judge' },
      },
    })
    expect(created.status).toBe(201)
    const run = (await created.json()) as { id: string; firstSessionId: string }
    const workers = await startWorkers(1)
    try {
      const started = await call(endpoints.startRun, key, { path: `/runs/${run.id}/start`, params: { runId: run.id } })
      expect(started.status).toBe(200)
      const again = await call(endpoints.startRun, key, { path: `/runs/${run.id}/start`, params: { runId: run.id } })
      expect(again.status).toBe(409)
      // The expert's turn arrives; their queue and the session say so.
      const expertKey = await keyFor(expert)
      let session: { yourTurn: boolean; ask: { j: number } | null } | undefined
      for (let i = 0; i < 100 && !session?.yourTurn; i++) {
        await new Promise((r) => setTimeout(r, 100))
        const res = await call(endpoints.getSession, expertKey, {
          path: `/sessions/${run.firstSessionId}`,
          params: { sessionId: run.firstSessionId },
        })
        session = await res.json()
      }
      expect(session?.yourTurn).toBe(true)
      const queue = await (await call(endpoints.myQueue, expertKey, { path: '/sessions' })).json()
      expect(queue).toMatchObject({ counts: { yours: 1 }, next: run.firstSessionId })
      const turn = await call(endpoints.submitTurn, expertKey, {
        path: `/sessions/${run.firstSessionId}/turns`,
        params: { sessionId: run.firstSessionId },
        body: {
          seq: session?.ask?.j,
          matchPrev: false,
          agreePrev: false,
          prediction: 'CCO.CC(=O)O',
          explanation: 'Esterification.',
        },
      })
      expect(turn.status).toBe(201)
      const status = await (
        await call(endpoints.getRun, key, { path: `/runs/${run.id}`, params: { runId: run.id } })
      ).json()
      expect(status).toMatchObject({ run: { id: run.id, status: 'running' }, counts: { total: 1 } })
      // Another researcher's key sees nothing of it.
      const outsider = await keyFor(await makeUser('researcher'))
      expect(
        (await call(endpoints.getRun, outsider, { path: `/runs/${run.id}`, params: { runId: run.id } })).status,
      ).toBe(404)
    } finally {
      await workers.stop()
    }
  })

  it("documents the create-run body with every protocol's set-up", async () => {
    const doc = (await openApiDocument()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> }
    const body = JSON.stringify(doc.paths['/runs']?.post?.requestBody)
    for (const id of ['pxp', 'evince', 'scorekeeping']) expect(body).toContain(`"${id}"`)
    for (const path of ['/runs/{runId}', '/runs/{runId}/pause', '/sessions/{sessionId}/turns', '/sessions'])
      expect(doc.paths).toHaveProperty([path])
  })

  it('imports a dataset (multipart), runs on it and exports its messages, all with an API key', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: 'Prediction: CCO.CC(=O)O\nPathway: Ester hydrolysis.' }] },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ])
    const key = await keyFor(researcher)
    const upload = (form: FormData, headers: Record<string, string> = {}) =>
      handle(endpoints.importDataset)(
        new Request('http://127.0.0.1/api/v1/datasets', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, ...headers },
          body: form,
        }),
        { params: Promise.resolve({}) },
      )
    const form = new FormData()
    form.set('studyId', study.id)
    form.set('name', 'two esters')
    form.set('kind', 'drug')
    const csv = 'output,input,explanation\nCCO.CC(=O)O,CCOC(C)=O,Ester.\nCCCO.CC(=O)O,CCCOC(C)=O,Ester.\n'
    form.set('file', new File([csv], 'retro.csv', { type: 'text/csv' }))
    // JSON is not an upload: a clear 415, nothing stored.
    const json = await call(endpoints.importDataset, key, { path: '/datasets', body: { studyId: study.id } })
    expect(json.status).toBe(415)
    const started = await upload(form)
    expect(started.status).toBe(201)
    const { id: datasetId } = (await started.json()) as { id: string }
    const done = await call(endpoints.datasetImport, key, {
      path: `/datasets/${datasetId}/import`,
      params: { datasetId },
      query: 'waitMs=30000',
    })
    expect(done.status).toBe(200)
    expect(await done.json()).toMatchObject({ id: datasetId, status: 'ready', instances: 2 })
    // A bad file answers 400 with the line when the import ends.
    const bad = new FormData()
    for (const [k, v] of form.entries()) if (k !== 'file') bad.set(k, v)
    bad.set('file', new File(['output,input,explanation\nCCO,,no product\n'], 'bad.csv'))
    const badId = ((await (await upload(bad)).json()) as { id: string }).id
    const failed = await call(endpoints.datasetImport, key, {
      path: `/datasets/${badId}/import`,
      params: { datasetId: badId },
      query: 'waitMs=30000',
    })
    expect(failed.status).toBe(400)
    expect((await failed.json()).error).toMatch(/line 2/)

    const created = await call(endpoints.createRun, key, {
      path: '/runs',
      body: {
        studyId: study.id,
        protocol: 'pxp',
        name: 'over REST',
        datasetId,
        n: 4,
        start: true,
        generator: { connectionId: conn.id, model: 'gen' },
        checker: { connectionId: conn.id, model: 'judge' },
      },
    })
    expect(created.status).toBe(201)
    const run = (await created.json()) as { id: string }
    const workers = await startWorkers(2)
    try {
      let status = ''
      for (let i = 0; i < 200 && status !== 'done'; i++) {
        await new Promise((r) => setTimeout(r, 100))
        const got = await call(endpoints.getRun, key, { path: `/runs/${run.id}`, params: { runId: run.id } })
        status = ((await got.json()) as { run: { status: string } }).run.status
      }
      expect(status).toBe('done')
    } finally {
      await workers.stop()
    }
    const exported = await exportGET(
      new Request(`http://127.0.0.1/api/v1/runs/${run.id}/export?table=m&format=jsonl`, {
        headers: { authorization: `Bearer ${key}` },
      }),
      { params: Promise.resolve({ runId: run.id }) },
    )
    expect(exported.status).toBe(200)
    const lines = (await exported.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { j: number; tag: string })
    const stored = await db.protocolMessage.count({ where: { session: { runId: run.id } } })
    expect(lines).toHaveLength(stored)
    expect(lines.filter((l) => l.j === 1).map((l) => l.tag)).toEqual(['INIT', 'INIT'])
    const doc = (await openApiDocument()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> }
    expect(JSON.stringify(doc.paths['/datasets']?.post?.requestBody)).toContain('multipart/form-data')
    for (const path of ['/datasets/{datasetId}/import', '/runs/{runId}/export', '/runs/{runId}/files/{file}'])
      expect(doc.paths).toHaveProperty([path])
  }, 60_000)

  it("a protocol's own endpoint (the clembench import) is served under /api/v1 and documented", async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const key = await keyFor(researcher)
    const zip = zipSync(Object.fromEntries(Object.entries(demoGameFiles(3)).map(([k, v]) => [k, strToU8(v)])))
    const form = new FormData()
    form.set('studyId', study.id)
    form.set('name', 'games over REST')
    form.set('file', new File([Buffer.from(zip)], 'game.zip'))
    const post = (path: string, body: FormData | string, type?: string) =>
      restPOST(
        new Request(`http://127.0.0.1/api/v1${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, ...(type ? { 'content-type': type } : {}) },
          body,
        }),
      )
    // The same import job as every dataset kind: 201 with the dataset's id at once, the outcome polled.
    const res = await post('/scorekeeping/datasets', form)
    expect(res.status).toBe(201)
    const body = (await res.json()) as { id: string; status: string }
    expect(body.status).toBe('importing')
    const done = await call(endpoints.datasetImport, key, {
      path: `/datasets/${body.id}/import`,
      params: { datasetId: body.id },
      query: 'waitMs=30000',
    })
    expect(done.status).toBe(200)
    expect(await done.json()).toMatchObject({ id: body.id, status: 'ready', instances: 3 })
    expect(await db.instance.count({ where: { datasetId: body.id } })).toBe(3)
    // Not an upload: 415; an unknown path under /api/v1: the JSON 404.
    expect((await post('/scorekeeping/datasets', '{}', 'application/json')).status).toBe(415)
    expect((await post('/nowhere', '{}', 'application/json')).status).toBe(404)
    const doc = (await openApiDocument()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> }
    expect(JSON.stringify(doc.paths['/scorekeeping/datasets']?.post?.requestBody)).toContain('multipart/form-data')
  })
})
