import { crossCopy } from '@/lib/cross-copy'
import { randomUUID } from 'node:crypto'
import type { z } from 'zod'
import type { BaseMessage } from '@/lib/protocols/types'
import type { Actor } from '@/lib/server/actor'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { db } from '@/lib/server/db'
import type { DatasetField } from '@/lib/server/engine/datasets'
import { type InstanceRow, type ProtocolPlugin, splitConfig } from '@/lib/server/engine/plugin'
import { allPlugins } from '@/lib/server/engine/plugins'
import { Seats } from '@/lib/server/engine/seats'
import { badRequest } from '@/lib/server/errors'

/**
 * Importing finished sessions from a file (a protocol's released trajectories, logs played elsewhere):
 * the plugin's `sessionImports` kind parses the file into records; the engine writes one imported run
 * (status done, `analysis.imported` says what it came from) on a dataset of the records' instances,
 * one ended session per record, and every record's messages, each accepted by the protocol's `apply`
 * in order before anything is written. All or nothing: a record the plugin refuses, a message `apply`
 * refuses, or a session that has not ended when its messages run out fails the whole import with the
 * file's line number, and nothing is stored (one transaction).
 */

/** One session of an imported file, as the plugin parsed it. */
export interface ImportedSession {
  /** The 1-based line (or record) of the file it came from: every error names it. */
  line: number
  /** Its instance (a row of the run's dataset); the session's snapshot is made from it as a run's are. */
  instance: { input: unknown; prediction?: string; explanation?: string; meta?: unknown }
  /** Who filled each seat (e.g. a program named `imported`): checked as a run's seats are. */
  seats: Seats
  /** The session's stored config (the protocol's config and the plugin's extras, as `sessionConfig` splits it). */
  config: unknown
  /** The messages in order, each with what is kept beside it (`payload`). */
  messages: Array<{ message: BaseMessage; meta?: Record<string, unknown> }>
}

/** A kind of file a plugin imports sessions from (unique across the plugins). */
export interface SessionImport<Options = any> {
  label: string
  description?: string
  /** The file input's `accept` (e.g. `.jsonl`). */
  accepts?: string
  /** The run's task (what its sessions run: a task kind). */
  task: string
  /** The fields the import form shows for `options` (text fields, as a dataset kind's). */
  fields?: DatasetField[]
  /** The kind's own options (besides name and file), checked before the file is read. */
  options?: z.ZodType<Options, any>
  /** The file's text → its sessions; throws a {@link SessionImportError} naming the line it refuses. */
  parse(text: string, options: Options): ImportedSession[] | Promise<ImportedSession[]>
}

