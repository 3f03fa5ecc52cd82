import { z } from 'zod'
import {
  type Actor,
  type PluginEndpoint,
  actorRef,
  badRequest,
  db,
  defineOperation,
  id,
  loadSessionTranscripts,
  type Prisma,
  requireStudyAccess,
  writeAudit,
} from '@/lib/server/sdk'
import { TranscriptItem } from '@/protocols/labelling/core'

/** At most this many sessions become one dataset. */
export const MAX_IMPORTED_SESSIONS = 5_000

export const ImportSessionsInput = z
  .object({
    studyId: id,
    name: z.string().trim().min(1, 'Name the dataset.').max(200),
    /** Runs of the study: their finished sessions. */
    runIds: z.array(id).max(100).default([]),
    /** Sessions of the study, one by one (finished or not). */
    sessionIds: z.array(id).max(MAX_IMPORTED_SESSIONS).default([]),
  })
  .refine((x) => x.runIds.length + x.sessionIds.length > 0, {
    message: 'Choose runs or sessions to import.',
    path: ['runIds'],
  })

/**
 * A selection of Parley sessions of a study as a `labelling-items` dataset, one transcript item per
 * session (the protocol's own rendering, else the generic one), so people can judge what happened in
 * a protocol. Runs give their finished sessions. All or nothing: a session of another study, a
 * selection over MAX_IMPORTED_SESSIONS, or a session without messages stores nothing. Audited.
 */
export async function importSessionsAsItems(actor: Actor, raw: z.input<typeof ImportSessionsInput>) {
  const input = ImportSessionsInput.parse(raw)
  await requireStudyAccess(db, actor, input.studyId, 'write')
  const fromRuns = input.runIds.length
    ? await db.protocolSession.findMany({
        where: { runId: { in: input.runIds }, status: 'done' },
        orderBy: [{ runId: 'asc' }, { repetition: 'asc' }, { position: 'asc' }, { id: 'asc' }],
        select: { id: true, studyId: true },
        take: MAX_IMPORTED_SESSIONS + 1,
      })
    : []
  const runs = await db.run.findMany({ where: { id: { in: input.runIds } }, select: { id: true, studyId: true } })
  const foreignRun = input.runIds.find((r) => runs.find((x) => x.id === r)?.studyId !== input.studyId)
  if (foreignRun) throw badRequest(`The run ${foreignRun} is not a run of this study.`)
  const picked = await db.protocolSession.findMany({
    where: { id: { in: input.sessionIds } },
    select: { id: true, studyId: true },
  })
  const foreign = input.sessionIds.find((s) => picked.find((x) => x.id === s)?.studyId !== input.studyId)
  if (foreign) throw badRequest(`The session ${foreign} is not a session of this study.`)
  const ids = [...new Set([...fromRuns.map((s) => s.id), ...input.sessionIds])]
  if (ids.length === 0) throw badRequest('The runs chosen have no finished sessions.')
  if (ids.length > MAX_IMPORTED_SESSIONS)
    throw badRequest(`At most ${MAX_IMPORTED_SESSIONS.toLocaleString('en')} sessions at once (${ids.length}+ chosen).`)
  const transcripts = await loadSessionTranscripts(ids)
  const items = transcripts.map((t) => {
    const parsed = TranscriptItem.safeParse({ kind: 'transcript', id: t.sessionId, ...t })
    if (!parsed.success)
      throw badRequest(`The session ${t.sessionId} cannot be a transcript: ${parsed.error.issues[0]?.message}`)
    return parsed.data
  })
  return db.$transaction(async (tx) => {
    const ds = await tx.dataset.create({
      data: {
        studyId: input.studyId,
        name: input.name,
        kind: 'labelling-items',
        source: 'sessions',
        instances: {
          create: items.map((item, index) => ({
            index,
            input: item as unknown as Prisma.InputJsonValue,
            prediction: '',
            explanation: '',
            meta: { itemId: item.id, kind: item.kind, protocol: item.protocol },
          })),
        },
      },
      select: { id: true, name: true },
    })
    await writeAudit(tx, {
      actor: actorRef(actor),
      action: 'dataset.import-sessions',
      resourceType: 'dataset',
      resourceId: ds.id,
      studyId: input.studyId,
      after: { name: ds.name, items: items.length, runIds: input.runIds, sessions: input.sessionIds.length },
    })
    return { datasetId: ds.id, items: items.length }
  })
}

/** The operation (staff who may change the study's datasets). */
export const importSessions = defineOperation({
  name: 'labelling.import-sessions',
  scope: 'studies:update',
  input: ImportSessionsInput,
  run: (actor, input) => importSessionsAsItems(actor, input),
})

/** POST /api/v1/labelling/session-imports: the operation over REST (the study in the body). */
export const importSessionsEndpoint: PluginEndpoint = {
  method: 'POST',
  path: '/labelling/session-imports',
  summary:
    'A selection of the study’s sessions (runs’ finished sessions, or sessions by id; at most 5,000) as a labelling-items dataset of transcripts',
  op: importSessions,
  source: 'body',
  status: 201,
  output: z.object({ datasetId: z.string(), items: z.number().int() }),
  errors: { 404: 'No such study (or not yours)' },
}
