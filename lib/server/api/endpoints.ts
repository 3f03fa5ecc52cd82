import { z } from 'zod'
import { ROLE_SCOPES } from '@/lib/server/auth/roles'
import { defineOperation, type Operation } from '@/lib/server/operation'
import { SeatFill } from '@/lib/server/engine/seats'
import type { PluginOps, PluginSetup, ProtocolPlugin } from '@/lib/server/engine/plugin'
import { allPlugins } from '@/lib/server/engine/plugins'
import {
  AuditPage,
  Connection,
  ConnectionList,
  DatasetImportStarted,
  DatasetImportStatus,
  Me,
  pageOfSchema,
  Queue,
  RunCancelled,
  RunCreated,
  RunDashboard,
  RunDetail,
  RunPaused,
  RunResults,
  RunStarted,
  RunSummary,
  LeaseRenewed,
  SeatClaimed,
  SeatsAssigned,
  SeatReleased,
  SessionDetail,
  StalledRetried,
  StudyDetail,
  StudySummary,
  TurnResult,
} from '@/lib/server/api/schemas'
import {
  cancelRun,
  createRun,
  getRun,
  listRuns,
  pauseRun,
  resumeRun,
  retryStalled,
  runDashboard,
  startRun,
  viewRun,
} from '@/lib/server/services/runs'
import { createConnection, getConnection, listConnections, updateConnection } from '@/lib/server/services/connections'
import { awaitDatasetImport, importDataset } from '@/lib/server/services/datasets'
import { ImportRunResult, importRun, listRunImportKinds, RunImportKinds } from '@/lib/server/services/session-import'
import {
  assignSeats,
  claimNext,
  claimSeat,
  getSession,
  myQueue,
  releaseSeat,
  renewLease,
  submitTurn,
} from '@/lib/server/services/sessions'
import { listAudit } from '@/lib/server/services/audit-log'
import { createStudy, getStudy, listStudies } from '@/lib/server/services/studies'

/** Where an operation's input comes from in an HTTP request. Path parameters are always merged in. */
export type InputSource = 'query' | 'body' | 'multipart' | 'none'

export interface Endpoint {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** OpenAPI path template under /api/v1, e.g. /studies/{studyId} (a {runId} in the path feeds `runId`). */
  path: string
  summary: string
  tag: string
  op: Operation<any, any>
  source: InputSource
  output: z.ZodType
  status?: 200 | 201
  /** The request body as the OpenAPI document shows it, when the operation's input is more open. */
  docBody?: (plugins: DocPlugins) => z.ZodType
  /**
   * The statuses it answers besides those every endpoint can (400, 401, 403, 413, 415, 500, 503:
   * see openapi.ts), each with when. The contract test holds the document to what is sent.
   */
  errors?: { 404?: string; 409?: string; 422?: string }
  /** A create: accepts an Idempotency-Key (lib/server/api/idempotency.ts). */
  idempotent?: boolean
  /**
   * An answer that is not JSON (an image …): the operation's result, checked by `output`, becomes the
   * response (its body, content type and caching). The document lists `contentType` as the answer.
   */
  answer?: { contentType: string; respond(data: any): Response }
  /** The document's operationId when another endpoint serves the same operation (default: its name). */
  operationId?: string
}

const me = defineOperation({
  name: 'me.get',
  scope: 'profile:update',
  input: z.object({}),
  async run(actor) {
    return {
      id: actor.userId,
      email: actor.email,
      name: actor.name,
      role: actor.role,
      via: actor.via,
      scopes: [...ROLE_SCOPES[actor.role]],
    }
  },
})

