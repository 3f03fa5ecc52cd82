import type { z } from 'zod'
import type { DemoRequest } from '@/lib/llm/demo-model'
import type { AnyProtocol, BaseMessage, Done } from '@/lib/protocols/types'
import type { Actor } from '@/lib/server/actor'
import type { StudyPermission } from '@/lib/server/auth/study-roles'
import type { DatasetKind } from '@/lib/server/engine/datasets'
import type { SessionImport } from '@/lib/server/engine/session-import'
import type { Operation } from '@/lib/server/operation'
import type { LlmTools } from '@/lib/server/engine/llm'
import type { SeatFill, SeatFillInput, Seats } from '@/lib/server/engine/seats'
import type { ProtocolCli } from '@/lib/cli/tools'
import type { TranscriptContext, TranscriptTurn } from '@/lib/server/engine/transcript'

/**
 * What a protocol brings to the engine besides its pure module: how its LLM, proxy and program
 * agents answer an ask, what a person submits for a turn, how a run is set up, what the pages
 * read, what can be exported, and how the offline demo model plays it. One plugin per protocol
 * (`protocols/<id>/server/plugin.ts`), registered in `lib/server/protocols/registry.ts`. The
 * engine (lib/server/engine) and the generic services and pages only ever talk to this interface.
 */

/**
 * A session as a step sees it: the stored row with its message bodies, in seq order. A hook sees its
 * protocol's messages (`StepSession<MessageOf<P>>`): every stored message was accepted by that
 * protocol's `apply` before it was written, and `prepare` replays them through it again.
 */
export interface StepSession<M extends BaseMessage = BaseMessage> {
  id: string
  studyId: string
  runId: string | null
  protocol: string
  task: string
  repetition: number
  position: number
  status: string
  awaitingSeat: string | null
  config: unknown
  seats: unknown
  instance: unknown
  messages: M[]
  /** The run's status (null for a session without a run). */
  runStatus: string | null
  /** Its name in its run (unique per run). */
  key: string
  /** A fork: the session it was forked from and the number of that session's messages it started with. */
  parentId: string | null
  forkSeq: number | null
}

/** A session's stored config, split into the protocol's config and the plugin's extras. */
export interface SessionConfig<C = unknown, X = unknown> {
  config: C
  extras: X
}

/** What parses a session of a protocol: the protocol, and how its plugin splits the stored config. */
export interface SessionParser<P extends AnyProtocol, X> {
  protocol: P
  sessionConfig?(raw: unknown, task: string): SessionConfig<ConfigOf<P>, X>
}

/**
 * A stored config (a session's, or its run's, which every session of the run starts from) split into
 * the protocol's config and the plugin's extras: the plugin's `sessionConfig`, else the protocol's schema.
 */
export function splitConfig<P extends AnyProtocol, X>(
  parser: SessionParser<P, X>,
  raw: unknown,
  task: string,
): SessionConfig<ConfigOf<P>, X> {
  return parser.sessionConfig
    ? parser.sessionConfig(raw, task)
    : { config: parser.protocol.config.parse(raw), extras: undefined as X }
}

/** A protocol's own types, read off its pure module: what every hook of its plugin is typed by. */
// Read off the fields (schemas and `next`), not the generic parameters: a protocol may widen its
// `init`/`apply` to any instance for its own tests, which would make inference say unknown.
export type ConfigOf<P> = P extends { config: z.ZodType<infer C, any> } ? C : never
export type StateOf<P> = P extends { next(state: infer S): unknown } ? S : never
export type MessageOf<P> = P extends { message: z.ZodType<infer M extends BaseMessage, any> } ? M : never
export type InstanceOf<P> = P extends { instance: z.ZodType<infer I, any> } ? I : never
export type AskOf<P> = P extends { next(state: any): infer R } ? Exclude<R, Done<string>> : never
/** The seats a protocol's asks name (the seat a person fills when it is their turn). */
export type SeatOf<P> = AskOf<P> extends { seat: infer S extends string } ? S : string

