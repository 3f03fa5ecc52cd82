import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { strToU8, zipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Endpoint, endpoints, pluginEndpoints } from '@/lib/server/api/endpoints'
import { openApiDocument } from '@/lib/server/api/openapi'
import { ROLE_SCOPES, type Role } from '@/lib/server/auth/roles'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { executeOrThrow } from '@/lib/server/operation'
import { demoGameFiles } from '@/protocols/scorekeeping/server/demo'
import { runDatasetImport } from '@/lib/server/services/dataset-import'
import { startDatasetImport } from '@/lib/server/services/datasets'
import { createApiKey } from '@/lib/server/services/api-keys'
import { createRun } from '@/lib/server/services/runs'
import { apiRouter } from '../support/api-router'
import { treeRun } from '../../protocols/rehac/tests/tree-run'
import { releasedRecordLine } from '@/protocols/mint/fixture'
import { branchableEpisode } from '../../protocols/mint/tests/parley-run'
import { makeAwaitingPxpSession, makeStudy, makeUser } from '../support/fixtures'
import { serveRoute } from '../support/http-route'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { hasBuild, type Proc, startWeb } from '../support/processes'

/**
 * The OpenAPI document stays true: every endpoint it lists is called over real HTTP (success and
 * its main errors), and every answer's status must be listed for that operation, with the headers
 * it promises, and the body must validate (ajv, strict, JSON Schema 2020-12) against the schema the
 * document gives for that status. Closed objects make an undeclared field fail, as a strict client
 * would. Runs twice when there is a build: against the route handlers served in this process, and
 * against `next start` (Next's own routing, 405s and headers).
 */
const fake = useFakeLlm()
afterAll(async () => {
  await stopBoss()
})

type Doc = {
  paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>
  components: { responses: Record<string, unknown> }
  security?: unknown[]
}
const doc = (await openApiDocument()) as unknown as Doc
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
const documented = Object.entries(doc.paths).flatMap(([p, item]) =>
  METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${p}`),
)

// ---------------------------------------------------------------------------------------------
// The document as a validator
// ---------------------------------------------------------------------------------------------

const DOC_ID = 'https://parley.test/openapi.json'
const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true })
addFormats(ajv)
// The document's own fields, as keywords without meaning, so its schemas resolve by JSON pointer.
ajv.addVocabulary(['openapi', 'info', 'servers', 'paths', 'components', 'security', 'tags'])
ajv.addSchema(doc as object, DOC_ID)
const validators = new Map<string, ReturnType<typeof ajv.compile>>()

const pointerEscape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1')
type ResponseSpec = {
  content?: Record<string, { schema?: unknown }>
  headers?: Record<string, { required?: boolean }>
}

/** The response object of an operation for a status, and the JSON pointer it lives at. */
function responseFor(op: string, status: number): { spec: ResponseSpec; pointer: string } | null {
  const [method, template] = op.split(' ') as [string, string]
  const operation = doc.paths[template]?.[method.toLowerCase()]
  const r = operation?.responses[String(status)] as (ResponseSpec & { $ref?: string }) | undefined
  if (!r) return null
  if (r.$ref) {
    const name = r.$ref.replace('#/components/responses/', '')
    return {
      spec: doc.components.responses[name] as ResponseSpec,
      pointer: `/components/responses/${pointerEscape(name)}`,
    }
  }
  return { spec: r, pointer: `/paths/${pointerEscape(template)}/${method.toLowerCase()}/responses/${status}` }
}

function validate(pointer: string, body: unknown): string | null {
  const ref = `${DOC_ID}#${encodeURI(pointer)}`
  let v = validators.get(ref)
  if (!v) {
    try {
      v = ajv.compile({ $ref: ref })
    } catch (err) {
      return `the document's schema does not compile: ${(err as Error).message}`
    }
    validators.set(ref, v)
  }
  return v(body) ? null : ajv.errorsText(v.errors, { separator: '; ' })
}

// ---------------------------------------------------------------------------------------------
// The calls
// ---------------------------------------------------------------------------------------------

type Fixtures = Awaited<ReturnType<typeof fixtures>>
interface Call {
  path: string
  method?: string
  query?: string
  /** An API key; null sends no Authorization header. */
  key?: string | null
  headers?: Record<string, string>
  json?: unknown
  body?: BodyInit
}
/** A session-import upload: one ended ReHAC episode (or, not `good`, one that goes on after its Finish). */
function sessionsUpload(good: boolean): FormData {
  const steps = '<solver> agent\nThought 1: Yes.\nAction 1: Finish[true]\nObservation 1: Episode finished, reward = 1\n'
  const trajectory = `Question: Is it?\n${steps}${good ? '' : steps.replaceAll('1', '2')}`
  const form = new FormData()
  form.set('name', 'Imported')
  form.set('kind', 'rehac-results-qa')
  form.set('file', new File([`${JSON.stringify({ trajectory, em: 1, f1: 1 })}\n`], 'results.jsonl'))
  return form
}