/** Every authenticated REST endpoint. Route files under app/api/v1 bind these; openapi.json lists them. */
export const endpoints = {
  me: {
    method: 'GET',
    path: '/me',
    summary: 'The account the request acts as',
    tag: 'Account',
    op: me,
    source: 'none',
    output: Me,
  },
  listStudies: {
    method: 'GET',
    path: '/studies',
    summary: 'List the studies you can see (paginated)',
    tag: 'Studies',
    op: listStudies,
    source: 'query',
    output: pageOfSchema(StudySummary, 'StudyPage'),
  },
  createStudy: {
    method: 'POST',
    path: '/studies',
    summary: 'Create a study (you become its first member)',
    tag: 'Studies',
    op: createStudy,
    source: 'body',
    output: StudySummary,
    status: 201,
    idempotent: true,
  },
  getStudy: {
    method: 'GET',
    path: '/studies/{studyId}',
    summary: 'One study with its members',
    tag: 'Studies',
    op: getStudy,
    source: 'none',
    output: StudyDetail,
    errors: { 404: 'No such study, or not visible to you' },
  },
  workQueue: {
    method: 'GET',
    path: '/work',
    summary:
      'Your work queue (the same as GET /sessions): the sessions whose seats you fill, waiting for you first, then seats you may claim',
    tag: 'Work',
    op: myQueue,
    operationId: 'work.queue',
    source: 'query',
    output: Queue,
  },
  assignSeats: {
    method: 'POST',
    path: '/studies/{studyId}/seats',
    summary:
      "Name a member of the study on up to `count` open sessions of a run (`runId`) in a claimable person's `seat` no one holds; they appear in that person's work queue. 400: not a member who takes part, or not a claimable seat people fill",
    tag: 'Work',
    op: assignSeats,
    source: 'body',
    output: SeatsAssigned,
    errors: {
      404: 'No such study or run in it, or not one you may change',
      409: 'The run is over, or no open session has the seat free for that person',
    },
  },
  listAudit: {
    method: 'GET',
    path: '/audit',
    summary: 'Browse the audit log (admins)',
    tag: 'Admin',
    op: listAudit,
    source: 'query',
    output: AuditPage,
  },
  importDataset: {
    method: 'POST',
    path: '/datasets',
    summary:
      "Import a dataset of any kind the protocols declare (multipart/form-data: `studyId`, `name`, `kind`, `file`, and the kind's own files and fields). Runs as a job: poll /datasets/{datasetId}/import",
    tag: 'Datasets',
    op: importDataset,
    source: 'multipart',
    output: DatasetImportStarted,
    status: 201,
    docBody: datasetImportBody,
    errors: { 404: 'No such study, or not visible to you' },
    idempotent: true,
  },
  datasetImport: {
    method: 'GET',
    path: '/datasets/{datasetId}/import',
    summary:
      "An import's progress; `waitMs` (up to 60,000) waits for it to end. Ready: its counts; failed: 400 with the reason",
    tag: 'Datasets',
    op: awaitDatasetImport,
    source: 'query',
    output: DatasetImportStatus,
    errors: { 404: 'No such dataset, or not visible to you' },
  },
  listRuns: {
    method: 'GET',
    path: '/runs',
    summary: 'Runs of every protocol in the studies you can see (paginated; filter by study, protocol, status)',
    tag: 'Runs',
    op: listRuns,
    source: 'query',
    output: pageOfSchema(RunSummary, 'RunPage'),
    errors: { 404: 'The `studyId` filter names a study not visible to you' },
  },
  createRun: {
    method: 'POST',
    path: '/runs',
    summary:
      "Create a run of any protocol in one shape: `seats` (who fills each of the protocol's seats), its `config` and `options`, the dataset and repetitions; `start: true` starts it",
    tag: 'Runs',
    op: createRun,
    source: 'body',
    output: RunCreated,
    status: 201,
    docBody: runCreateBody,
    errors: { 404: 'The study, dataset or a connection is not there, or not visible to you' },
    idempotent: true,
  },
  importRun: {
    method: 'POST',
    path: '/studies/{studyId}/runs/import',
    summary:
      "Import a file of finished sessions as a run of the study (multipart/form-data: `name`, `kind`, `file`, and the kind's own fields): status done, marked imported; every message is checked by the protocol's rules, and a refused line fails the whole import (400 naming the line), storing nothing",
    tag: 'Runs',
    op: importRun,
    source: 'multipart',
    output: ImportRunResult,
    status: 201,
    docBody: runImportBody,
    errors: { 404: 'No such study, or not visible to you' },
    idempotent: true,
  },
  runImportKinds: {
    method: 'GET',
    path: '/studies/{studyId}/runs/import',
    summary: 'The kinds of session file the protocols import (for the import form)',
    tag: 'Runs',
    op: listRunImportKinds,
    source: 'none',
    output: RunImportKinds,
    errors: { 404: 'No such study, or not visible to you' },
  },
  getRun: {
    method: 'GET',
    path: '/runs/{runId}',
    summary: 'A run: status, progress by session status, tokens and cost, what blocks it, its sessions (paginated)',
    tag: 'Runs',
    op: getRun,
    source: 'query',
    output: RunDetail,
    errors: { 404: 'No such run, or not visible to you' },
  },
  startRun: {
    method: 'POST',
    path: '/runs/{runId}/start',
    summary: 'Start a draft run',
    tag: 'Runs',
    op: startRun,
    source: 'none',
    output: RunStarted,
    errors: {
      404: 'No such run, or not visible to you',
      409: 'The run is not a draft (it is running, paused, over, or still preparing)',
    },
  },
  pauseRun: {
    method: 'POST',
    path: '/runs/{runId}/pause',
    summary: 'Pause a running run (holds within one message)',
    tag: 'Runs',
    op: pauseRun,
    source: 'none',
    output: RunPaused,
    errors: { 404: 'No such run, or not visible to you', 409: 'The run is not running' },
  },
  resumeRun: {
    method: 'POST',
    path: '/runs/{runId}/resume',
    summary: 'Resume a paused run',
    tag: 'Runs',
    op: resumeRun,
    source: 'none',
    output: RunStarted,
    errors: { 404: 'No such run, or not visible to you', 409: 'The run is not paused' },
  },
  cancelRun: {
    method: 'POST',
    path: '/runs/{runId}/cancel',
    summary: 'Cancel a run (its queued steps are dropped)',
    tag: 'Runs',
    op: cancelRun,
    source: 'none',
    output: RunCancelled,
    errors: { 404: 'No such run, or not visible to you', 409: 'The run is over already' },
  },
  retryStalled: {
    method: 'POST',
    path: '/runs/{runId}/retry-stalled',
    summary: 'Retry every stalled session of a run',
    tag: 'Runs',
    op: retryStalled,
    source: 'none',
    output: StalledRetried,
    errors: { 404: 'No such run, or not visible to you', 409: 'No session of the run is stalled' },
  },
  runResults: {
    method: 'GET',
    path: '/runs/{runId}/results',
    summary: "The protocol's results of a run (accuracy, episode scores …)",
    tag: 'Runs',
    op: viewRun,
    source: 'query',
    output: RunResults,
    errors: { 404: 'No such run, or not visible to you' },
  },
  runDashboard: {
    method: 'GET',
    path: '/runs/{runId}/dashboard',
    summary: "The protocol's dashboard of a run (intelligibility, clemscore …)",
    tag: 'Runs',
    op: runDashboard,
    source: 'query',
    output: RunDashboard,
    errors: { 404: 'No such run (or its protocol has no dashboard), or not visible to you' },
  },
  myQueue: {
    method: 'GET',
    path: '/sessions',
    summary: 'Your work queue across protocols: sessions waiting for you first, then seats you may claim',
    tag: 'Sessions',
    op: myQueue,
    source: 'query',
    output: Queue,
  },
  getSession: {
    method: 'GET',
    path: '/sessions/{sessionId}',
    summary: 'One session you take part in (or of your studies): its messages, whose turn it is, the protocol view',
    tag: 'Sessions',
    op: getSession,
    source: 'none',
    output: SessionDetail,
    errors: {
      404: 'No such session, or not one you may open',
      409: "Its stored log breaks the protocol's rules as they are now (the inspector shows it)",
    },
  },
  submitTurn: {
    method: 'POST',
    path: '/sessions/{sessionId}/turns',
    summary: "Your turn: `seq` (the message number asked) and the protocol's turn input",
    tag: 'Sessions',
    op: submitTurn,
    source: 'body',
    output: TurnResult,
    status: 201,
    errors: {
      404: 'No such session, or you fill no seat in it',
      409: 'Not your turn (yet), answered already, or the session is over',
    },
  },
  claimSeat: {
    method: 'POST',
    path: '/sessions/{sessionId}/claim',
    summary: 'Take a claimable seat (`seat`)',
    tag: 'Sessions',
    op: claimSeat,
    source: 'body',
    output: SeatClaimed,
    errors: {
      404: 'No such session, or one you cannot see (a claim answers as reading it does)',
      409: 'You fill a seat of it already, the seat was taken, the run gives you one session per item, or the session is over',
    },
  },
  claimNext: {
    method: 'POST',
    path: '/runs/{runId}/claim-next',
    summary:
      "Claim the next seat of a run you may take, in the work queue's order: concurrent callers each get a different seat (no race to lose)",
    tag: 'Sessions',
    op: claimNext,
    source: 'none',
    output: SeatClaimed,
    errors: {
      404: 'No such run, or one you cannot see; or nothing is left for you to claim in it',
      409: 'Every seat picked for you was taken meanwhile (rare; ask again)',
    },
  },
  renewLease: {
    method: 'POST',
    path: '/sessions/{sessionId}/lease',
    summary:
      'Renew your claim of a claimable seat (a lease of PARLEY_SEAT_LEASE_SECONDS; call it well within that while you work)',
    tag: 'Sessions',
    op: renewLease,
    source: 'none',
    output: LeaseRenewed,
    errors: {
      404: 'No such session, or one you cannot see',
      409: 'Your claim lapsed (claim the seat again), someone else took it, or the session is over',
    },
  },
  releaseSeat: {
    method: 'DELETE',
    path: '/sessions/{sessionId}/lease',
    summary: 'Give your claimed seat back: it is free for the next person at once (the turns you sent stay)',
    tag: 'Sessions',
    op: releaseSeat,
    source: 'none',
    output: SeatReleased,
    errors: {
      404: 'No such session, or one you cannot see',
      409: 'The seat is named for you, you no longer hold it, or the session is over',
    },
  },
  listConnections: {
    method: 'GET',
    path: '/connections',
    summary:
      'LLM connections you may use: the global ones and those of your studies (`studyId`: one study and the global ones)',
    tag: 'Connections',
    op: listConnections,
    source: 'query',
    output: ConnectionList,
  },
  createConnection: {
    method: 'POST',
    path: '/connections',
    summary:
      'Add an LLM connection: global (admins) or of a study (`studyId`), with its limits. The API key is stored encrypted and never sent back (only its last four characters)',
    tag: 'Connections',
    op: createConnection,
    source: 'body',
    output: Connection,
    status: 201,
    idempotent: true,
    errors: { 404: 'No such study among yours' },
  },
  getConnection: {
    method: 'GET',
    path: '/connections/{connectionId}',
    summary: 'One LLM connection (its key masked)',
    tag: 'Connections',
    op: getConnection,
    source: 'none',
    output: Connection,
    errors: { 404: 'No such connection you may see' },
  },
  updateConnection: {
    method: 'PATCH',
    path: '/connections/{connectionId}',
    summary:
      'Change a connection, e.g. its limits (`maxConcurrency`, `requestsPerMinute`, `tokensPerMinute`: null removes one, `timeoutMs`); a new address or headers need the API key again',
    tag: 'Connections',
    op: updateConnection,
    source: 'body',
    output: Connection,
    errors: { 404: 'No such connection you may see' },
  },
} satisfies Record<string, Endpoint>