/**
 * Everything a step knows about the session, parsed: typed by the protocol `P` (its Config, Instance
 * and State) and the plugin's own extras `X` (what `sessionConfig` keeps beside the protocol's config).
 */
export interface SessionContext<P extends AnyProtocol = AnyProtocol, X = any> {
  session: StepSession<MessageOf<P>>
  config: ConfigOf<P>
  extras: X
  instance: InstanceOf<P>
  seats: Seats
  state: StateOf<P>
}

export interface AgentContext<P extends AnyProtocol = AnyProtocol, X = any> extends SessionContext<P, X> {
  ask: AskOf<P>
  fill: SeatFill
  llm: LlmTools
  /** A person fills another seat and may watch the session live (stream the answer to them). */
  watched: boolean
  /**
   * The message bodies of the run's earlier sessions of this session's repetition (lower position),
   * in position order; empty for a session without a run. Read once per job.
   */
  earlierSessions(): Promise<MessageOf<P>[][]>
  /**
   * Aborted when the step must stop: its run was paused or cancelled, or its seat's time limit passed
   * (the fill's `timeoutSeconds`, else the plugin's `timeouts`). `llm` passes it to every model call
   * (the HTTP request is aborted); an agent's own long work should watch it too. The runner stops
   * waiting for the agent when it aborts, whatever the agent does.
   */
  signal: AbortSignal
  /**
   * Runs one of the plugin's `programs` on `input` and records it (a ProgramRun row: input, output,
   * exit status, limits hit, duration). Idempotent per (session, message number): the n-th call of a
   * program in a step run again (after a worker died, a pause, a Retry) with the same input returns the
   * recorded result without running the program again. Resolves with the program's outcome (its own
   * failure or time limit included); rejects only when the step itself is stopped (`signal`).
   */
  exec(program: string, input: unknown, opts?: ExecOptions): Promise<ExecResult>
}

/** What a program gets besides its input. */
export interface ProgramContext {
  /** Aborted when the step stops or the program's time limit passes: stop (kill the child process). */
  signal: AbortSignal
  /** The limits of this execution (its `timeoutSeconds` and whatever the plugin declares, e.g. memory). */
  limits: ProgramLimits
  sessionId: string
  seq: number
}

export interface ProgramLimits {
  timeoutSeconds?: number
  [limit: string]: unknown
}

/**
 * A program a step can run with `ctx.exec`: an async function from a JSON input to a JSON output. It
 * may run a separate OS process (a sandbox); it must stop when its signal aborts. Returning is exit
 * status 0; throwing a `ProgramExit` (lib/server/engine/exec.ts) reports an exit status, an output and
 * a limit it hit; any other error is exit status 1 with its message.
 */
export type ProgramFn = (input: any, ctx: ProgramContext) => Promise<unknown>
export interface ProgramDef {
  run: ProgramFn
  /** Its default time limit: past it the program is aborted and the result says limitsHit 'timeout'. */
  timeoutSeconds?: number
  /** Further limits handed to the program (its own to enforce). */
  limits?: Record<string, unknown>
}

export interface ExecOptions {
  /** This call's time limit (default: the program's). */
  timeoutSeconds?: number
  limits?: Record<string, unknown>
}

export interface ExecResult {
  output: unknown
  /** 0 when the program returned, its own status when it reported one, null when a limit stopped it. */
  exitStatus: number | null
  limitsHit: string | null
  error: string | null
  durationMs: number
  /** The recorded result of an earlier run of the same step (the program did not run again). */
  reused: boolean
}

export type SessionEndReason = 'done' | 'cancelled' | 'stalled'

/** What `onSessionEnd` is told of the session that ended. */
export interface SessionEndContext {
  sessionId: string
  studyId: string
  runId: string | null
  protocol: string
}

/** What an agent (or a person's submission) writes: one message, and what it was conditioned on. */
export interface Produced<M extends BaseMessage = BaseMessage> {
  message: M
  /** C: what the sender was conditioned on (the assembled prompt), for the inspector. */
  context?: unknown
  /** Kept beside the message in M's payload (raw reply, warnings, the judgements behind a tag …). */
  meta?: Record<string, unknown>
  /** The LLM call that produced it. */
  callId?: string | null
}

