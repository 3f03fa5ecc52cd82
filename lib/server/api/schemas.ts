import { z } from 'zod'
import { ROLES } from '@/lib/server/auth/roles'
import { STUDY_PERMISSIONS } from '@/lib/server/auth/study-roles'
import { PROVIDERS } from '@/lib/server/services/connections'
import { Seats } from '@/lib/server/engine/seats'
import { RUN_STATUSES, SESSION_STATUSES } from '@/lib/server/services/runs'
import { QUEUE_FILTERS } from '@/lib/server/services/sessions'
import { PROTOCOLS } from '@/lib/server/services/studies'

/**
 * Response shapes of the REST API. Dates travel as ISO strings. Every object is closed: `handle()`
 * parses each response with its schema, which drops any field not declared here, so what the
 * document declares is exactly what is sent (a field a service adds reaches the API once it is
 * declared here). Each schema with an `id` is a component of the OpenAPI document.
 */
export const ErrorBody = z
  .object({
    error: z.string().meta({ description: 'What went wrong, in words a person can act on.' }),
    fieldErrors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .meta({ description: 'The input fields that were refused, each with why.' }),
  })
  .meta({ id: 'Error' })

const isoDate = z.string().meta({ format: 'date-time' })
const int = () => z.number().int()
const runStatus = z.enum(RUN_STATUSES).meta({ description: 'preparing | draft | running | paused | done | cancelled' })
/** "running" is a queued session a worker steps now. */
const sessionStatus = z.enum(SESSION_STATUSES)
const userRef = z.object({ id: z.string(), name: z.string(), email: z.string() })

export const StudySummary = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    protocol: z.enum(PROTOCOLS).nullable().meta({ description: 'null until the study chooses one' }),
    createdAt: isoDate,
    updatedAt: isoDate,
    archivedAt: isoDate.nullable(),
    _count: z.object({ members: int(), runs: int().meta({ description: 'Its runs' }) }),
  })
  .meta({ id: 'StudySummary' })

export const StudyDetail = StudySummary.extend({
  guidelines: z.string(),
  createdBy: userRef.nullable(),
  members: z.array(
    z.object({
      role: z.string().meta({ description: "The member's study role" }),
      addedAt: isoDate,
      user: userRef.extend({ role: z.enum(ROLES) }),
    }),
  ),
  access: z
    .array(z.enum(STUDY_PERMISSIONS))
    .meta({ description: 'What the caller may do in this study: its account scopes AND its study role.' }),
}).meta({ id: 'StudyDetail' })

const page = { page: int(), pageSize: int(), total: int(), pageCount: int() }

export const pageOfSchema = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ items: z.array(item), ...page }).meta({ id })

export const Me = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    via: z.string().meta({ description: '"session" or "api-key:<prefix>"' }),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'Me' })

export const AuditEntry = z
  .object({
    id: z.string(),
    createdAt: isoDate,
    actorUserId: z.string().nullable(),
    actorEmail: z.string().nullable(),
    via: z.string(),
    action: z.string(),
    resourceType: z.string(),
    resourceId: z.string(),
    studyId: z.string().nullable(),
    before: z.unknown().meta({ description: 'The state before the change (any JSON, null when none)' }),
    after: z.unknown().meta({ description: 'The state after the change (any JSON, null when none)' }),
    actorName: z.string().nullable().meta({ description: "The actor's current name" }),
    studyName: z.string().nullable(),
    resourceName: z.string().nullable().meta({ description: "The resource's current name, where it has one" }),
  })
  .meta({ id: 'AuditEntry' })

export const AuditPage = z
  .object({
    items: z.array(AuditEntry),
    ...page,
    resourceTypes: z.array(z.string()).meta({ description: 'Every resource type in the log (for a filter)' }),
  })
  .meta({ id: 'AuditPage' })

export const Health = z
  .object({ status: z.enum(['ok', 'error']), database: z.enum(['ok', 'unreachable']), version: z.string() })
  .meta({ id: 'Health' })

export const Readiness = z
  .object({
    status: z.enum(['ready', 'draining', 'error']),
    database: z.enum(['ok', 'unreachable']).optional(),
    version: z.string(),
  })
  .meta({ id: 'Readiness' })

// ---------------------------------------------------------------------------------------------
// Runs and sessions of every protocol (the protocol's own parts travel as `view` / `data`)
// ---------------------------------------------------------------------------------------------

