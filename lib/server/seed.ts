import type { Role } from '@/lib/server/auth/roles'
import type { Actor } from '@/lib/server/actor'
import { db, sql } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import type { DemoSeed, PluginSeed } from '@/lib/server/engine/plugin'
import { DEMO_CONNECTION_ID } from '@/lib/server/llm/runtime'
import { execute, executeOrThrow } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { claimSeat, getSession, submitTurn } from '@/lib/server/services/sessions'
import { seedOrder } from '@/lib/server/engine/seed-order'
import { awaitDatasetImport, startDatasetImport } from '@/lib/server/services/datasets'
import { runDatasetImport } from '@/lib/server/services/dataset-import'
import { allPlugins } from '@/lib/server/engine/plugins'
import { creatorStudyRole } from '@/lib/server/auth/study-roles'
import { writeAudit } from '@/lib/server/audit'
import { insertUser } from '@/lib/server/services/users'
import { ensureDemoConnection } from '@/lib/server/llm/runtime'

export const DEMO_PASSWORD = 'parley-demo'

export const DEMO_USERS: Array<{ email: string; name: string; role: Role }> = [
  { email: 'admin@parley.local', name: 'Ada Admin', role: 'admin' },
  { email: 'researcher@parley.local', name: 'Rosalind Researcher', role: 'researcher' },
  { email: 'expert@parley.local', name: 'Elias Expert (chemist)', role: 'expert' },
  { email: 'expert2@parley.local', name: 'Eva Expert (radiologist)', role: 'expert' },
  { email: 'annotator@parley.local', name: 'Anna Annotator', role: 'annotator' },
  { email: 'viewer@parley.local', name: 'Victor Viewer', role: 'viewer' },
]

export const DEMO_STUDY_ID = 'demo-study'
const DEMO_OWNER = 'researcher@parley.local'

/**
 * The demo data that ships with Parley, written by us: one user per role, a demo study, and what each
 * protocol's plugin seeds into it (datasets, finished runs played by the offline demo model, sessions
 * waiting for the demo people). Deterministic and idempotent: running it again changes nothing. Two
 * processes seeding at once take turns (an advisory lock).
 */
export async function seedDemo(): Promise<{ created: string[] }> {
  const lock = await sql().connect()
  try {
    await lock.query('SELECT pg_advisory_lock(4242003)')
    return await seedUnderLock()
  } finally {
    await lock.query('SELECT pg_advisory_unlock(4242003)').catch(() => {})
    lock.release()
  }
}