export class SessionImportError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`)
    this.name = 'SessionImportError'
  }
}
// Thrown in a plugin's own bundle, caught in the engine's: `instanceof` must hold across the copies.
crossCopy(SessionImportError, 'SessionImportError')

export interface KnownSessionImport {
  kind: string
  plugin: ProtocolPlugin
  def: SessionImport
}

/** The session-import kinds the plugins declare; a kind two plugins declare is a programming error. */
export async function sessionImportKinds(): Promise<KnownSessionImport[]> {
  const out = new Map<string, KnownSessionImport>()
  for (const plugin of await allPlugins())
    for (const [kind, def] of Object.entries((await plugin.ops?.())?.sessionImports ?? {})) {
      const other = out.get(kind)
      if (other)
        throw new Error(
          `Session import kind "${kind}" is declared by both ${other.plugin.protocol.id} and ${plugin.protocol.id}.`,
        )
      out.set(kind, { kind, plugin, def })
    }
  return [...out.values()]
}

export async function sessionImportKind(kind: string): Promise<KnownSessionImport> {
  const all = await sessionImportKinds()
  const found = all.find((k) => k.kind === kind)
  if (found) return found
  const names = all.map((k) => k.kind).join(', ') || 'none'
  throw badRequest(`Unknown session import kind "${kind}": choose one of ${names}.`, {
    kind: [`Choose one of ${names}.`],
  })
}

export interface ImportSessionsInput {
  studyId: string
  kind: string
  /** The run's name (its dataset is named after it). */
  name: string
  fileName: string
  text: string
  options?: unknown
}

export interface ImportSessionsResult {
  runId: string
  datasetId: string
  sessions: number
  messages: number
}

const BATCH = 500

/**
 * Checks every record of the file through the protocol (config, instance, seats, each message's
 * `apply`, the end) and then writes the run in one transaction. Throws a 400 naming the file's line.
 * The caller checks the actor's access to the study.
 */
export async function importSessions(actor: Actor, input: ImportSessionsInput): Promise<ImportSessionsResult> {
  const { kind, plugin, def } = await sessionImportKind(input.kind)
  const protocol = plugin.protocol
  const fail = (line: number, message: string) => {
    const text = `${input.fileName}, line ${line}: ${message}`
    return badRequest(`Nothing was imported. ${text}`, { file: [text] })
  }
  const options = def.options ? def.options.safeParse(input.options ?? {}) : null
  if (options && !options.success) throw badRequest(`Invalid options: ${options.error.issues[0]?.message}`)
  let records: ImportedSession[]
  try {
    records = await def.parse(input.text, options?.data)
  } catch (err) {
    if (err instanceof SessionImportError) throw fail(err.line, err.message.replace(/^line \d+: /, ''))
    throw err
  }
  if (!records.length) throw badRequest(`Nothing was imported: ${input.fileName} has no sessions.`)

  // What a session runs on, as a run's sessions are made (prepare.ts): the plugin's snapshot, else the row.
  const snapshot =
    (await plugin.setup()).snapshot ??
    ((row: InstanceRow) => ({ input: row.input, prediction: row.prediction, explanation: row.explanation }))
  const datasetId = randomUUID()
  const runId = randomUUID()
  const checked = records.map((r, index) => {
    const seats = Seats.safeParse(r.seats)
    if (!seats.success) throw fail(r.line, `invalid seats: ${seats.error.issues[0]?.message}`)
    const row: InstanceRow = {
      id: randomUUID(),
      datasetId,
      index,
      input: r.instance.input,
      prediction: r.instance.prediction ?? '',
      explanation: r.instance.explanation ?? '',
      meta: r.instance.meta ?? {},
    }
    const snap = snapshot(row)
    let state: unknown
    try {
      const { config } = splitConfig(plugin, r.config, def.task)
      state = protocol.init(config, protocol.instance.parse(snap))
    } catch (err) {
      throw fail(r.line, `the session cannot start: ${err instanceof Error ? err.message : String(err)}`)
    }
    const messages = r.messages.map((m, k) => {
      try {
        state = protocol.apply(state, m.message)
      } catch (err) {
        throw fail(r.line, `message ${k + 1} refused: ${err instanceof Error ? err.message : String(err)}`)
      }
      const proj = plugin.project(m.message as never, m.meta, seats.data)
      return { body: m.message, meta: m.meta, proj }
    })
    const next = protocol.next(state)
    if (!next.done) throw fail(r.line, `the session has not ended after its ${messages.length} messages`)
    return { r, row, snap, seats: seats.data, messages }
  })

  let messageCount = 0
  await db.$transaction(
    async (tx) => {
      await tx.dataset.create({
        data: {
          id: datasetId,
          studyId: input.studyId,
          name: input.name,
          kind,
          source: `import:${input.fileName}`.slice(0, 500),
          status: 'ready',
          rowsDone: checked.length,
          rowsTotal: checked.length,
          createdById: actor.userId || null,
        },
      })
      for (let i = 0; i < checked.length; i += BATCH)
        await tx.instance.createMany({
          data: checked.slice(i, i + BATCH).map(({ row }) => ({
            id: row.id,
            datasetId,
            index: row.index,
            input: row.input as never,
            prediction: row.prediction,
            explanation: row.explanation,
            meta: row.meta as never,
          })),
        })
      await tx.run.create({
        data: {
          id: runId,
          studyId: input.studyId,
          name: input.name,
          protocol: protocol.id,
          task: def.task,
          datasetId,
          config: (checked[0]?.r.config ?? {}) as never,
          seats: (checked[0]?.seats ?? {}) as never,
          repetitions: 1,
          status: 'done',
          sessionsPlanned: checked.length,
          sessionsCreated: checked.length,
          analysis: { imported: { kind, file: input.fileName, sessions: checked.length } },
          createdById: actor.userId || null,
        },
      })
      const now = new Date()
      for (let i = 0; i < checked.length; i += BATCH) {
        const slice = checked.slice(i, i + BATCH)
        const ids = slice.map(() => randomUUID())
        await tx.protocolSession.createMany({
          data: slice.map((c, k) => ({
            id: ids[k] as string,
            studyId: input.studyId,
            runId,
            protocol: protocol.id,
            protocolVersion: protocol.version,
            config: c.r.config as never,
            task: def.task,
            instanceId: c.row.id,
            instance: c.snap as never,
            seats: c.seats as never,
            repetition: 1,
            position: c.row.index,
            key: `1:${c.row.index}`,
            status: 'done',
            stopReason: 'imported',
            doneAt: now,
            scheduledAt: now,
          })),
        })
        const rows = slice.flatMap((c, k) =>
          c.messages.map((m) => ({
            sessionId: ids[k] as string,
            seq: m.body.seq,
            sender: m.body.sender,
            receiver: m.proj.receiver,
            body: m.body as never,
            label: m.proj.label ?? null,
            value: m.proj.value ?? null,
            detail: m.proj.detail ?? null,
            payload: { ...(m.meta ?? {}), imported: { line: c.r.line } } as never,
          })),
        )
        messageCount += rows.length
        for (let j = 0; j < rows.length; j += BATCH * 4)
          await tx.protocolMessage.createMany({ data: rows.slice(j, j + BATCH * 4) })
      }
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'run.import',
        resourceType: 'run',
        resourceId: runId,
        studyId: input.studyId,
        after: { kind, file: input.fileName, sessions: checked.length, messages: messageCount },
      })
    },
    { timeout: 300_000, maxWait: 30_000 },
  )
  return { runId, datasetId, sessions: checked.length, messages: messageCount }
}