export const RunSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    protocol: z.string(),
    protocolLabel: z.string(),
    task: z.string(),
    status: runStatus,
    repetitions: int(),
    createdAt: isoDate,
    study: z.object({ id: z.string(), name: z.string() }),
    sessions: int(),
    done: int(),
    stalled: int(),
    awaiting: int(),
    blocked: z
      .enum(['stalled', 'people'])
      .nullable()
      .meta({ description: 'What keeps a running run from moving on its own' }),
  })
  .meta({ id: 'RunSummary' })

export const RunCreated = z
  .object({
    id: z.string(),
    sessions: int().meta({ description: 'Sessions planned' }),
    protocol: z.string(),
    preparing: z
      .boolean()
      .meta({ description: 'A large run creates its sessions in the background (status `preparing`)' }),
    started: z.boolean(),
    firstSessionId: z.string().nullable().meta({ description: 'null while the run is preparing' }),
    runs: z.array(z.object({ id: z.string(), name: z.string(), sessions: int(), preparing: z.boolean() })).meta({
      description:
        'Every run the set-up created, in order (one for most set-ups; several created together, all or none, e.g. one per budget k of a curve); `id` is the first',
    }),
  })
  .meta({ id: 'RunCreated' })

const counts = z.object({
  total: int(),
  queued: int(),
  waiting: int(),
  running: int(),
  awaiting: int(),
  stalled: int(),
  done: int(),
  cancelled: int(),
  calls: int(),
  failedCalls: int(),
  tokensIn: int(),
  tokensOut: int(),
  costUsd: z.number(),
})

export const RunDetail = z
  .object({
    run: z.object({
      id: z.string(),
      studyId: z.string(),
      study: z.object({ id: z.string(), name: z.string() }),
      name: z.string(),
      protocol: z.string(),
      protocolLabel: z.string(),
      task: z.string(),
      datasetId: z.string(),
      status: runStatus,
      repetitions: int(),
      schedule: z
        .object({
          done: z.boolean().nullish(),
          progress: z.object({ done: z.number(), total: z.number() }).nullish(),
        })
        .nullable()
        .meta({
          description: "The protocol scheduler's last word: whether the run may close, its progress toward its goal",
        }),
      config: z.record(z.string(), z.unknown()).meta({ description: "The protocol's configuration of the run" }),
      seats: Seats.meta({ description: 'Who fills each seat (the template every session starts from)' }),
      sessionsPlanned: int(),
      sessionsCreated: int(),
      prepareError: z.string().nullable().meta({ description: 'Why creating the sessions failed, when it did' }),
      createdAt: isoDate,
      updatedAt: isoDate,
    }),
    access: z.array(z.enum(STUDY_PERMISSIONS)).meta({ description: "What the caller may do in the run's study" }),
    seatDecls: z
      .array(z.object({ name: z.string(), label: z.string(), kinds: z.array(z.string()) }))
      .meta({ description: "The protocol's seats and what may fill them" }),
    dataset: z.object({ id: z.string(), name: z.string(), kind: z.string() }).nullable(),
    counts,
    blocked: z.object({ kind: z.enum(['stalled', 'people']), message: z.string() }).nullable(),
    lastStall: z
      .object({ id: z.string(), stallError: z.string().nullable(), retryCount: int(), updatedAt: isoDate })
      .nullable()
      .meta({ description: 'The session that stalled last, with why' }),
    exports: z.array(z.object({ table: z.string(), label: z.string() })),
    files: z.array(z.object({ file: z.string(), label: z.string() })),
    hasDashboard: z.boolean(),
    sessions: pageOfSchema(
      z.object({
        id: z.string(),
        repetition: int(),
        position: int(),
        status: sessionStatus,
        awaitingSeat: z.string().nullable(),
        stopReason: z.string().nullable(),
        stallError: z.string().nullable(),
        retryCount: int(),
        instanceId: z.string().nullable(),
        updatedAt: isoDate,
        people: z.array(z.object({ seat: z.string(), claimable: z.boolean(), user: userRef.nullable() })),
        messages: int(),
      }),
      'RunSessionPage',
    ),
  })
  .meta({ id: 'RunDetail' })

export const RunStarted = z
  .object({ runId: z.string(), enqueued: int().meta({ description: 'Sessions put on the queue' }) })
  .meta({ id: 'RunStarted' })