async function seedUnderLock(): Promise<{ created: string[] }> {
  const created: string[] = []
  const ids: Record<string, string> = {}
  await db.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(4242002)`
      for (const u of DEMO_USERS) {
        const existing = await tx.user.findUnique({ where: { email: u.email } })
        if (existing) {
          ids[u.email] = existing.id
          continue
        }
        const user = await insertUser(tx, { ...u, password: DEMO_PASSWORD })
        ids[u.email] = user.id
        created.push(`user ${u.email}`)
      }
      const study = await tx.study.findUnique({ where: { id: DEMO_STUDY_ID } })
      if (!study) {
        await tx.study.create({
          data: {
            id: DEMO_STUDY_ID,
            name: 'Demo: explaining retrosynthesis and X-ray reads',
            description:
              'A demonstration study written for Parley: experts review what a model predicts and why (PXP), models debate diagnoses (EVINCE), models and people play the scorekeeping game; researchers watch the numbers.',
            guidelines:
              'Judge the prediction first, then the explanation. Say why you disagree in one or two sentences: the model reads your reasons.',
            createdById: ids[DEMO_OWNER],
          },
        })
        created.push(`study ${DEMO_STUDY_ID}`)
      }
      for (const u of DEMO_USERS) {
        if (u.role === 'admin') continue
        await tx.studyMember.upsert({
          where: { studyId_userId: { studyId: DEMO_STUDY_ID, userId: ids[u.email] as string } },
          // The researcher created the demo study, so they are its study admin (as createStudy makes them).
          create: {
            studyId: DEMO_STUDY_ID,
            userId: ids[u.email] as string,
            role: u.email === DEMO_OWNER ? creatorStudyRole(u.role) : u.role,
          },
          update: {},
        })
      }
      if (created.length) {
        await writeAudit(tx, {
          actor: { userId: null, email: null, via: 'seed' },
          action: 'seed.demo',
          resourceType: 'system',
          resourceId: 'seed',
          after: { created },
        })
      }
    },
    { timeout: 60_000 },
  ) // hashing the demo passwords is slow on a busy machine
  await ensureDemoConnection()
  const people: Record<string, Actor> = {}
  for (const u of DEMO_USERS)
    people[u.email] = { userId: ids[u.email] as string, email: u.email, name: u.name, role: u.role, via: 'seed' }
  const seed = demoSeed(DEMO_STUDY_ID, people['researcher@parley.local'] as Actor, people)
  const seeds: Array<{ id: string; after?: readonly string[]; seed: PluginSeed }> = []
  for (const plugin of await allPlugins())
    if (plugin.seed) {
      const s = await plugin.seed()
      seeds.push({ id: plugin.protocol.id, after: s.after, seed: s })
    }
  // A seed that uses another protocol's demo runs (`after`) runs once those exist.
  for (const { id, seed: s } of seedOrder(seeds)) {
    const made = await s.seedDemo(seed)
    created.push(...made.map((m) => `${id}: ${m}`))
  }
  return { created }
}

/**
 * The helpers every plugin seed gets: a run by name (created once), playing it with the demo model,
 * importing a dataset, and a demo person's turn through the services a browser uses (`actAs`).
 */
export function demoSeed(studyId: string, researcher: Actor, people: Record<string, Actor>): DemoSeed {
  return {
    studyId,
    researcher,
    people,
    demoConnectionId: DEMO_CONNECTION_ID,
    async run(protocol, input) {
      const name = String(input.name)
      const existing = await db.run.findFirst({ where: { studyId, name, protocol } })
      if (existing) return { id: existing.id, created: false }
      const r = await executeOrThrow(createRun, researcher, { studyId, protocol, ...input })
      return { id: r.id, created: true }
    },
    async play(runId) {
      await runHeadless(runId, { concurrency: 4 })
    },
    async importDataset(input) {
      const { job } = await startDatasetImport(researcher, { studyId, ...input })
      // This process is a worker like any other: it runs the job now (a worker that picks the job up
      // too finds the dataset no longer importing, or waits on the dataset's lock).
      await runDatasetImport(job).catch(() => {})
      const r = await executeOrThrow(awaitDatasetImport, researcher, { datasetId: job.datasetId, waitMs: 60_000 })
      if (r.status !== 'ready') throw new Error(`The demo dataset "${input.name}" is still importing.`)
      return job.datasetId
    },
    async actAs(email, sessionId, input) {
      const person = people[email]
      if (!person) throw new Error(`There is no demo person ${email}.`)
      let view = await execute(getSession, person, { sessionId })
      if (!(view.ok && view.data.yourTurn)) {
        // Not their turn yet: claim the seat the session awaits (before its first step, its one
        // claimable seat), as My work's Claim does.
        const s = await db.protocolSession.findUnique({
          where: { id: sessionId },
          select: { awaitingSeat: true, people: { where: { claimable: true }, select: { seat: true } } },
        })
        const seat = s?.awaitingSeat ?? (s?.people.length === 1 ? s.people[0]?.seat : undefined)
        if (!seat) throw new Error(`The session ${sessionId} awaits no person.`)
        await executeOrThrow(claimSeat, person, { sessionId, seat })
        view = await execute(getSession, person, { sessionId })
      }
      if (!view.ok || !view.data.ask) throw new Error(`The session ${sessionId} asks ${email} nothing.`)
      const sent = await executeOrThrow(submitTurn, person, { ...input, sessionId, seq: view.data.ask.j })
      return { seq: sent.seq, done: sent.done }
    },
  }
}