export type Agent<P extends AnyProtocol = AnyProtocol, X = any> = (
  ctx: AgentContext<P, X>,
) => Promise<Produced<MessageOf<P>>>

export interface HumanContext<P extends AnyProtocol = AnyProtocol, X = any> extends SessionContext<P, X> {
  ask: AskOf<P>
  /** The seat the person fills (whose turn it is): the ask's seat. */
  seat: SeatOf<P>
  actor: Actor
}

/**
 * The indexed columns of a message: M's receiver, and three neutral projections of its body that
 * dashboards query (`label` a short category such as PXP's tag or EVINCE's turn kind, `value` a short
 * answer, `detail` a longer text). A protocol names them for its exports with `projectionNames`.
 */
export interface Projection {
  receiver: string
  label?: string | null
  value?: string | null
  detail?: string | null
}

/** The three projections of a message (their column names on the message row). */
export const PROJECTIONS = ['label', 'value', 'detail'] as const
export type ProjectionName = (typeof PROJECTIONS)[number]

/**
 * A run as the setup of a protocol plans it; the engine validates it and writes it, its sessions in
 * batches (lib/server/engine/prepare.ts): one per chosen instance and repetition.
 */
export interface RunPlan {
  name: string
  /** The task or instance kind (rad, drug, generic, cases, clembench …). */
  task: string
  datasetId: string
  /** The config every session gets (the protocol's config plus the plugin's extras). */
  config: unknown
  /** The seat template of the run (shown on the run page; sessions may differ, e.g. round-robin experts). */
  seats: Seats
  repetitions: number
  /** These instances of the dataset, in this order; otherwise its first `sample` by index (all when absent). */
  instanceIds?: string[]
  sample?: number
  /** Shuffle each repetition's order, seeded by the repetition number (reproducible). */
  shuffle?: boolean
  /** Session i (counted across repetitions) gets seatCycle[i % length] (round robin over people); default [seats]. */
  seatCycle?: Seats[]
  analysis?: unknown
  /** Facts for the audit row. */
  audit?: Record<string, unknown>
}

/** An instance of a dataset, as a session's snapshot is made from it. */
export interface InstanceRow {
  id: string
  datasetId: string
  index: number
  input: unknown
  prediction: string
  explanation: string
  meta: unknown
}

/**
 * The protocol part of a run-create body, as a plugin's legacy adapter or form reader returns it:
 * each seat a fill, or a list of fills that sessions take round robin (session i gets fill
 * i mod length: experts sharing a seat across sessions).
 */
export interface RunSetupBody {
  name?: unknown
  datasetId?: unknown
  seats: Record<string, SeatFillInput | SeatFillInput[]>
  config?: unknown
  options?: unknown
  repetitions?: unknown
  sample?: unknown
  instanceIds?: unknown
  shuffle?: unknown
}

/** A run-create body after the engine checked it: what a plugin's `setup.plan` gets. */
export interface RunSetup<Config = unknown, Options = unknown> {
  name: string
  datasetId?: string
  /** The seats of the run (session 0's fills; shown on the run page). */
  seats: Seats
  /** One seat set per session variant (round robin); `[seats]` when no seat lists several fills. */
  seatCycle: Seats[]
  config: Config
  options: Options
  repetitions: number
  sample?: number
  instanceIds?: string[]
  shuffle: boolean
}

export interface SetupTools {
  /** A dataset of the study, imported and ready to run on (404 otherwise; 400 while it imports or after it failed). */
  dataset(datasetId: string): Promise<{ id: string; name: string; kind: string; studyId: string }>
}

/** One exportable table of a run: rows as plain objects (streamed). */
export interface ExportTable {
  label: string
  description?: string
  /**
   * Streams the rows of the run, in a stable order. For CSV every row has the same keys and no
   * value is an array or object (a column per item instead), so a spreadsheet reads plain cells.
   */
  rows(runId: string, format: 'jsonl' | 'csv', args?: Record<string, unknown>): AsyncIterable<Record<string, unknown>>
  /**
   * The table's own parameters (e.g. `?lambda=0.06` beside `table` and `format` in the export URL): a
   * zod object over the query's other values, all strings. Checked before any row is read (a bad value
   * is a 400 naming the parameter); `rows` gets the parsed object. Without it, other values are ignored.
   */
  args?: z.ZodType<Record<string, unknown>>
}