/**
 * The one create-run body of every protocol: `seats` are `SeatFill`s by the protocol's seat names,
 * `config` is checked by the protocol's config schema and `options` by its plugin's; each protocol's
 * seats, config and options are listed in the descriptions and as the alternatives of `config` and
 * `options` (titled by protocol).
 */
function runCreateBody(all: DocPlugins): z.ZodType {
  const ids = all.map((p) => p.protocol.id) as [string, ...string[]]
  const seatsOf = all
    .map(
      (p) =>
        `${p.protocol.id}: ${p.protocol.seats
          .map(
            (d) =>
              `${d.name} (${d.label}: ${d.kinds.join(' | ')}${d.programs?.length ? `; programs ${d.programs.join(', ')}` : ''}${d.helpers?.length ? `; helpers ${d.helpers.map((h) => h.name).join(', ')}` : ''})`,
          )
          .join(', ')}`,
    )
    .join('; ')
  const per = (what: 'config' | 'options') => {
    const schemas = all.map((p) =>
      (
        (what === 'config'
          ? (p.setupOf.config ?? p.protocol.config)
          : (p.setupOf.options ?? z.strictObject({}))) as z.ZodType
      ).meta({
        title: `${p.protocol.id} ${what}`,
      }),
    )
    return schemas.length > 1 ? z.union(schemas as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]]) : schemas[0]
  }
  const count = (max: number) => z.number().int().min(1).max(max).optional()
  return z.object({
    studyId: z.string(),
    protocol: z.enum(ids).describe('The protocol of the run'),
    name: z.string().min(1).max(120),
    datasetId: z
      .string()
      .optional()
      .describe('The dataset the sessions run on (an EVINCE run may type one case in its options instead)'),
    seats: z
      .record(z.string(), z.union([SeatFill, z.array(SeatFill).min(1).max(100)]))
      .describe(
        `Who fills each seat, by seat name: a fill, or a list of fills the sessions take round robin (session i gets fill i mod length). A seat only one program fills may be left out. Seats by protocol: ${seatsOf}`,
      ),
    config: (per('config') as z.ZodType).optional().describe("The protocol's config (its defaults when absent)"),
    options: (per('options') as z.ZodType).optional().describe("The protocol's own options (none for most)"),
    repetitions: count(50).describe('Sessions per instance (default 1)'),
    sample: count(100_000).describe('Only the first `sample` instances of the dataset by index'),
    instanceIds: z.array(z.string()).min(1).optional().describe('Only these instances of the dataset, in this order'),
    shuffle: z.boolean().optional().describe("Shuffle each repetition's order, seeded by the repetition number"),
    start: z.boolean().optional().describe('Start the run at once (default: a draft)'),
    maxInFlight: count(10_000).describe(
      "At most this many of the run's sessions on the workers at once (default: no limit)",
    ),
    distinctClaimants: z
      .boolean()
      .optional()
      .describe('One person never holds two sessions of the same instance (claimable seats; default false)'),
    fillFirst: count(10_000).describe(
      'Work-queue order hint: claimable seats of instances with fewer than this many finished sessions first',
    ),
  })
}