interface Case {
  /** `METHOD /template` as the document lists it. */
  op: string
  name: string
  status: number
  call(fx: Fixtures): Call | Promise<Call>
  /** Extra checks on the answer. */
  check?(res: Response, body: unknown, fx: Fixtures): void | Promise<void>
}

const pxpRun = (fx: { studyId: string; datasetId: string; connectionId: string }, name: string) => ({
  studyId: fx.studyId,
  protocol: 'pxp',
  name,
  datasetId: fx.datasetId,
  n: 4,
  generator: { connectionId: fx.connectionId, model: 'gen' },
  checker: { connectionId: fx.connectionId, model: 'judge' },
})

function gameZip() {
  return zipSync(Object.fromEntries(Object.entries(demoGameFiles(2)).map(([k, v]) => [k, strToU8(v)])))
}

/** Everything the cases act on, fresh for each server (the cases change it). */
async function fixtures(signIn: (email: string) => Promise<string>) {
  const researcher = await makeUser('researcher')
  const admin = await makeUser('admin')
  const expert = await makeUser('expert')
  const viewer = await makeUser('viewer')
  const annotator = await makeUser('annotator')
  const study = await makeStudy(researcher, [expert, viewer, annotator])
  const key = async (a: typeof researcher) => (await executeOrThrow(createApiKey, a, { name: 'contract' })).key
  const keys: Record<Role, string> = {
    researcher: await key(researcher),
    admin: await key(admin),
    expert: await key(expert),
    viewer: await key(viewer),
    annotator: await key(annotator),
  }
  const conn = await fakeConnection(study.id, fake())
  const ds = await db.dataset.create({
    data: {
      studyId: study.id,
      name: 'two esters',
      kind: 'drug',
      source: 'inline',
      rowsTotal: 2,
      instances: {
        create: [
          { index: 0, input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'ester' },
          { index: 1, input: { smiles: 'CCCOC(C)=O' }, prediction: 'CCCO.CC(=O)O', explanation: 'ester' },
        ],
      },
    },
  })
  const failed = await db.dataset.create({
    data: {
      studyId: study.id,
      name: 'bad',
      kind: 'drug',
      source: 'bad.csv',
      status: 'failed',
      error: 'line 2: no product',
    },
  })
  const base = { studyId: study.id, datasetId: ds.id, connectionId: conn.id }
  const run = async (name: string) => (await executeOrThrow(createRun, researcher, pxpRun(base, name))).id
  const draft = await run('to start')
  const toCancel = await run('to cancel')
  const running = await run('running')
  const paused = await run('paused')
  const stalled = await run('stalled')
  await db.run.updateMany({ where: { id: { in: [running, stalled] } }, data: { status: 'running' } })
  await db.run.update({ where: { id: paused }, data: { status: 'paused' } })
  const stalledSession = await db.protocolSession.findFirstOrThrow({ where: { runId: stalled } })
  await db.protocolSession.update({
    where: { id: stalledSession.id },
    data: { status: 'stalled', stallError: 'The model timed out (3 attempts).' },
  })
  // The import job, run here (this file works no queue): the run below needs the dataset ready.
  const { job } = await startDatasetImport(researcher, {
    studyId: study.id,
    kind: 'clembench',
    name: 'games',
    file: new File([Buffer.from(gameZip())], 'game.zip'),
  })
  await runDatasetImport(job)
  const games = { id: job.datasetId }
  const game = (
    await executeOrThrow(createRun, researcher, {
      studyId: study.id,
      protocol: 'scorekeeping',
      name: 'open seats',
      datasetId: games.id,
      answerer: { kind: 'claimable' },
    })
  ).id
  const claimable = await db.sessionSeat.findFirstOrThrow({
    where: { claimable: true, userId: null, session: { runId: game } },
  })
  const toAnswer = await makeAwaitingPxpSession(study.id, expert.userId)
  const other = await makeAwaitingPxpSession(study.id, expert.userId)
  // A log written before today's rules: PXP refuses a prediction that shows nothing.
  const broken = await makeAwaitingPxpSession(study.id, expert.userId, { prediction: ' ', explanation: 'Blank.' })
  // A ReHAC collection on the fake LLM (its own study and researcher): what a policy trains on.
  const tree = await treeRun(fake())
  return {
    rehac: { studyId: tree.studyId, runId: tree.runId, key: await key(tree.researcher) },
    keys,
    researcherCookie: await signIn(researcher.email),
    studyId: study.id,
    datasetId: ds.id,
    failedDatasetId: failed.id,
    connectionId: conn.id,
    runs: { draft, toCancel, running, paused, stalled, game },
    claim: { sessionId: claimable.sessionId, seat: claimable.seat },
    sessions: { toAnswer: toAnswer.id, other: other.id, broken: broken.id },
    annotatorId: annotator.userId,
    viewerId: viewer.userId,
    metricsToken: METRICS_TOKEN,
  }
}