/** A file of a run (a zip of clembench's folder layout …). */
export interface ExportFile {
  label: string
  description?: string
  filename: string
  contentType: string
  build(runId: string): Promise<Uint8Array>
}

export interface ViewContext<P extends AnyProtocol = AnyProtocol, X = any> extends SessionContext<P, X> {
  /** The seats the viewer fills in this session (empty for researchers and viewers). */
  mySeats: string[]
  ask: AskOf<P> | null
  /** Who views it (the session page sets it): for what the view offers them (the operations check again). */
  viewer?: Actor
}

/**
 * A session the scheduler asks for. A fork names its parent (a session of the same run) and the
 * number of the parent's messages it starts from (`forkSeq`, at most the parent's length): it runs on
 * the parent's instance and config, with the parent's seats unless `seats` says otherwise. A session
 * that is not a fork names an instance of the run's dataset.
 */
export interface SessionSpec {
  /** Unique in the run: a key that exists already is not created again. */
  key: string
  parentId?: string
  forkSeq?: number
  instanceId?: string
  seats?: Seats
  /** Plain data for lists and dashboards (default: the parent's, else 1 and 0). */
  repetition?: number
  position?: number
  /** Created waiting: it runs only once a later decision starts it. */
  waiting?: boolean
}

/** A session of the run as its scheduler sees it. */
export interface ScheduledSession {
  id: string
  key: string
  parentId: string | null
  forkSeq: number | null
  repetition: number
  position: number
  status: string
  instanceId: string | null
}

/** What the scheduler decides when a session of its run ended (every part optional). */
export interface ScheduleDecision {
  /** Sessions to create (and queue, unless waiting), in this order. */
  create?: SessionSpec[]
  /** Waiting sessions of the run to queue now, by id. */
  start?: string[]
  /**
   * false: the run stays open even when none of its sessions is (it waits for the scheduler);
   * true or absent: it closes once none of its sessions is open.
   */
  done?: boolean
  /** Progress toward the scheduler's goal, shown on the run page (default: sessions done of known). */
  progress?: { done: number; total: number }
}

/** What the scheduler reads, inside the transaction that holds the run's lock. */
export interface ScheduleContext<P extends AnyProtocol = AnyProtocol, X = any> {
  run: {
    id: string
    studyId: string
    /** The run's config, split as every session's is (the plugin's `sessionConfig`, else the protocol's schema). */
    config: SessionConfig<ConfigOf<P>, X>
    status: string
  }
  /** The run's sessions (of one repetition when asked), by creation order: lineage, status, key. */
  sessions(where?: { repetition?: number }): Promise<ScheduledSession[]>
  /** The message bodies of one session of the run, in seq order. */
  messages(sessionId: string): Promise<MessageOf<P>[]>
}

/**
 * A protocol's run scheduler: which sessions a run has beyond its plan's grid, and when it is done.
 * The engine calls it under the run's row lock (one call at a time per run), once per session end.
 */
export interface RunSchedule<P extends AnyProtocol = AnyProtocol, X = any> {
  /**
   * Whether a session of the plan's grid starts waiting (held until a decision starts it), given the
   * plan's config split as a session's is.
   */
  waits?(config: SessionConfig<ConfigOf<P>, X>, at: { repetition: number; position: number }): boolean
  /** Once, when the run starts running: sessions to add to the plan's grid. */
  onRunStart?(ctx: ScheduleContext<P, X>): ScheduleDecision | Promise<ScheduleDecision>
  /**
   * Whether `onSessionDone` is called for a run's sessions, given the run's config split as a
   * session's is (default: yes). A run it has nothing to decide for (PXP without carry-over, ReHAC
   * without trees) then ends each session as a run without a scheduler does: one statement that closes
   * the run when nothing is open, without the run's lock (which every session end would wait for).
   */
  watches?(config: SessionConfig<ConfigOf<P>, X>): boolean
  /** Once per session that ended done: what comes next. */
  onSessionDone?(
    ctx: ScheduleContext<P, X> & { session: ScheduledSession },
  ): ScheduleDecision | Promise<ScheduleDecision>
}

