import { z } from 'zod'
import {
  type Actor,
  AppError,
  db,
  hasScope,
  pageInput,
  pageOf,
  type Prisma,
  requireStudyAccess,
  skipTake,
} from '@/lib/server/sdk'
import { MAX_IMPORTED_SESSIONS } from '@/protocols/labelling/server/session-import'

/**
 * /studies/{id}/p/labelling/import-sessions?protocol=&run=&status=&page=&pageSize=: the study's
 * sessions, filtered by protocol, run and status, a page at a time, for the researcher to pick and
 * import as a transcript dataset (`labelling.import-sessions`). Staff only, as the import itself
 * (study write and `studies:update`).
 */

const SESSION_STATUSES = ['queued', 'waiting', 'running', 'awaiting', 'stalled', 'done', 'cancelled'] as const

export const SessionImportArgs = z.object({
  protocol: z.string().trim().max(40).optional(),
  run: z.string().trim().max(40).optional(),
  /** Default: finished sessions (what there is to judge); `any` lists every state. */
  status: z.enum([...SESSION_STATUSES, 'any']).default('done'),
  page: pageInput.page,
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
})
export type SessionImportArgs = z.output<typeof SessionImportArgs>

export interface SessionImportPageData {
  kind: 'import-sessions'
  args: SessionImportArgs
  protocols: string[]
  runs: Array<{ id: string; name: string; protocol: string }>
  sessions: Array<{
    id: string
    protocol: string
    runId: string | null
    runName: string | null
    task: string
    repetition: number
    position: number
    status: string
    messages: number
    updatedAt: string
  }>
  total: number
  page: number
  pageSize: number
  pageCount: number
  max: number
}

export async function sessionImportPage(
  actor: Actor,
  studyId: string,
  raw: Record<string, string>,
): Promise<SessionImportPageData> {
  await requireStudyAccess(db, actor, studyId, 'write')
  if (!hasScope(actor.role, 'studies:update'))
    throw new AppError(403, 'Only researchers and admins import sessions as a dataset.')
  const parsed = SessionImportArgs.safeParse(raw)
  if (!parsed.success) throw new AppError(400, parsed.error.issues[0]?.message ?? 'Invalid page parameters.')
  const args = parsed.data
  const [protocols, runs] = await Promise.all([
    db.protocolSession.findMany({ where: { studyId }, distinct: ['protocol'], select: { protocol: true } }),
    db.run.findMany({
      where: { studyId, ...(args.protocol ? { protocol: args.protocol } : {}) },
      select: { id: true, name: true, protocol: true },
      orderBy: { createdAt: 'desc' },
      take: 500,
    }),
  ])
  if (args.run && !runs.some((r) => r.id === args.run))
    throw new AppError(400, 'No such run in this study (for this protocol).')
  const where: Prisma.ProtocolSessionWhereInput = {
    studyId,
    ...(args.protocol ? { protocol: args.protocol } : {}),
    ...(args.run ? { runId: args.run } : {}),
    ...(args.status === 'any' ? {} : { status: args.status }),
  }
  const [total, rows] = await Promise.all([
    db.protocolSession.count({ where }),
    db.protocolSession.findMany({
      where,
      orderBy: [{ updatedAt: 'desc' }, { id: 'asc' }],
      ...skipTake(args.page, args.pageSize),
      select: {
        id: true,
        protocol: true,
        runId: true,
        task: true,
        repetition: true,
        position: true,
        status: true,
        updatedAt: true,
        run: { select: { name: true } },
        _count: { select: { messages: true } },
      },
    }),
  ])
  const p = pageOf(rows, total, args.page, args.pageSize)
  return {
    kind: 'import-sessions',
    args,
    protocols: protocols.map((x) => x.protocol).sort(),
    runs,
    sessions: rows.map((s) => ({
      id: s.id,
      protocol: s.protocol,
      runId: s.runId,
      runName: s.run?.name ?? null,
      task: s.task,
      repetition: s.repetition,
      position: s.position,
      status: s.status,
      messages: s._count.messages,
      updatedAt: s.updatedAt.toISOString(),
    })),
    total,
    page: p.page,
    pageSize: p.pageSize,
    pageCount: p.pageCount,
    max: MAX_IMPORTED_SESSIONS,
  }
}
