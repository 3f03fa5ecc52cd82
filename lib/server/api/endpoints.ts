import { z } from 'zod'
import { ROLE_SCOPES } from '@/lib/server/auth/roles'
import { defineOperation, type Operation } from '@/lib/server/operation'
import { plugins } from '@/lib/server/protocols/registry'
import {
  AuditEntry,
  Me,
  ProtocolData,
  Queue,
  RunCreated,
  RunDetail,
  RunMove,
  RunSummary,
  SessionDetail,
  StudyDetail,
  StudySummary,
  TurnResult,
  Work,
  pageOfSchema,
  DatasetImportStarted,
  DatasetImportStatus,
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
import { awaitDatasetImport, importDataset } from '@/lib/server/services/datasets'
import { claimSeat, getSession, myQueue, submitTurn } from '@/lib/server/services/sessions'
import { DATASET_KINDS } from '@/lib/tasks/datasets'
import { listAudit } from '@/lib/server/services/audit-log'
import { createStudy, getStudy, listStudies } from '@/lib/server/services/studies'
import { completeWork, getWork, listMyWork } from '@/lib/server/services/work'

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
  docBody?: () => z.ZodType
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
  },
  getStudy: {
    method: 'GET',
    path: '/studies/{studyId}',
    summary: 'One study with its members',
    tag: 'Studies',
    op: getStudy,
    source: 'none',
    output: StudyDetail,
  },
  listMyWork: {
    method: 'GET',
    path: '/work',
    summary: 'Work assigned to you (paginated)',
    tag: 'Work',
    op: listMyWork,
    source: 'query',
    output: pageOfSchema(Work, 'WorkPage'),
  },
  getWork: {
    method: 'GET',
    path: '/work/{workId}',
    summary: 'One work item you may open',
    tag: 'Work',
    op: getWork,
    source: 'none',
    output: Work,
  },
  completeWork: {
    method: 'POST',
    path: '/work/{workId}/complete',
    summary: 'Mark your work item done',
    tag: 'Work',
    op: completeWork,
    source: 'none',
    output: Work,
  },
  listAudit: {
    method: 'GET',
    path: '/audit',
    summary: 'Browse the audit log (admins)',
    tag: 'Admin',
    op: listAudit,
    source: 'query',
    output: pageOfSchema(AuditEntry, 'AuditPage').extend({
      resourceTypes: z.array(z.string()).meta({ description: 'Every resource type in the log (for a filter)' }),
    }),
  },
  importDataset: {
    method: 'POST',
    path: '/datasets',
    summary:
      'Import a dataset (multipart/form-data: `studyId`, `name`, `kind`, `file`, RAD `images` zips or files, generic `mapping` JSON). Runs as a job: poll /datasets/{datasetId}/import',
    tag: 'Datasets',
    op: importDataset,
    source: 'multipart',
    output: DatasetImportStarted,
    status: 201,
    docBody: () =>
      z.object({
        studyId: z.string(),
        name: z.string(),
        kind: z.enum(DATASET_KINDS),
        file: z.string().meta({ format: 'binary', description: 'The data file (CSV or JSONL).' }),
        images: z
          .array(z.string().meta({ format: 'binary' }))
          .optional()
          .meta({ description: 'RAD: the X-rays, as image files or zips of them.' }),
        mapping: z.string().optional().meta({ description: 'Generic datasets: the column mapping as JSON.' }),
      }),
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
  },
  listRuns: {
    method: 'GET',
    path: '/runs',
    summary: 'Runs of every protocol in the studies you can see (paginated; filter by study, protocol, status)',
    tag: 'Runs',
    op: listRuns,
    source: 'query',
    output: pageOfSchema(RunSummary, 'RunPage'),
  },
  createRun: {
    method: 'POST',
    path: '/runs',
    summary:
      "Create a run: `protocol` picks the protocol, the rest is its set-up (see the protocol's schema); `start: true` starts it",
    tag: 'Runs',
    op: createRun,
    source: 'body',
    output: RunCreated,
    status: 201,
    docBody: () => setupBodies(),
  },
  getRun: {
    method: 'GET',
    path: '/runs/{runId}',
    summary: 'A run: status, progress by session status, tokens and cost, what blocks it, its sessions (paginated)',
    tag: 'Runs',
    op: getRun,
    source: 'query',
    output: RunDetail,
  },
  startRun: {
    method: 'POST',
    path: '/runs/{runId}/start',
    summary: 'Start a draft run',
    tag: 'Runs',
    op: startRun,
    source: 'none',
    output: RunMove,
  },
  pauseRun: {
    method: 'POST',
    path: '/runs/{runId}/pause',
    summary: 'Pause a running run (holds within one message)',
    tag: 'Runs',
    op: pauseRun,
    source: 'none',
    output: RunMove,
  },
  resumeRun: {
    method: 'POST',
    path: '/runs/{runId}/resume',
    summary: 'Resume a paused run',
    tag: 'Runs',
    op: resumeRun,
    source: 'none',
    output: RunMove,
  },
  cancelRun: {
    method: 'POST',
    path: '/runs/{runId}/cancel',
    summary: 'Cancel a run (its queued steps are dropped)',
    tag: 'Runs',
    op: cancelRun,
    source: 'none',
    output: RunMove,
  },
  retryStalled: {
    method: 'POST',
    path: '/runs/{runId}/retry-stalled',
    summary: 'Retry every stalled session of a run',
    tag: 'Runs',
    op: retryStalled,
    source: 'none',
    output: RunMove,
  },
  runResults: {
    method: 'GET',
    path: '/runs/{runId}/results',
    summary: "The protocol's results of a run (accuracy, episode scores …)",
    tag: 'Runs',
    op: viewRun,
    source: 'query',
    output: ProtocolData,
  },
  runDashboard: {
    method: 'GET',
    path: '/runs/{runId}/dashboard',
    summary: "The protocol's dashboard of a run (intelligibility, clemscore …)",
    tag: 'Runs',
    op: runDashboard,
    source: 'query',
    output: ProtocolData,
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
  },
  claimSeat: {
    method: 'POST',
    path: '/sessions/{sessionId}/claim',
    summary: 'Take a claimable seat (`seat`)',
    tag: 'Sessions',
    op: claimSeat,
    source: 'body',
    output: z.object({ sessionId: z.string(), seat: z.string() }),
  },
} satisfies Record<string, Endpoint>