const METRICS_TOKEN = `metrics-${randomUUID()}`
const upload = (fx: Fixtures) => {
  const form = new FormData()
  form.set('studyId', fx.studyId)
  form.set('name', 'uploaded')
  form.set('kind', 'drug')
  form.set('file', new File(['output,input,explanation\nCCO.CC(=O)O,CCOC(C)=O,Ester.\n'], 'retro.csv'))
  return form
}

/** Success and the main error of every endpoint, in order (later cases see what earlier ones did). */
const CASES: Case[] = [
  { op: 'GET /health', name: 'liveness', status: 200, call: () => ({ path: '/health', key: null }) },
  { op: 'GET /ready', name: 'readiness', status: 200, call: () => ({ path: '/ready', key: null }) },
  {
    op: 'GET /metrics',
    name: 'scrape',
    status: 200,
    call: (fx) => ({ path: '/metrics', key: null, headers: { authorization: `Bearer ${fx.metricsToken}` } }),
  },
  {
    op: 'GET /metrics',
    name: 'wrong token',
    status: 401,
    call: () => ({ path: '/metrics', key: null, headers: { authorization: 'Bearer not-the-token-at-all' } }),
  },
  { op: 'GET /me', name: 'who am I', status: 200, call: () => ({ path: '/me' }) },
  { op: 'GET /studies', name: 'list', status: 200, call: () => ({ path: '/studies' }) },
  {
    op: 'POST /studies',
    name: 'create',
    status: 201,
    call: () => ({ path: '/studies', method: 'POST', json: { name: 'contract study' } }),
  },
  {
    op: 'POST /studies',
    name: 'no name',
    status: 400,
    call: () => ({ path: '/studies', method: 'POST', json: { name: '' } }),
  },
  {
    op: 'POST /studies',
    name: 'a viewer may not create',
    status: 403,
    call: (fx) => ({ path: '/studies', method: 'POST', key: fx.keys.viewer, json: { name: 'x' } }),
  },
  {
    op: 'POST /studies',
    name: 'Idempotency-Key: first',
    status: 201,
    call: () => ({ path: '/studies', method: 'POST', headers: { 'idempotency-key': KEY }, json: { name: 'once' } }),
  },
  {
    op: 'POST /studies',
    name: 'Idempotency-Key: the same request again is replayed',
    status: 201,
    call: () => ({ path: '/studies', method: 'POST', headers: { 'idempotency-key': KEY }, json: { name: 'once' } }),
    check: (res) => expect(res.headers.get('idempotent-replayed')).toBe('true'),
  },
  {
    op: 'POST /studies',
    name: 'Idempotency-Key: another request with the same key',
    status: 422,
    call: () => ({ path: '/studies', method: 'POST', headers: { 'idempotency-key': KEY }, json: { name: 'twice' } }),
  },
  { op: 'GET /studies/{studyId}', name: 'one', status: 200, call: (fx) => ({ path: `/studies/${fx.studyId}` }) },
  {
    op: 'GET /work',
    name: 'mine: the queue of seated sessions',
    status: 200,
    call: (fx) => ({ path: '/work', key: fx.keys.expert }),
    check: (_res, body, fx) =>
      expect((body as { items: Array<{ id: string }> }).items.map((i) => i.id)).toContain(fx.sessions.toAnswer),
  },
  { op: 'GET /audit', name: 'admin reads', status: 200, call: (fx) => ({ path: '/audit', key: fx.keys.admin }) },
  {
    op: 'POST /datasets',
    name: 'upload',
    status: 201,
    call: (fx) => ({ path: '/datasets', method: 'POST', body: upload(fx) }),
  },
  {
    op: 'POST /datasets',
    name: 'not multipart',
    status: 415,
    call: (fx) => ({ path: '/datasets', method: 'POST', json: { studyId: fx.studyId } }),
  },
  {
    op: 'POST /datasets',
    name: 'no file',
    status: 400,
    call: (fx) => {
      const form = upload(fx)
      form.delete('file')
      return { path: '/datasets', method: 'POST', body: form }
    },
  },
  {
    op: 'POST /studies/{studyId}/runs/import',
    name: 'a file of played sessions becomes an imported run',
    status: 201,
    call: (fx) => ({ path: `/studies/${fx.studyId}/runs/import`, method: 'POST', body: sessionsUpload(true) }),
    check: (_res, body) => expect(body).toMatchObject({ sessions: 1, messages: 3 }),
  },
  {
    op: 'POST /studies/{studyId}/runs/import',
    name: 'a line the protocol refuses: 400 naming it',
    status: 400,
    call: (fx) => ({ path: `/studies/${fx.studyId}/runs/import`, method: 'POST', body: sessionsUpload(false) }),
    check: (_res, body) => expect((body as { error: string }).error).toContain('results.jsonl, line 1'),
  },
  {
    op: 'GET /studies/{studyId}/runs/import',
    name: 'the kinds of session file',
    status: 200,
    call: (fx) => ({ path: `/studies/${fx.studyId}/runs/import` }),
    check: (_res, body) => expect((body as Array<{ kind: string }>).length).toBeGreaterThan(0),
  },
  {
    op: 'GET /datasets/{datasetId}/import',
    name: 'ready',
    status: 200,
    call: (fx) => ({ path: `/datasets/${fx.datasetId}/import` }),
  },
  {
    op: 'GET /datasets/{datasetId}/import',
    name: 'failed',
    status: 400,
    call: (fx) => ({ path: `/datasets/${fx.failedDatasetId}/import` }),
  },
  {
    op: 'POST /scorekeeping/datasets',
    name: 'games',
    status: 201,
    call: (fx) => {
      const form = new FormData()
      form.set('studyId', fx.studyId)
      form.set('name', 'more games')
      form.set('file', new File([Buffer.from(gameZip())], 'game.zip'))
      return { path: '/scorekeeping/datasets', method: 'POST', body: form }
    },
  },
  {
    op: 'POST /rehac/policies/train',
    name: 'trained',
    status: 200,
    call: (fx) => ({
      path: '/rehac/policies/train',
      method: 'POST',
      key: fx.rehac.key,
      json: { studyId: fx.rehac.studyId, epochs: 2 },
    }),
  },
  {
    op: 'POST /rehac/policies/train',
    name: 'nothing to train on',
    status: 400,
    call: (fx) => ({ path: '/rehac/policies/train', method: 'POST', json: { studyId: fx.studyId } }),
  },
  {
    op: 'POST /labelling/session-imports',
    name: 'transcripts',
    status: 201,
    call: (fx) => ({
      path: '/labelling/session-imports',
      method: 'POST',
      key: fx.rehac.key,
      json: { studyId: fx.rehac.studyId, name: 'episodes to label', runIds: [fx.rehac.runId] },
    }),
  },
  {
    op: 'POST /labelling/session-imports',
    name: 'nothing chosen',
    status: 400,
    call: (fx) => ({ path: '/labelling/session-imports', method: 'POST', json: { studyId: fx.studyId, name: 'none' } }),
  },
  {
    op: 'POST /mint/results-imports',
    name: 'a released results tree',
    status: 201,
    call: (fx) => {
      const form = new FormData()
      form.set('studyId', fx.studyId)
      const tree = { 'gpt-x/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl': strToU8(releasedRecordLine()) }
      form.set('file', new File([Buffer.from(zipSync(tree))], 'tree.zip'))
      return { path: '/mint/results-imports', method: 'POST', body: form }
    },
  },
  {
    op: 'POST /mint/results-imports',
    name: 'not an archive',
    status: 400,
    call: (fx) => {
      const form = new FormData()
      form.set('studyId', fx.studyId)
      form.set('file', new File(['plain text'], 'tree.zip'))
      return { path: '/mint/results-imports', method: 'POST', body: form }
    },
  },
  {
    op: 'POST /mint/branches',
    name: 'a branch at turn 1',
    status: 201,
    call: async (fx) => ({
      path: '/mint/branches',
      method: 'POST',
      json: { sessionId: await branchableEpisode(fx.studyId), turn: 1 },
    }),
  },
  {
    op: 'POST /mint/branches',
    name: 'a turn without feedback',
    status: 400,
    call: async (fx) => ({
      path: '/mint/branches',
      method: 'POST',
      json: { sessionId: await branchableEpisode(fx.studyId), turn: 2 },
    }),
  },
  {
    op: 'GET /pxp/molecules',
    name: 'drawing',
    status: 200,
    call: () => ({ path: '/pxp/molecules', query: 'smiles=CCO&size=sm' }),
    check: (_res, body) => {
      if (!/^<svg[\s\S]*<\/svg>$/.test(String(body))) throw new Error('not an SVG drawing')
    },
  },
  {
    op: 'GET /pxp/molecules',
    name: 'undrawable',
    status: 422,
    call: () => ({ path: '/pxp/molecules', query: 'smiles=not-a-molecule((&size=sm' }),
  },
  { op: 'GET /runs', name: 'list', status: 200, call: () => ({ path: '/runs' }) },
  {
    op: 'POST /runs',
    name: 'create',
    status: 201,
    call: (fx) => ({ path: '/runs', method: 'POST', json: pxpRun(fx, 'over REST') }),
  },
  {
    op: 'POST /runs',
    name: 'Idempotency-Key: first',
    status: 201,
    call: (fx) => ({
      path: '/runs',
      method: 'POST',
      headers: { 'idempotency-key': RUN_KEY },
      json: pxpRun(fx, 'once'),
    }),
  },
  {
    op: 'POST /runs',
    name: 'Idempotency-Key: replayed',
    status: 201,
    call: (fx) => ({
      path: '/runs',
      method: 'POST',
      headers: { 'idempotency-key': RUN_KEY },
      json: pxpRun(fx, 'once'),
    }),
    check: (res) => expect(res.headers.get('idempotent-replayed')).toBe('true'),
  },
  {
    op: 'POST /runs',
    name: 'unknown dataset',
    status: 404,
    call: (fx) => ({ path: '/runs', method: 'POST', json: { ...pxpRun(fx, 'x'), datasetId: 'nope' } }),
  },
  {
    op: 'POST /runs',
    name: 'no name',
    status: 400,
    call: (fx) => ({ path: '/runs', method: 'POST', json: pxpRun(fx, '') }),
  },
  {
    op: 'GET /runs/{runId}',
    name: 'with a stalled session',
    status: 200,
    call: (fx) => ({ path: `/runs/${fx.runs.stalled}` }),
    check: (_res, body) => expect(body).toMatchObject({ lastStall: { stallError: expect.any(String) } }),
  },
  {
    op: 'GET /runs/{runId}',
    name: 'draft',
    status: 200,
    call: (fx) => ({ path: `/runs/${fx.runs.draft}` }),
  },
  ...(['start', 'pause', 'resume', 'cancel', 'retry-stalled'] as const).flatMap((action): Case[] => {
    const which = { start: 'draft', pause: 'running', resume: 'paused', cancel: 'toCancel', 'retry-stalled': 'stalled' }
    const path = (fx: Fixtures) => `/runs/${fx.runs[which[action] as keyof Fixtures['runs']]}/${action}`
    return [
      {
        op: `POST /runs/{runId}/${action}`,
        name: action,
        status: 200,
        call: (fx) => ({ path: path(fx), method: 'POST' }),
      },
      {
        op: `POST /runs/{runId}/${action}`,
        name: `${action} again`,
        status: 409,
        call: (fx) => ({ path: path(fx), method: 'POST' }),
      },
    ]
  }),
  {
    op: 'GET /runs/{runId}/results',
    name: 'game results',
    status: 200,
    call: (fx) => ({ path: `/runs/${fx.runs.game}/results` }),
  },
  {
    op: 'GET /runs/{runId}/dashboard',
    name: 'PXP dashboard',
    status: 200,
    call: (fx) => ({ path: `/runs/${fx.runs.running}/dashboard` }),
  },
  {
    op: 'GET /runs/{runId}/export',
    name: 'messages as JSON lines',
    status: 200,
    call: (fx) => ({ path: `/runs/${fx.runs.running}/export`, query: 'table=d&format=jsonl' }),
  },
  {
    op: 'GET /runs/{runId}/export',
    name: 'sessions as CSV',
    status: 200,
    call: (fx) => ({ path: `/runs/${fx.runs.running}/export`, query: 'table=d&format=csv' }),
  },
  {
    op: 'GET /runs/{runId}/export',
    name: 'unknown table',
    status: 400,
    call: (fx) => ({ path: `/runs/${fx.runs.running}/export`, query: 'table=nope' }),
  },
  {
    op: 'GET /runs/{runId}/export',
    name: 'viewers do not export',
    status: 403,
    call: (fx) => ({ path: `/runs/${fx.runs.running}/export`, key: fx.keys.viewer }),
  },
  {
    op: 'GET /runs/{runId}/files/{file}',
    name: 'clembench folder',
    status: 200,
    call: (fx) => ({ path: `/runs/${fx.runs.game}/files/clembench` }),
  },
  {
    op: 'GET /runs/{runId}/files/{file}',
    name: 'no such file',
    status: 400,
    call: (fx) => ({ path: `/runs/${fx.runs.game}/files/nope` }),
  },
  { op: 'GET /sessions', name: 'my queue', status: 200, call: (fx) => ({ path: '/sessions', key: fx.keys.expert }) },
  {
    op: 'GET /sessions/{sessionId}',
    name: 'as the expert',
    status: 200,
    call: (fx) => ({ path: `/sessions/${fx.sessions.other}`, key: fx.keys.expert }),
  },
  {
    op: 'GET /sessions/{sessionId}',
    name: 'as a researcher of the study',
    status: 200,
    call: (fx) => ({ path: `/sessions/${fx.sessions.other}` }),
  },
  {
    op: 'GET /sessions/{sessionId}',
    name: "a stored log today's rules refuse",
    status: 409,
    call: (fx) => ({ path: `/sessions/${fx.sessions.broken}`, key: fx.keys.expert }),
  },
  {
    op: 'POST /sessions/{sessionId}/turns',
    name: 'my turn',
    status: 201,
    call: (fx) => ({
      path: `/sessions/${fx.sessions.toAnswer}/turns`,
      method: 'POST',
      key: fx.keys.expert,
      json: { seq: 2, matchPrev: false, agreePrev: false, prediction: 'CCO.CC(=O)O', explanation: 'Hydrolysis.' },
    }),
  },
  {
    op: 'POST /sessions/{sessionId}/turns',
    name: 'not my turn yet',
    status: 409,
    call: (fx) => ({
      path: `/sessions/${fx.sessions.other}/turns`,
      method: 'POST',
      key: fx.keys.expert,
      json: { seq: 9, matchPrev: false, agreePrev: false, prediction: 'CCO', explanation: 'x' },
    }),
  },
  {
    op: 'POST /sessions/{sessionId}/claim',
    name: 'claim an open seat',
    status: 200,
    call: (fx) => ({
      path: `/sessions/${fx.claim.sessionId}/claim`,
      method: 'POST',
      key: fx.keys.expert,
      json: { seat: fx.claim.seat },
    }),
  },
  {
    op: 'POST /sessions/{sessionId}/claim',
    name: 'claim it again',
    status: 409,
    call: (fx) => ({
      path: `/sessions/${fx.claim.sessionId}/claim`,
      method: 'POST',
      key: fx.keys.expert,
      json: { seat: fx.claim.seat },
    }),
  },
  {
    op: 'POST /sessions/{sessionId}/lease',
    name: 'renew the claim',
    status: 200,
    call: (fx) => ({ path: `/sessions/${fx.claim.sessionId}/lease`, method: 'POST', key: fx.keys.expert }),
  },
  {
    op: 'DELETE /sessions/{sessionId}/lease',
    name: 'give the seat back',
    status: 200,
    call: (fx) => ({ path: `/sessions/${fx.claim.sessionId}/lease`, method: 'DELETE', key: fx.keys.expert }),
  },
  {
    op: 'DELETE /sessions/{sessionId}/lease',
    name: 'give it back again',
    status: 409,
    call: (fx) => ({ path: `/sessions/${fx.claim.sessionId}/lease`, method: 'DELETE', key: fx.keys.expert }),
  },
  {
    op: 'POST /sessions/{sessionId}/lease',
    name: 'renew a claim given back',
    status: 409,
    call: (fx) => ({ path: `/sessions/${fx.claim.sessionId}/lease`, method: 'POST', key: fx.keys.expert }),
  },
  {
    op: 'POST /studies/{studyId}/seats',
    name: 'name a member on a free seat',
    status: 200,
    call: (fx) => ({
      path: `/studies/${fx.studyId}/seats`,
      method: 'POST',
      json: { runId: fx.runs.game, seat: fx.claim.seat, userId: fx.annotatorId, count: 1 },
    }),
    check: (_res, body) => expect((body as { sessionIds: string[] }).sessionIds).toHaveLength(1),
  },
  {
    op: 'POST /studies/{studyId}/seats',
    name: 'a member who only reads',
    status: 400,
    call: (fx) => ({
      path: `/studies/${fx.studyId}/seats`,
      method: 'POST',
      json: { runId: fx.runs.game, seat: fx.claim.seat, userId: fx.viewerId, count: 1 },
    }),
  },
  {
    op: 'POST /studies/{studyId}/seats',
    name: 'no such run in the study',
    status: 404,
    call: (fx) => ({
      path: `/studies/${fx.studyId}/seats`,
      method: 'POST',
      json: { runId: 'no-such-run', seat: fx.claim.seat, userId: fx.annotatorId, count: 1 },
    }),
  },
  {
    op: 'POST /studies/{studyId}/seats',
    name: 'a run that is over (cancelled above)',
    status: 409,
    call: (fx) => ({
      path: `/studies/${fx.studyId}/seats`,
      method: 'POST',
      json: { runId: fx.runs.toCancel, seat: fx.claim.seat, userId: fx.annotatorId, count: 1 },
    }),
  },
  {
    op: 'POST /runs/{runId}/claim-next',
    name: 'claim the next free seat of a run',
    status: 200,
    call: (fx) => ({ path: `/runs/${fx.runs.game}/claim-next`, method: 'POST', key: fx.keys.expert }),
    check: (_res, body, fx) => expect(body).toMatchObject({ seat: fx.claim.seat }),
  },
  {
    op: 'POST /runs/{runId}/claim-next',
    name: 'no such run',
    status: 404,
    call: (fx) => ({ path: '/runs/no-such-run/claim-next', method: 'POST', key: fx.keys.expert }),
  },
  { op: 'GET /connections', name: 'list', status: 200, call: () => ({ path: '/connections' }) },
  {
    op: 'POST /connections',
    name: 'create, the key never sent back',
    status: 201,
    call: (fx) => ({
      path: '/connections',
      method: 'POST',
      // An admin's global connection may point at an internal address (a lab's vLLM).
      key: fx.keys.admin,
      json: {
        name: 'lab vLLM',
        provider: 'openai-compatible',
        baseUrl: 'http://127.0.0.1:9/v1',
        defaultModel: 'qwen',
        apiKey: 'sk-contract-secret-9876',
        maxConcurrency: 2,
        requestsPerMinute: 60,
      },
    }),
    check: (_res, body) => {
      expect(JSON.stringify(body)).not.toContain('sk-contract-secret')
      expect(body).toMatchObject({ apiKeyMasked: '…9876', maxConcurrency: 2, requestsPerMinute: 60 })
    },
  },
  {
    op: 'POST /connections',
    name: 'in a study that is not yours',
    status: 404,
    call: () => ({
      path: '/connections',
      method: 'POST',
      json: { name: 'x', provider: 'demo', defaultModel: 'm', studyId: 'no-such-study' },
    }),
  },
  {
    op: 'GET /connections/{connectionId}',
    name: 'one',
    status: 200,
    call: (fx) => ({ path: `/connections/${fx.connectionId}` }),
  },
  {
    op: 'PATCH /connections/{connectionId}',
    name: 'set its limits',
    status: 200,
    call: (fx) => ({
      path: `/connections/${fx.connectionId}`,
      method: 'PATCH',
      json: { maxConcurrency: 3, requestsPerMinute: null, tokensPerMinute: 50_000 },
    }),
    check: (_res, body) =>
      expect(body).toMatchObject({ maxConcurrency: 3, requestsPerMinute: null, tokensPerMinute: 50_000 }),
  },
]
const KEY = `contract-${randomUUID()}`
const RUN_KEY = `contract-run-${randomUUID()}`

