import type { Prisma } from '@/lib/generated/prisma/client'
import type { Actor } from '@/lib/server/actor'
import { isRole } from '@/lib/server/auth/roles'
import { mayTakePart } from '@/lib/server/auth/study-roles'
import { db } from '@/lib/server/db'
import { AppError, badRequest } from '@/lib/server/errors'
import type { ProtocolPlugin, RunPlan } from '@/lib/server/engine/plugin'
import { pluginFor } from '@/lib/server/engine/plugins'
import { checkSessionCap, createSessions, plannedCount } from '@/lib/server/engine/prepare'
import { jobSettings } from '@/lib/server/jobs/queue'
import { humanSeats, llmRefs, pinModels, Seats, seatProblems } from '@/lib/server/engine/seats'
import { actorRef, writeAudit } from '@/lib/server/audit'

/**
 * Writing a run: the protocol plugin plans it (config, seats, which instances, repetitions, seat
 * variants); the engine checks every seat variant against the protocol's seat declarations, that the
 * people named are members of the study and that every connection is usable, refuses a run over
 * PARLEY_MAX_SESSIONS, resolves a seat's "the connection's default model" to the model it names now
 * (`pinModels`), and writes the run `preparing`; its sessions follow in batches
 * (`prepare.ts`), at once for a small run, by a job for a large one. With `start`, the run is
 * running (its first steps queued) as soon as the last session exists.
 */
export async function writeRun(
  actor: Actor,
  studyId: string,
  protocolId: string,
  plan: RunPlan,
  /** Refuses a connection the actor may not use; answers its default model. */
  checkConnection: (connectionId: string) => Promise<{ defaultModel: string }>,
  opts: WriteRunOptions = {},
): Promise<WrittenRun> {
  const [run] = await writeRuns(actor, studyId, protocolId, [plan], checkConnection, opts)
  return run as WrittenRun
}

/**
 * start: queue its first steps once ready; maxInFlight: its limit of sessions in flight (none by
 * default); distinctClaimants, fillFirst: how its claimable seats are claimed and offered.
 */
export interface WriteRunOptions {
  start?: boolean
  maxInFlight?: number
  distinctClaimants?: boolean
  fillFirst?: number
}

export interface WrittenRun {
  id: string
  name: string
  sessions: number
  preparing: boolean
}

/**
 * Writing the runs of one set-up together (a setup whose `plan` answers several plans, e.g. one run
 * per budget of a curve): every plan is checked as {@link writeRun} checks one before anything is
 * written, then every run row and its audit row are written in one transaction (all of them or none);
 * the sessions of each follow as a single run's do. Answers the runs in the plans' order.
 */
export async function writeRuns(
  actor: Actor,
  studyId: string,
  protocolId: string,
  plans: readonly RunPlan[],
  checkConnection: (connectionId: string) => Promise<{ defaultModel: string }>,
  opts: WriteRunOptions = {},
): Promise<WrittenRun[]> {
  if (!plans.length) throw badRequest('The set-up planned no run.')
  const plugin = await pluginFor(protocolId)
  const checked: Awaited<ReturnType<typeof checkPlan>>[] = []
  for (const [i, plan] of plans.entries()) {
    try {
      checked.push(await checkPlan(studyId, plugin, plan, checkConnection))
    } catch (err) {
      // Which of several runs a problem is in, named by the run.
      if (plans.length > 1 && err instanceof AppError)
        throw new AppError(err.status, `Run ${i + 1} (${plan.name}): ${err.message}`, err.fieldErrors, err.fieldsOnly)
      throw err
    }
  }
  const runs = await db.$transaction(async (tx) => {
    const out = []
    for (const { plan, planned, seatsOfRun } of checked) {
      const run = await tx.run.create({
        data: {
          studyId,
          name: plan.name,
          protocol: protocolId,
          task: plan.task,
          datasetId: plan.datasetId,
          config: plan.config as Prisma.InputJsonValue,
          seats: seatsOfRun as Prisma.InputJsonValue,
          repetitions: plan.repetitions,
          status: 'preparing',
          sessionsPlanned: planned,
          maxInFlight: opts.maxInFlight ?? null,
          distinctClaimants: opts.distinctClaimants ?? false,
          fillFirst: opts.fillFirst ?? null,
          ...(plan.analysis !== undefined ? { analysis: plan.analysis as Prisma.InputJsonValue } : {}),
          createdById: actor.userId || null,
        },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'run.create',
        resourceType: 'run',
        resourceId: run.id,
        studyId,
        after: {
          name: plan.name,
          protocol: protocolId,
          sessions: planned,
          ...(plans.length > 1 ? { createdTogether: plans.length } : {}),
          ...(plan.audit ?? {}),
        },
      })
      out.push(run)
    }
    return out
  })
  const written: WrittenRun[] = []
  for (const [i, run] of runs.entries()) {
    const { plan, planned, cycle } = checked[i] as (typeof checked)[number]
    const ready = await createSessions(
      {
        runId: run.id,
        studyId,
        protocol: protocolId,
        plan: {
          datasetId: plan.datasetId,
          ...(plan.instanceIds ? { instanceIds: plan.instanceIds } : {}),
          ...(plan.sample ? { sample: plan.sample } : {}),
          repetitions: plan.repetitions,
          shuffle: !!plan.shuffle,
          seatCycle: cycle,
          protocolVersion: plugin.protocol.version,
          task: plan.task,
          config: plan.config,
          statusWhenReady: opts.start ? 'running' : 'draft',
        },
      },
      planned,
    )
    written.push({ id: run.id, name: plan.name, sessions: planned, preparing: !ready })
  }
  return written
}