export const RunPaused = z.object({ runId: z.string(), status: z.literal('paused') }).meta({ id: 'RunPaused' })
export const RunCancelled = z.object({ runId: z.string(), status: z.literal('cancelled') }).meta({ id: 'RunCancelled' })
export const StalledRetried = z
  .object({
    runId: z.string(),
    retried: int().meta({ description: 'Stalled sessions put back on the queue' }),
    enqueued: z.boolean().meta({ description: 'Whether they step now (false: the run is paused)' }),
  })
  .meta({ id: 'StalledRetried' })

export const RunResults = z
  .object({
    protocol: z.string(),
    data: z.unknown().meta({ description: "The protocol's results of the run (its plugin's `views.run`), or null" }),
  })
  .meta({ id: 'RunResults' })

export const RunDashboard = z
  .object({
    protocol: z.string(),
    run: z.object({ id: z.string(), name: z.string(), status: runStatus }),
    data: z.unknown().meta({ description: "The protocol's dashboard (its plugin's `views.dashboard`)" }),
  })
  .meta({ id: 'RunDashboard' })

export const SessionDetail = z
  .object({
    id: z.string(),
    protocol: z.string(),
    protocolLabel: z.string(),
    status: sessionStatus.meta({ description: '"running" while a worker steps it (calling a model)' }),
    awaitingSeat: z.string().nullable(),
    stopReason: z.string().nullable(),
    stallError: z.string().nullable().meta({ description: 'Why it stalled (to those in its seats and researchers)' }),
    retryCount: int(),
    task: z.string(),
    title: z.string().nullable().meta({ description: 'What it is about (the case, the molecule, the game)' }),
    study: z.object({ id: z.string(), name: z.string(), guidelines: z.string() }),
    run: z.object({ id: z.string(), name: z.string(), status: runStatus }).nullable(),
    updatedAt: isoDate,
    seats: z.array(
      z.object({
        name: z.string(),
        label: z.string(),
        kind: z.enum(['human', 'llm', 'proxy', 'program']).nullable(),
        kindLabel: z.string().nullable(),
        person: z.string().nullable().meta({ description: 'Who fills a human seat (name or email)' }),
        claimable: z.boolean().meta({ description: 'Open to any member of the study (POST …/claim)' }),
        model: z.string().nullable(),
        program: z.string().nullable(),
      }),
    ),
    messages: z.array(
      z.object({
        seq: int(),
        body: z.unknown().meta({ description: "The protocol's message" }),
        byPerson: z.boolean(),
        createdAt: isoDate,
        meta: z.unknown().optional().meta({ description: 'What the agent noted beside it (researchers only)' }),
      }),
    ),
    ask: z
      .object({ seat: z.string(), j: int(), kind: z.string().nullable(), allowedTags: z.array(z.string()) })
      .nullable()
      .meta({ description: 'The message asked next (`j` is the `seq` a turn answers), null once it is over' }),
    done: z.string().nullable().meta({ description: 'Why it ended, once it has' }),
    mySeats: z.array(z.string()),
    yourTurn: z.boolean(),
    draft: z
      .object({ data: z.record(z.string(), z.unknown()), updatedAt: isoDate })
      .nullable()
      .meta({ description: 'Your unsent turn for the message asked, kept on the server' }),
    claimableSeats: z.array(z.string()),
    lease: z.object({ seat: z.string(), until: isoDate, seconds: int() }).nullable().meta({
      description:
        'Your claim of a claimable seat: when it lapses unless renewed (POST /sessions/{sessionId}/lease), and how long a renewal lasts',
    }),
    view: z.unknown().meta({ description: "The protocol's view of the session (its plugin's `views.session`)." }),
  })
  .meta({ id: 'SessionDetail' })

export const TurnResult = z
  .object({
    sessionId: z.string(),
    seq: int(),
    done: z.string().nullable(),
    message: z.unknown().meta({ description: "The protocol's message your turn became" }),
  })
  .meta({ id: 'TurnResult' })

export const SeatClaimed = z
  .object({
    sessionId: z.string(),
    seat: z.string(),
    leaseUntil: isoDate.meta({
      description: 'The claim lapses then unless renewed (POST /sessions/{sessionId}/lease)',
    }),
  })
  .meta({ id: 'SeatClaimed' })