/**
 * A plugin as the engine holds it: the protocol, the runtime (what a worker needs to step a session,
 * loaded with the plugin's entry), and its other capabilities, each a module loaded on first use
 * (`capability`), so a worker that only steps sessions never loads set-up, page, export, demo-seed or
 * operation code. Written with {@link definePlugin}, which types every hook by the protocol.
 */
export interface ProtocolPlugin<P extends AnyProtocol = AnyProtocol, X = any> extends PluginRuntime<P, X> {
  protocol: P
  /** Creating a run (web, REST, CLI). */
  setup: Capability<PluginSetup>
  /** What the pages show: the session page, the run page, the dashboard, two runs compared. */
  views: Capability<PluginViews<P, X>>
  /** Extra tables and files of a run beside the generic D, M and C. */
  exports?: Capability<PluginExports>
  /** Demo data written by us for this protocol (the seed script). */
  seed?: Capability<PluginSeed>
  /** Its own operations and REST endpoints, dataset kinds and CLI commands. */
  ops?: Capability<PluginOps>
}

/** A capability: loaded once, on first use (the same promise after). */
export type Capability<T> = () => Promise<T>

/** What a worker needs to step a session of the protocol. */
export interface PluginRuntime<P extends AnyProtocol = AnyProtocol, X = any> {
  /** The run's scheduler (default: the plan's grid, done when none of its sessions is open). */
  schedule?: RunSchedule<P, X>
  /** Splits a session's stored config (default: all of it is the protocol's). */
  sessionConfig?(raw: unknown, task: string): SessionConfig<ConfigOf<P>, X>
  /** Agents by kind; `program` agents by program name. */
  agents: {
    llm?: Agent<P, X>
    proxy?: Agent<P, X>
    program?: Record<string, Agent<P, X>>
  }
  /**
   * The default time limit of a seat's agent in seconds, by kind (`program` by program name); a seat
   * fill's own `timeoutSeconds` wins. Past it the step is aborted and the session stalls.
   */
  timeouts?: { llm?: number; proxy?: number; program?: Record<string, number> }
  /** The programs its agents run with `ctx.exec`, by name (recorded as ProgramRun rows). */
  programs?: Record<string, ProgramFn | ProgramDef>
  /**
   * Called once each time a session ends: done, cancelled (with its run) or stalled (it may be
   * retried and end again), to release what the plugin holds for it (a sandbox, a temporary folder).
   * Errors are logged, never thrown.
   */
  onSessionEnd?(ctx: SessionEndContext, reason: SessionEndReason): void | Promise<void>
  human: HumanTurn<P, X>
  /** M's receiver and indexed projections of a message. */
  project(message: MessageOf<P>, meta: Record<string, unknown> | undefined, seats: Seats): Projection
  /**
   * What the protocol calls its projections: the message export's column names (default `label`,
   * `value`, `detail`); a projection it does not name keeps its neutral name.
   */
  projectionNames?: Partial<Record<ProjectionName, string>>
  /** The offline demo model's reply to a request of this protocol's agents (undefined: not ours). */
  demo?(req: DemoRequest): string | undefined
  /**
   * What a session is about, in a few words (the case, the molecule, the game): lists and titles. It
   * gets the instance parsed by the protocol's schema (`sessionTitle` parses a stored snapshot).
   */
  title?(instance: InstanceOf<P>, task: string): string
}

export interface HumanTurn<P extends AnyProtocol = AnyProtocol, X = any, In extends z.ZodType<unknown, any> = any> {
  /** What a person submits for a turn (besides the session and the message number). */
  input: In
  /** The person's input → the protocol's message; throws an AppError (400) for input the rules refuse. */
  toMessage(ctx: HumanContext<P, X>, input: z.output<In>): Produced<MessageOf<P>> | Promise<Produced<MessageOf<P>>>
  /** The turn form's fields → the input (the browser's form; REST and the CLI send the input itself). */
  fromForm?(form: Record<string, unknown>): unknown
}