/** One plan checked (seats, people, connections, the session cap), before anything is written. */
async function checkPlan(
  studyId: string,
  plugin: ProtocolPlugin,
  plan: RunPlan,
  checkConnection: (connectionId: string) => Promise<{ defaultModel: string }>,
) {
  const { expireInSeconds } = jobSettings()
  const check = (seats: Seats, where: string) => {
    const problems = seatProblems(plugin.protocol, seats)
    const add = (seat: string, msg: string) => {
      problems[seat] = [...(problems[seat] ?? []), msg]
    }
    // The fills as every step will parse them (a time limit of 0 s, a program name too long …).
    const parsed = Seats.safeParse(seats)
    if (!parsed.success)
      for (const issue of parsed.error.issues) {
        const seat = String(issue.path[0] ?? 'seats')
        add(seat, `The ${seat} seat: ${issue.message}`)
      }
    // A step outliving its job's expiry would be run twice: a seat's time limit ends it before that.
    for (const [seat, fill] of Object.entries(seats))
      if (fill.kind !== 'human' && fill.timeoutSeconds !== undefined && fill.timeoutSeconds >= expireInSeconds)
        add(
          seat,
          `The ${seat} seat's time limit (${fill.timeoutSeconds} s) must be below the job expiry (${expireInSeconds} s, PARLEY_JOB_EXPIRE_SECONDS).`,
        )
    if (Object.keys(problems).length) throw badRequest(`${where}: ${Object.values(problems).flat()[0]}`, problems)
  }
  check(plan.seats, 'Seats')
  const variants = plan.seatCycle?.length ? plan.seatCycle : [plan.seats]
  const people = new Set<string>()
  const connections = new Set<string>()
  for (const [i, seats] of variants.entries()) {
    if (variants.length > 1) check(seats, `Seat variant ${i + 1}`)
    else check(seats, 'Seats')
    for (const h of humanSeats(seats)) if (h.userId) people.add(h.userId)
    for (const ref of llmRefs(seats)) connections.add(ref.connectionId)
  }
  for (const ref of llmRefs(plan.seats)) connections.add(ref.connectionId)
  const defaults = new Map<string, string>()
  for (const c of connections) defaults.set(c, (await checkConnection(c)).defaultModel)
  // Every seat names the model it runs (the connection's default, resolved now).
  const seatsOfRun = pinModels(plan.seats, defaults)
  const cycle = variants.map((seats) => pinModels(seats, defaults))
  if (people.size) {
    const members = await db.studyMember.findMany({
      where: { studyId, userId: { in: [...people] } },
      select: { role: true, user: { select: { role: true, email: true } } },
    })
    if (members.length !== people.size) throw badRequest('Every person in a seat must be a member of the study.')
    // A viewer of the study (or a viewer account) reads it and never sends a turn (study-roles.ts).
    const onlyReads = members.find((m) => !isRole(m.user.role) || !mayTakePart(m.user.role, m.role))
    if (onlyReads)
      throw badRequest(
        `${onlyReads.user.email} only reads this study (a viewer) and cannot fill a seat; change their study role first.`,
      )
  }
  const available = plan.instanceIds
    ? plan.instanceIds.length
    : await db.instance.count({ where: { datasetId: plan.datasetId } })
  const { instances } = plannedCount(plan, available)
  if (!instances) throw badRequest('The run has no sessions: the dataset is empty.')
  const planned = checkSessionCap(instances, plan.repetitions, plan.sample ? 'sample' : 'repetitions')
  return { plan, planned, seatsOfRun, cycle }
}
