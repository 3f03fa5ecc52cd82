import { z } from 'zod'
import { PXP_PROTOCOL_VERSION, pxpConfig } from '@/lib/protocols/pxp'
import { TaskTemplate } from '@/lib/tasks/generic'
import { db } from '@/lib/server/db'
import { badRequest, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { runPxpSession, type StepResult } from '@/lib/server/runner/pxp'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { usableConnection } from '@/lib/server/services/connections'
import { id, requireStudyAccess } from '@/lib/server/services/studies'
import { boolParam } from '@/lib/server/pagination'
import { assertImported } from '@/lib/server/services/datasets'
import { checkSessionCap, createSessions } from '@/lib/server/services/sessions'

const llmRef = z.object({ connectionId: id, model: z.string().trim().max(200).optional() })

export { shuffled } from '@/lib/server/services/sessions'

export const createPxpExperiment = defineOperation({
  name: 'experiments.create-pxp',
  scope: 'studies:update',
  input: z.object({
    studyId: id,
    name: z.string({ error: 'Name the experiment.' }).trim().min(1, 'Name the experiment.').max(120),
    datasetId: id,
    /** The task template of a generic dataset (its spec is copied into every session). */
    templateId: id.optional(),
    /** Use the first `sample` instances of the dataset (all when absent). */
    sample: z.coerce.number().int().min(1).max(100_000).optional(),
    repetitions: z.coerce.number().int().min(1).max(50).default(1),
    n: z.coerce.number().int().min(1).max(100).default(10),
    k: z.coerce.number().int().min(1).max(100).default(3),
    generator: llmRef.extend({
      temperature: z.coerce.number().min(0).max(2).optional(),
      vision: z.boolean().default(true),
    }),
    checker: llmRef,
    carryOver: boolParam.default(true),
    /** Shuffle the instance order of each repetition (seeded by the repetition number). */
    shuffle: boolParam.default(false),
    /**
     * Who fills the tester seat h: the dataset's ground truth (proxy), assigned experts (round robin)
     * or another LLM (`testerGenerator`, the machine's generator when absent).
     */
    tester: z.enum(['proxy', 'expert', 'llm']).default('proxy'),
    /** Who fills the machine seat m: the LLM generator, or assigned experts (the protocol is symmetric). */
    machine: z.enum(['llm', 'expert']).default('llm'),
    testerGenerator: llmRef
      .extend({ temperature: z.coerce.number().min(0).max(2).optional(), vision: z.boolean().default(true) })
      .optional(),
    expertIds: z.array(id).max(100).default([]),
  }),
  async run(actor, input) {
    await requireStudyAccess(db, actor, input.studyId, 'write')
    const dataset = await db.dataset.findFirst({ where: { id: input.datasetId, studyId: input.studyId } })
    if (!dataset) throw notFound('Dataset')
    assertImported(dataset)
    let template: TaskTemplate | undefined
    if (dataset.kind === 'generic') {
      if (!input.templateId)
        throw badRequest('A generic dataset needs a task template.', { templateId: ['Choose a task template.'] })
      const t = await db.taskTemplate.findFirst({ where: { id: input.templateId, studyId: input.studyId } })
      if (!t) throw notFound('Template')
      template = TaskTemplate.parse(t.spec)
    } else if (dataset.kind !== 'rad' && dataset.kind !== 'drug') {
      throw badRequest(`PXP experiments do not run on ${dataset.kind} datasets.`)
    }
    if (input.machine === 'expert' && input.tester === 'expert')
      throw badRequest('One seat must be filled by an LLM or the proxy: experts cannot sit on both sides.', {
        tester: ['Choose the proxy or an LLM tester when experts play the machine.'],
      })
    for (const ref of [input.generator, input.checker, ...(input.testerGenerator ? [input.testerGenerator] : [])])
      await usableConnection(actor, ref.connectionId)
    // The protocol reads n and k; a generic task's template travels with them (a snapshot, so a
    // later template never changes a running experiment).
    const config = { ...pxpConfig.parse({ n: input.n, k: input.k }), ...(template ? { template } : {}) }
    const available = await db.instance.count({ where: { datasetId: dataset.id } })
    const instances = Math.min(input.sample ?? available, available)
    const planned = checkSessionCap(instances, input.repetitions, input.sample ? 'sample' : 'repetitions')
    const withExperts = input.tester === 'expert' || input.machine === 'expert'
    if (withExperts) {
      if (!input.expertIds.length)
        throw badRequest('Assign at least one expert to fill the seat.', { expertIds: ['Choose at least one expert.'] })
      const members = await db.studyMember.count({ where: { studyId: input.studyId, userId: { in: input.expertIds } } })
      if (members !== new Set(input.expertIds).size)
        throw badRequest('Every assigned expert must be a member of the study.')
    }
    const expert = (i: number) => ({ kind: 'human', userId: input.expertIds[i % input.expertIds.length] as string })
    const seatsFor = (i: number) => ({
      m: input.machine === 'expert' ? expert(i) : { kind: 'llm', generator: input.generator, checker: input.checker },
      h:
        input.tester === 'expert'
          ? expert(i)
          : input.tester === 'llm'
            ? { kind: 'llm', generator: input.testerGenerator ?? input.generator, checker: input.checker }
            : { kind: 'proxy', checker: input.checker },
    })
    const seats = seatsFor(0)
    // Experts share the sessions round robin: session i gets expert i mod (number of experts).
    const variants = Array.from({ length: withExperts ? input.expertIds.length : 1 }, (_, i) => {
      const s = seatsFor(i)
      return { seats: s, assigneeId: [s.m, s.h].map((x) => (x as { userId?: string }).userId).find(Boolean) ?? null }
    })
    const experiment = await db.$transaction(async (tx) => {
      const e = await tx.experiment.create({
        data: {
          studyId: input.studyId,
          name: input.name,
          protocol: 'pxp',
          task: dataset.kind,
          datasetId: dataset.id,
          config,
          seats,
          repetitions: input.repetitions,
          carryOver: input.carryOver,
          status: 'preparing',
          sessionsPlanned: planned,
          createdById: actor.userId || null,
        },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'experiment.create',
        resourceType: 'experiment',
        resourceId: e.id,
        studyId: input.studyId,
        after: { name: input.name, datasetId: dataset.id, repetitions: input.repetitions, sessions: planned, config },
      })
      return e
    })
    const ready = await createSessions(
      {
        experimentId: experiment.id,
        studyId: input.studyId,
        plan: {
          datasetId: dataset.id,
          ...(input.sample ? { sample: input.sample } : {}),
          repetitions: input.repetitions,
          shuffle: input.shuffle,
          seats: variants,
          protocol: 'pxp',
          protocolVersion: PXP_PROTOCOL_VERSION,
          task: dataset.kind,
          config,
          snapshotExtra: { datasetId: dataset.id },
          statusWhenReady: 'draft',
        },
      },
      planned,
    )
    return { id: experiment.id, sessions: planned, preparing: !ready }
  },
})

export interface RunProgress {
  total: number
  done: number
  stalled: number
  awaiting: number
}

/**
 * Run an experiment's sessions in this process until each is done, stalled or awaiting a person.
 * With carry-over, a repetition's sessions run one after another in their recorded order (the
 * context of each depends on the ones before); repetitions run side by side, up to `concurrency`.
 * Without carry-over every session is independent. Safe to re-run: finished sessions are skipped,
 * stalled ones are tried again from where they stopped.
 */
export async function runExperiment(
  experimentId: string,
  opts: { concurrency?: number; onProgress?: (p: RunProgress) => void } = {},
): Promise<RunProgress> {
  const experiment = await db.experiment.findUniqueOrThrow({ where: { id: experimentId } })
  if (experiment.status === 'preparing')
    throw new Error('The experiment is still creating its sessions; run it once they are all there.')
  const sessions = await db.protocolSession.findMany({
    where: { experimentId, status: { not: 'done' } },
    orderBy: [{ repetition: 'asc' }, { position: 'asc' }],
    select: { id: true, repetition: true },
  })
  const total = await db.protocolSession.count({ where: { experimentId } })
  const progress: RunProgress = { total, done: total - sessions.length, stalled: 0, awaiting: 0 }
  await db.experiment.update({ where: { id: experimentId }, data: { status: 'running' } })
  const chains: string[][] = experiment.carryOver
    ? [...new Set(sessions.map((s) => s.repetition))].map((r) =>
        sessions.filter((s) => s.repetition === r).map((s) => s.id),
      )
    : sessions.map((s) => [s.id])
  const count = (r: StepResult) => {
    if (r.kind === 'done') progress.done++
    else if (r.kind === 'stalled') progress.stalled++
    else if (r.kind === 'awaiting') progress.awaiting++
    opts.onProgress?.({ ...progress })
  }
  let next = 0
  const worker = async () => {
    while (next < chains.length) {
      const chain = chains[next++] as string[]
      for (const sessionId of chain) {
        const r = await runPxpSession(sessionId)
        count(r)
        // A carried-over chain cannot skip a session: the next one's context depends on it.
        if (experiment.carryOver && r.kind !== 'done') break
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, worker))
  const remaining = await db.protocolSession.count({ where: { experimentId, status: { not: 'done' } } })
  await db.experiment.update({ where: { id: experimentId }, data: { status: remaining ? 'running' : 'done' } })
  return progress
}

/** M rows of an experiment as the JSONL `parley pxp stats` reads, in a stable order. */
export async function* exportExperimentMessages(experimentId: string): AsyncGenerator<string> {
  const pageSize = 1000
  let cursor: string | undefined
  for (;;) {
    const sessions = await db.protocolSession.findMany({
      where: { experimentId },
      orderBy: { id: 'asc' },
      take: pageSize,
      ...(cursor ? { skip: 1, cursor: { id: cursor } } : {}),
      select: { id: true, repetition: true, position: true, messages: { orderBy: { seq: 'asc' } } },
    })
    if (!sessions.length) return
    for (const s of sessions) {
      for (const m of s.messages) {
        yield JSON.stringify({
          repetition: s.repetition,
          session: s.id,
          position: s.position,
          j: m.seq,
          sender: m.sender,
          receiver: m.receiver,
          tag: m.tag,
          prediction: m.prediction,
          explanation: m.explanation,
        })
      }
    }
    cursor = sessions.at(-1)?.id
  }
}