/**
 * Creating a run. Every protocol takes the one run-create shape (`RunSetup`): seats as `SeatFill`s,
 * checked against the protocol's seat declarations before `plan` is called, the protocol's config
 * checked by `config` (default: the protocol's own schema), and only what is truly the protocol's
 * own in `options`.
 */
export interface PluginSetup<Config = any, Options = any> {
  /** The config a client gives (default: `protocol.config`); PXP adds what its plugin records beside n and k. */
  config?: z.ZodType<Config, any>
  /** The protocol's own run options (a task template, carry-over, a typed-in case …); default: none. */
  options?: z.ZodType<Options, any>
  /**
   * The run the set-up describes, or several runs created together from one set-up (e.g. one run per
   * budget of a curve): each is checked before any is written, and all of them are written in one
   * transaction or none is (`writeRuns`).
   */
  plan(
    actor: Actor,
    studyId: string,
    input: RunSetup<Config, Options>,
    tools: SetupTools,
  ): Promise<RunPlan | readonly RunPlan[]>
  /**
   * The protocol's set-up body from before one seat vocabulary (a body without `seats`), kept so
   * REST clients and scripts written for it still work: checked by `input`, mapped to the one shape.
   */
  legacy?: {
    input: z.ZodType<unknown, any>
    /** May throw a 400 naming the old field (e.g. experts chosen but none named). */
    toRun(input: any): RunSetupBody
  }
  /** What a session runs on, from its instance (default: input, prediction, explanation). */
  snapshot?(row: InstanceRow): unknown
  /** The set-up form's fields → the body (the browser's form; REST and the CLI send the body itself). */
  fromForm?(form: Record<string, unknown>): unknown
  /**
   * What the set-up form needs of the study beyond its datasets, models and people (PXP: the study's
   * task templates), handed to the UI's `SetupForm` as `extra`. Called after write access is checked.
   */
  formData?(actor: Actor, studyId: string): Promise<Record<string, unknown>>
}

export interface PluginViews<P extends AnyProtocol = AnyProtocol, X = any> {
  /** What the session page shows beside the log (participants never see the ground truth). */
  session(ctx: ViewContext<P, X>): unknown | Promise<unknown>
  /**
   * What a person in a seat sees of a message of the log (default: all of it); researchers always
   * see the stored message. E.g. PXP hides the proxy's answer from experts when the run says so.
   */
  participantMessage?(message: MessageOf<P>, ctx: ViewContext<P, X>): MessageOf<P>
  /**
   * A finished session as a transcript, turn by turn (who spoke, what they said), for labelling
   * projects over sessions. Default (`sessionTranscript`): one turn per message, its sender's seat
   * label and its projections (label, value, detail).
   */
  transcript?(ctx: TranscriptContext<P>): TranscriptTurn[]
  /** The run page's protocol part (results, accuracy …). */
  run?(runId: string, args: Record<string, string | undefined>): Promise<unknown>
  /** The protocol's dashboard (intelligibility, clemscore …). */
  dashboard?(runId: string, args: Record<string, string | undefined>): Promise<unknown>
  /**
   * Two runs of this protocol side by side (the protocol's headline numbers for A and B and what
   * changed), for the generic compare page; the UI's `Compare` draws it.
   */
  compare?(runA: string, runB: string): Promise<unknown>
  /**
   * What a run can be compared with: `compare` puts two runs side by side only when their keys are
   * equal (PXP: runs on the same task, so a RAD run is never offered against a DRUG run); the label
   * names it on the compare page. Default: the run's task.
   */
  comparableAs?(run: { task: string; config: unknown }): { key: string; label: string }
  /**
   * The protocol's card on a study page, for its own resources of the study (PXP's task templates);
   * the UI's `StudyPanel` draws it. Called after the actor's read access to the study is checked.
   */
  studyPanel?(actor: Actor, studyId: string): Promise<unknown>
  /**
   * The study permission a page of `studyPage` needs (default `read`). A page for another permission
   * (labelling's agreement and adjudication pages: `adjudicate`) opens for whoever holds that one even
   * without reading the study: an annotator account the study made its adjudicator.
   */
  studyPageNeeds?(path: string[]): StudyPermission
  /**
   * A page of the protocol under a study, `/studies/{id}/p/{protocol}/{...path}` (a template, its
   * form); null: no such page (404). Called after the access `studyPageNeeds` names is checked; a page that changes
   * something checks the scope and write access itself. The UI's `StudyPage` draws it. `args` are
   * the page URL's search parameters (one string each, bounded by the service): the plugin validates
   * them with zod itself and shows a bad value as a message on the page, never a crash.
   */
  studyPage?(
    actor: Actor,
    studyId: string,
    path: string[],
    args: Record<string, string>,
  ): Promise<{ title: string; data: unknown } | null>
}