/** The scope each operation needs (the streamed routes' and the plugins' included). */
const scopes = new Map<string, string>(
  [...(Object.values(endpoints) as Endpoint[]), ...(await pluginEndpoints())].map((e) => [
    `${e.method} ${e.path}`,
    e.op.scope,
  ]),
)
const bodyOps = new Set(
  [...(Object.values(endpoints) as Endpoint[]), ...(await pluginEndpoints())]
    .filter((e) => e.source === 'body')
    .map((e) => `${e.method} ${e.path}`),
)
const fill = (template: string) => template.replace(/\{\w+\}/g, 'no-such-id')

/**
 * The errors every authenticated endpoint has, generated from the document itself: each is the
 * operation's first successful call, changed in one way (no key, a bad key, an unknown id, a role
 * without the scope, the session cookie from another origin or without JSON, a broken or huge body).
 */
function generatedCases(): Case[] {
  const out: Case[] = []
  for (const op of documented) {
    const [method, template] = op.split(' ') as [string, string]
    const operation = doc.paths[template]?.[method.toLowerCase()]
    if (!(operation?.security ?? doc.security)?.length || template === '/metrics') continue
    const sample = CASES.find((c) => c.op === op && c.status < 300)
    if (!sample) continue // the coverage test names it
    const like = (name: string, status: number, change: (call: Call, fx: Fixtures) => Call): Case => ({
      op,
      name,
      status,
      call: async (fx) => change(await sample.call(fx), fx),
    })
    const unknown = fill(template)
    out.push(
      like('no credentials', 401, (c) => ({ ...c, key: null })),
      like('malformed API key', 401, (c) => ({
        ...c,
        key: null,
        headers: { ...c.headers, authorization: 'Bearer x' },
      })),
    )
    if (template.includes('{')) out.push(like('unknown id', 404, (c) => ({ ...c, path: unknown })))
    out.push(like('U+0000 in the query', 400, (c) => ({ ...c, query: 'x=%00' })))
    const scope = scopes.get(op)
    const lacking = (Object.keys(ROLE_SCOPES) as Role[]).find(
      (r) => scope && !(ROLE_SCOPES[r] as readonly string[]).includes(scope),
    )
    if (lacking) out.push(like(`${lacking} lacks ${scope}`, 403, (c, fx) => ({ ...c, key: fx.keys[lacking] })))
    if (method === 'POST') {
      const cookie = (fx: Fixtures, origin: string, type: string): Partial<Call> => ({
        key: null,
        json: undefined,
        headers: { cookie: fx.researcherCookie, origin, 'content-type': type },
        body: '{}',
      })
      out.push(
        like('session cookie from another origin', 403, (c, fx) => ({
          ...c,
          ...cookie(fx, 'http://evil.example', 'application/json'),
        })),
        like('session cookie without JSON', 415, (c, fx) => ({
          ...c,
          ...cookie(fx, TRUSTED_ORIGIN.value, 'text/plain'),
        })),
      )
    }
    if (bodyOps.has(op)) {
      out.push(
        like('not JSON', 400, (c) => ({
          ...c,
          json: undefined,
          headers: { ...c.headers, 'content-type': 'application/json' },
          body: '{"name":',
        })),
        like('over 256 KiB', 413, (c) => ({ ...c, json: { pad: 'x'.repeat(300 * 1024) } })),
      )
    }
  }
  return out
}