/** The create-run body per protocol: `protocol` and `start`, with that protocol's set-up input. */
function setupBodies(): z.ZodType {
  const bodies = Object.values(plugins).map((p) =>
    z.object({ protocol: z.literal(p.protocol.id), start: z.boolean().optional() }).and(p.setup.input as z.ZodType),
  )
  return bodies.length > 1
    ? z.union(bodies as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]])
    : (bodies[0] as z.ZodType)
}

/** The endpoints protocol plugins add for their own operations (served by the catch-all route). */
export function pluginEndpoints(): Endpoint[] {
  return Object.values(plugins).flatMap((p) =>
    (p.rest ?? []).map((e) => ({ ...e, tag: p.protocol.label }) satisfies Endpoint),
  )
}

/** The plugin endpoint for a request path under /api/v1 and its path parameters, if any matches. */
export function matchPluginEndpoint(method: string, path: string) {
  for (const ep of pluginEndpoints()) {
    if (ep.method !== method) continue
    const names: string[] = []
    const pattern = ep.path.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '{' || c === '}' ? c : `\\${c}`))
    const re = new RegExp(
      `^${pattern.replace(/\{(\w+)\}/g, (_, n: string) => {
        names.push(n)
        return '([^/]+)'
      })}$`,
    )
    const m = re.exec(path)
    if (m) return { ep, params: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1] ?? '')])) }
  }
  return null
}