export interface PluginExports {
  tables?: Record<string, ExportTable>
  files?: Record<string, ExportFile>
}

export interface PluginSeed {
  /**
   * Demo data written by us for this protocol: datasets, finished runs played by the offline demo
   * model, and sessions waiting for the demo people. Idempotent; returns what it created.
   */
  seedDemo(seed: DemoSeed): Promise<string[]>
  /**
   * The protocols whose demo seeds must have run first (this seed uses their runs or sessions, e.g.
   * labelling imports the demo's PXP and ReHAC sessions as transcripts). lib/server/seed.ts runs the
   * seeds in an order that honours every `after` (`seedOrder`); an unknown id is ignored, a cycle refused.
   */
  after?: readonly string[]
}

export interface PluginOps {
  /** The protocol's own operations (label merges, importing its instances …), registered with the others. */
  operations?: Operation<any, any>[]
  /**
   * REST endpoints of its own operations, under /api/v1 (listed in the OpenAPI document beside the
   * generic ones; the path should start with the protocol id, e.g. /scorekeeping/datasets).
   */
  rest?: PluginEndpoint[]
  /**
   * The dataset kinds it imports, by kind name (unique across the plugins: rad, cases, clembench …),
   * run by the one streaming import job (lib/server/engine/datasets.ts).
   */
  datasets?: Record<string, DatasetKind>
  /**
   * The kinds of file it imports finished sessions from, by kind name (unique across the plugins): each
   * parses a file into sessions (instance, seats, config, messages); the engine replays every message
   * through `apply` and writes one imported run, all or nothing (lib/server/engine/session-import.ts).
   */
  sessionImports?: Record<string, SessionImport>
  /** Its `parley <protocol> …` commands. */
  cli?: ProtocolCli
  /**
   * Its own kinds of background job, by name (queue `plugin-<protocol>-<name>`, worked beside the
   * imports in the web server and `parley worker`, lib/server/engine/plugin-jobs.ts): enqueue one with
   * `enqueuePluginJob`. At-least-once, like every job: `run` must be idempotent.
   */
  jobs?: Record<string, PluginJob>
}

/** A protocol's own background job: its data (checked when enqueued and again when a worker takes it) and its work. */
export interface PluginJob<D = any> {
  data: z.ZodType<D, any>
  /** Throwing hands the job back to the queue for a retry (after a delay); return to end it. */
  run(data: D): Promise<void>
}

/** A capability as a plugin declares it: the value itself, or a function that loads its module. */
type CapabilitySpec<T> = T | (() => Promise<T>)

/** What {@link definePlugin} takes: the runtime, and each capability as a value or a lazy module load. */
export interface PluginSpec<P extends AnyProtocol, X = any> extends PluginRuntime<P, X> {
  setup: CapabilitySpec<PluginSetup>
  views: CapabilitySpec<PluginViews<P, X>>
  exports?: CapabilitySpec<PluginExports>
  seed?: CapabilitySpec<PluginSeed>
  ops?: CapabilitySpec<PluginOps>
}