/** The origin the server trusts for cookie-authenticated changes (set per server). */
const TRUSTED_ORIGIN = { value: '' }

async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as { port: number }).port
  await new Promise((r) => s.close(r))
  return port
}

interface Server {
  base: string
  origin: string
  close(): Promise<void>
}

const servers: Array<{ name: string; skip: boolean; start(): Promise<Server> }> = [
  {
    name: 'route handlers over HTTP in this process',
    skip: false,
    async start() {
      process.env.PARLEY_METRICS_TOKEN = METRICS_TOKEN
      const served = await serveRoute(apiRouter())
      // No BETTER_AUTH_URL or PORT in tests: the app's own origin is http://127.0.0.1:3000.
      return {
        base: served.url,
        origin: 'http://127.0.0.1:3000',
        close: async () => {
          delete process.env.PARLEY_METRICS_TOKEN
          await served.close()
        },
      }
    },
  },
  {
    name: 'next start',
    skip: !hasBuild(),
    async start() {
      const port = await freePort()
      const web: Proc = await startWeb(port, { PARLEY_WORKERS: '0', PARLEY_METRICS_TOKEN: METRICS_TOKEN })
      const base = `http://127.0.0.1:${port}`
      return { base, origin: base, close: async () => void (await web.stop()) }
    },
  },
]