export const LeaseRenewed = z
  .object({
    sessionId: z.string(),
    seat: z.string(),
    leaseUntil: isoDate.nullable().meta({ description: 'When the claim now lapses (null: a seat named for you)' }),
    seconds: int().meta({ description: 'How long each renewal lasts (PARLEY_SEAT_LEASE_SECONDS)' }),
  })
  .meta({ id: 'LeaseRenewed' })

export const SeatsAssigned = z
  .object({
    runId: z.string(),
    seat: z.string(),
    userId: z.string(),
    email: z.string(),
    requested: int(),
    sessionIds: z.array(z.string()).meta({ description: 'The sessions the person was named on (at most `requested`)' }),
  })
  .meta({ id: 'SeatsAssigned' })

export const SeatReleased = z.object({ sessionId: z.string(), seat: z.string() }).meta({ id: 'SeatReleased' })

export const Queue = z
  .object({
    counts: z.object({ yours: int(), claimable: int(), others: int(), waiting: int(), stalled: int(), done: int() }),
    next: z.string().nullable().meta({ description: 'The session waiting for you longest' }),
    items: z.array(
      z.object({
        id: z.string(),
        grp: z.enum(QUEUE_FILTERS).meta({ description: 'The group of the queue it is in (the `filter` values)' }),
        protocol: z.string(),
        protocolLabel: z.string(),
        title: z.string(),
        status: sessionStatus,
        awaitingSeat: z.string().nullable(),
        seat: z.string(),
        seatLabel: z.string(),
        claimable: z.boolean(),
        mine: z.boolean().meta({ description: 'You fill the seat (false: open to claim)' }),
        task: z.string(),
        repetition: int(),
        position: int(),
        updatedAt: isoDate,
        studyId: z.string(),
        studyName: z.string(),
        runId: z.string().nullable(),
        runName: z.string().nullable(),
        messages: int(),
        runMine: int().nullable().meta({ description: 'Your sessions in its run' }),
        runDone: int().nullable().meta({ description: 'Of those, done' }),
        waitingFor: z
          .object({
            id: z.string(),
            status: sessionStatus,
            position: int(),
            title: z.string(),
            mine: z.boolean(),
            yours: z.boolean(),
          })
          .nullable()
          .meta({ description: 'For a session waiting for an earlier one of its chain: that session' }),
      }),
    ),
    ...page,
  })
  .meta({ id: 'WorkQueue' })

export const DatasetImportStarted = z
  .object({ id: z.string(), name: z.string(), status: z.literal('importing') })
  .meta({ id: 'DatasetImportStarted' })

export const DatasetImportStatus = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(['importing', 'ready']).meta({ description: 'A failed import answers 400 with its reason' }),
    rowsDone: int(),
    rowsTotal: int().nullable(),
    error: z.string().nullable(),
    instances: int(),
    assets: int(),
  })
  .meta({ id: 'DatasetImportStatus' })

// ---------------------------------------------------------------------------------------------
// LLM connections (the key never leaves the server: its last four characters at most)
// ---------------------------------------------------------------------------------------------

export const Connection = z
  .object({
    id: z.string(),
    studyId: z.string().nullable().meta({ description: 'The study it belongs to; null for a global connection' }),
    study: z.object({ id: z.string(), name: z.string() }).nullable(),
    name: z.string(),
    provider: z.enum(PROVIDERS),
    baseUrl: z.string(),
    apiKeyMasked: z
      .string()
      .meta({ description: 'The stored API key as its last four characters ("…abcd"), or "none"; never the key' }),
    defaultModel: z.string(),
    apiVersion: z.string().nullable(),
    extraHeaders: z
      .record(z.string(), z.string())
      .meta({ description: 'Extra header names, each value masked like the key' }),
    timeoutMs: z.number().int(),
    maxConcurrency: z.number().int().meta({ description: 'Calls at once, across every process' }),
    requestsPerMinute: z.number().int().nullable(),
    tokensPerMinute: z.number().int().nullable(),
    restrictedHosts: z.boolean().meta({ description: 'Limited to public addresses (a non-admin chose its address)' }),
    createdAt: isoDate,
    updatedAt: isoDate,
  })
  .meta({ id: 'Connection' })

export const ConnectionList = z.array(Connection).meta({ id: 'ConnectionList' })