/** Loads a capability once: the first call starts the load, later calls share it (a failed load is tried again). */
function capability<T>(spec: CapabilitySpec<T>): Capability<T> {
  if (typeof spec !== 'function') {
    const ready = Promise.resolve(spec)
    return () => ready
  }
  const load = spec as () => Promise<T>
  let pending: Promise<T> | undefined
  return () => {
    pending ??= load().catch((err) => {
      pending = undefined
      throw err
    })
    return pending
  }
}

/**
 * A protocol's plugin: every hook typed by the protocol's Config, Instance, State, Ask and Message
 * (and the plugin's extras `X`), so a plugin needs no casts; each capability given as a value or as a
 * lazy `() => import('./module').then(…)`. The protocol alone fixes `P` (`NoInfer`): a hook typed
 * more loosely (an `Agent` of any protocol) cannot widen it, it fails to compile instead.
 */
export function definePlugin<P extends AnyProtocol, X = Record<string, never>>(
  protocol: P,
  spec: PluginSpec<NoInfer<P>, X>,
): ProtocolPlugin {
  const { setup, views, exports, seed, ops, ...runtime } = spec
  const plugin: ProtocolPlugin<P, X> = {
    ...runtime,
    protocol,
    setup: capability(setup),
    views: capability(views),
    exports: exports && capability(exports),
    seed: seed && capability(seed),
    ops: ops && capability(ops),
  }
  // The engine holds every plugin as the protocol-agnostic ProtocolPlugin: it hands each hook only
  // what the plugin's own protocol produced (its parsed config, instance, replayed state and asks).
  return plugin as unknown as ProtocolPlugin
}

/**
 * What a protocol's demo seed gets (lib/server/seed.ts calls every plugin's `seedDemo`): the demo
 * study, its people, the offline demo model's connection, and helpers to create a run and play it to
 * the end with the demo model, so a new install opens on finished runs with their dashboards, and
 * on sessions waiting for the demo experts.
 */
export interface DemoSeed {
  studyId: string
  researcher: Actor
  /** The demo people by email. */
  people: Record<string, Actor>
  demoConnectionId: string
  /** A run of the protocol unless one of that name exists in the study; returns its id and whether it is new. */
  run(protocol: string, input: Record<string, unknown>): Promise<{ id: string; created: boolean }>
  /** Play a run to the end (or until people are needed) with the demo model, in this process. */
  play(runId: string): Promise<void>
  /**
   * Import a dataset into the demo study the way a researcher does (the one import job, run here in
   * this process): `kind`, `name`, `file` and the kind's own fields. Resolves with its id once it is
   * ready; rejects with the reason when it fails.
   */
  importDataset(input: { kind: string; name: string; file: File } & Record<string, unknown>): Promise<string>
  /**
   * One demo person's turn in a session, through the same services a browser uses: the person claims
   * the seat the session awaits unless they already hold it (`sessions.claim`, with its study-role,
   * lease and distinct-claimant checks), then sends `input` as that seat's turn (`sessions.submit`,
   * validated by the plugin's human input and the protocol's rules). Rejects with the service's error
   * (nothing written) when the person may not, e.g. another person holds the seat.
   */
  actAs(email: string, sessionId: string, input: Record<string, unknown>): Promise<{ seq: number; done: string | null }>
}

/** A REST endpoint a plugin adds for one of its operations (same shape as lib/server/api/endpoints.ts). */
export interface PluginEndpoint {
  method: 'GET' | 'POST'
  path: string
  summary: string
  op: Operation<any, any>
  source: 'query' | 'body' | 'multipart' | 'none'
  output: z.ZodType
  status?: 200 | 201
  /** The request body as the OpenAPI document shows it (uploads: files as binary strings). */
  docBody?: () => z.ZodType
  /** Statuses besides those every endpoint answers, each with when (as in endpoints.ts). */
  errors?: { 404?: string; 409?: string; 422?: string }
  /** A create: accepts an Idempotency-Key. */
  idempotent?: boolean
  /** An answer that is not JSON (a drawing …): the checked result becomes the response (as in endpoints.ts). */
  answer?: { contentType: string; respond(data: any): Response }
}