for (const server of servers) {
  describe.skipIf(server.skip)(`the API answers as its document says (${server.name})`, () => {
    let s: Server
    let fx: Fixtures
    beforeAll(async () => {
      s = await server.start()
      TRUSTED_ORIGIN.value = s.origin
      fx = await fixtures(async (email) => {
        const r = await fetch(`${s.base}/api/auth/sign-in/email`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: s.origin },
          body: JSON.stringify({ email, password: 'correct horse battery' }),
        })
        if (!r.ok) throw new Error(`sign-in failed: ${r.status} ${await r.text()}`)
        return r.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; ')
      })
    }, 120_000)
    afterAll(async () => {
      await s?.close()
    })

    it('every documented endpoint has a successful case, and every case names a documented operation', () => {
      const cases = [...CASES, ...generatedCases()]
      for (const c of cases) expect(documented, c.name).toContain(c.op)
      const succeeded = new Set(CASES.filter((c) => c.status < 300).map((c) => c.op))
      expect(documented.filter((op) => !succeeded.has(op))).toEqual([])
    })

    it('every answer is documented for its operation and matches its schema', async () => {
      const problems: string[] = []
      for (const c of [...CASES, ...generatedCases()]) {
        const call = await c.call(fx)
        const method = call.method ?? c.op.split(' ')[0] ?? 'GET'
        const headers: Record<string, string> = {
          ...(call.key !== null ? { authorization: `Bearer ${call.key ?? fx.keys.researcher}` } : {}),
          ...(call.json !== undefined ? { 'content-type': 'application/json' } : {}),
          ...call.headers,
        }
        const res = await fetch(`${s.base}/api/v1${call.path}${call.query ? `?${call.query}` : ''}`, {
          method,
          headers,
          body: call.json !== undefined ? JSON.stringify(call.json) : call.body,
        })
        const text = await res.text()
        const where = `${c.op} (${c.name}) → ${res.status}`
        if (res.status !== c.status) {
          problems.push(`${where}: expected ${c.status}: ${text.slice(0, 300)}`)
          continue
        }
        const found = responseFor(c.op, res.status)
        if (!found) {
          problems.push(`${where}: status not documented`)
          continue
        }
        for (const [name, h] of Object.entries(found.spec.headers ?? {}))
          if (h.required && !res.headers.get(name)) problems.push(`${where}: no ${name} header`)
        const type = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? ''
        if (!found.spec.content) {
          if (text) problems.push(`${where}: a body where the document declares none`)
          continue
        }
        if (!found.spec.content[type]) {
          problems.push(`${where}: content type "${type}" not documented`)
          continue
        }
        let body: unknown = text
        if (type === 'application/json') {
          body = JSON.parse(text)
          const error = validate(`${found.pointer}/content/${pointerEscape(type)}/schema`, body)
          if (error) problems.push(`${where}: ${error}`)
        }
        try {
          await c.check?.(res, body, fx)
        } catch (err) {
          problems.push(`${where}: ${(err as Error).message}`)
        }
      }
      expect(problems).toEqual([])
    }, 180_000)

    it('a method a path does not list answers 405 with Allow and an error body', async () => {
      const problems: string[] = []
      for (const [template, item] of Object.entries(doc.paths)) {
        const listed = METHODS.filter((m) => item[m]).map((m) => m.toUpperCase())
        const other = ['DELETE', 'PUT', 'PATCH', 'POST'].find((m) => !listed.includes(m)) as string
        const res = await fetch(`${s.base}/api/v1${fill(template)}`, {
          method: other,
          headers: { authorization: `Bearer ${fx.keys.researcher}` },
        })
        const where = `${other} ${template} → ${res.status}`
        if (res.status !== 405) {
          problems.push(`${where}: expected 405`)
          continue
        }
        const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim())
        for (const m of listed) if (!allow.includes(m)) problems.push(`${where}: Allow "${allow}" lacks ${m}`)
        if (allow.includes(other)) problems.push(`${where}: Allow lists ${other}`)
        const text = await res.text()
        const error = text ? validate('/components/schemas/Error', JSON.parse(text)) : 'no body'
        if (error) problems.push(`${where}: ${error}`)
      }
      expect(problems).toEqual([])
    })
  })
}
