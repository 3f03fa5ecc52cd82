import type { Prisma } from '@/lib/generated/prisma/client'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { badRequest } from '@/lib/server/errors'
import type { RunPlan } from '@/lib/server/engine/plugin'
import { pluginFor } from '@/lib/server/engine/plugins'
import { humanSeats, llmRefs, type Seats, seatProblems } from '@/lib/server/engine/seats'
import { actorRef, writeAudit } from '@/lib/server/services/audit'

/**
 * Writing a run: the protocol plugin plans it (config, seats, one session per instance and
 * repetition); the engine checks every session's seats against the protocol's seat declarations,
 * that the people named are members of the study, and writes the run, its sessions and the people
 * in their human seats. Sessions of a chain (carry-over) after the first wait for their predecessor.
 */
export async function writeRun(
  actor: Actor,
  studyId: string,
  protocolId: string,
  plan: RunPlan,
  checkConnection: (connectionId: string) => Promise<unknown>,
): Promise<{ id: string; sessions: number }> {
  const plugin = await pluginFor(protocolId)
  const check = (seats: Seats, where: string) => {
    const problems = seatProblems(plugin.protocol, seats)
    if (Object.keys(problems).length) throw badRequest(`${where}: ${Object.values(problems).flat()[0]}`, problems)
  }
  check(plan.seats, 'Seats')
  const people = new Set<string>()
  const connections = new Set<string>()
  for (const s of plan.sessions) {
    check(s.seats, `Session ${s.repetition}/${s.position + 1}`)
    for (const h of humanSeats(s.seats)) if (h.userId) people.add(h.userId)
    for (const ref of llmRefs(s.seats)) connections.add(ref.connectionId)
  }
  for (const ref of llmRefs(plan.seats)) connections.add(ref.connectionId)
  for (const c of connections) await checkConnection(c)
  if (people.size) {
    const members = await db.studyMember.count({ where: { studyId, userId: { in: [...people] } } })
    if (members !== people.size) throw badRequest('Every person in a seat must be a member of the study.')
  }
  if (!plan.sessions.length) throw badRequest('The run has no sessions: the dataset is empty.')
  return db.$transaction(
    async (tx) => {
      const run = await tx.experiment.create({
        data: {
          studyId,
          name: plan.name,
          protocol: protocolId,
          task: plan.task,
          datasetId: plan.datasetId,
          config: plan.config as Prisma.InputJsonValue,
          seats: plan.seats as Prisma.InputJsonValue,
          repetitions: plan.repetitions,
          carryOver: plan.chained,
          ...(plan.analysis !== undefined ? { analysis: plan.analysis as Prisma.InputJsonValue } : {}),
          createdById: actor.userId || null,
        },
      })
      const firstOfChain = new Map<number, number>()
      if (plan.chained)
        for (const s of plan.sessions)
          firstOfChain.set(s.repetition, Math.min(firstOfChain.get(s.repetition) ?? s.position, s.position))
      const BATCH = 1000
      for (let i = 0; i < plan.sessions.length; i += BATCH) {
        const batch = plan.sessions.slice(i, i + BATCH)
        const rows = await tx.protocolSession.createManyAndReturn({
          data: batch.map((s) => ({
            studyId,
            experimentId: run.id,
            protocol: protocolId,
            protocolVersion: plugin.protocol.version,
            config: plan.config as Prisma.InputJsonValue,
            task: plan.task,
            instanceId: s.instanceId,
            instance: s.instance as Prisma.InputJsonValue,
            seats: s.seats as Prisma.InputJsonValue,
            repetition: s.repetition,
            position: s.position,
            status: plan.chained && firstOfChain.get(s.repetition) !== s.position ? 'waiting' : 'queued',
          })),
          select: { id: true },
        })
        const seatRows = batch.flatMap((s, k) =>
          humanSeats(s.seats).map((h) => ({
            sessionId: (rows[k] as { id: string }).id,
            seat: h.seat,
            userId: h.userId,
            claimable: h.claimable,
          })),
        )
        if (seatRows.length) await tx.sessionSeat.createMany({ data: seatRows })
      }
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'run.create',
        resourceType: 'experiment',
        resourceId: run.id,
        studyId,
        after: { name: plan.name, protocol: protocolId, sessions: plan.sessions.length, ...(plan.audit ?? {}) },
      })
      return { id: run.id, sessions: plan.sessions.length }
    },
    { timeout: 120_000 },
  )
}

/** A deterministic shuffle (mulberry32) so every repetition's instance order is reproducible. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let a = seed >>> 0
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}