/** The dataset upload as the OpenAPI document shows it: the kinds the plugins declare, with their files and fields. */
function datasetImportBody(all: DocPlugins) {
  const kinds = all.flatMap((p) => Object.entries(p.opsOf?.datasets ?? {}))
  const extra: Record<string, z.ZodType> = {}
  // An upload field several kinds share (a corpus …) names each of them.
  const files = new Map<string, string[]>()
  for (const [kind, def] of kinds)
    for (const a of def.attachments ?? []) files.set(a.field, [...(files.get(a.field) ?? []), `${kind}: ${a.label}`])
  for (const [field, uses] of files)
    extra[field] = z
      .array(z.string().meta({ format: 'binary' }))
      .optional()
      .meta({ description: uses.join('; ') })
  for (const [kind, def] of kinds) {
    for (const f of def.fields ?? [])
      extra[f.name] ??= z
        .string()
        .optional()
        .meta({ description: `${kind}: ${f.label}` })
  }
  return z.object({
    studyId: z.string(),
    name: z.string(),
    kind: z.enum(kinds.map(([k]) => k) as [string, ...string[]]).meta({
      description: kinds.map(([k, d]) => `${k}: ${d.label}`).join('; '),
    }),
    file: z.string().meta({ format: 'binary', description: 'The data file.' }),
    ...extra,
  })
}

/** The session import as the OpenAPI document shows it: the kinds the plugins declare, with their fields. */
function runImportBody(all: DocPlugins) {
  const kinds = all.flatMap((p) => Object.entries(p.opsOf?.sessionImports ?? {}))
  const extra: Record<string, z.ZodType> = {}
  for (const [kind, def] of kinds)
    for (const f of def.fields ?? [])
      extra[f.name] ??= z
        .string()
        .optional()
        .meta({ description: `${kind}: ${f.label}` })
  return z.object({
    name: z.string(),
    kind: (kinds.length ? z.enum(kinds.map(([k]) => k) as [string, ...string[]]) : z.string()).meta({
      description: kinds.map(([k, d]) => `${k}: ${d.label}`).join('; '),
    }),
    file: z.string().meta({ format: 'binary', description: 'The file of sessions.' }),
    ...extra,
  })
}

/**
 * The plugins with the capabilities the REST surface reads (set-up for the run-create body; operations,
 * REST endpoints and dataset kinds), loaded on first use: a worker never loads them.
 */
export type DocPlugins = Array<ProtocolPlugin & { setupOf: PluginSetup; opsOf: PluginOps | undefined }>
export async function docPlugins(): Promise<DocPlugins> {
  return Promise.all(
    (await allPlugins()).map(async (p) => ({ ...p, setupOf: await p.setup(), opsOf: await p.ops?.() })),
  )
}

/** The endpoints protocol plugins add for their own operations (served by the catch-all route). */
export async function pluginEndpoints(): Promise<Endpoint[]> {
  // Only the ops capability: serving a protocol's endpoint loads neither its set-up nor its pages.
  const all = await allPlugins()
  const ops = await Promise.all(all.map((p) => p.ops?.()))
  return all.flatMap((p, i) => (ops[i]?.rest ?? []).map((e) => ({ ...e, tag: p.protocol.label }) satisfies Endpoint))
}

/** Path parameters of a plugin endpoint's path template for a request path, or null when it does not match. */
function matchPath(template: string, path: string): Record<string, string> | null {
  const names: string[] = []
  const pattern = template.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '{' || c === '}' ? c : `\\${c}`))
  const re = new RegExp(
    `^${pattern.replace(/\{(\w+)\}/g, (_, n: string) => {
      names.push(n)
      return '([^/]+)'
    })}$`,
  )
  const m = re.exec(path)
  return m ? Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1] ?? '')])) : null
}

/**
 * The plugin endpoint for a request path under /api/v1 and its path parameters, if any matches;
 * `allow` lists the methods the path answers (empty: no plugin endpoint has this path).
 */
export async function matchPluginEndpoint(method: string, path: string) {
  const allow: string[] = []
  for (const ep of await pluginEndpoints()) {
    const params = matchPath(ep.path, path)
    if (!params) continue
    if (ep.method === method) return { ep, params, allow: [ep.method] }
    allow.push(ep.method)
  }
  return { ep: null, params: {}, allow }
}
