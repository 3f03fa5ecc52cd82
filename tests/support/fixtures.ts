import { randomUUID } from 'node:crypto'
import { hashPassword } from 'better-auth/crypto'
import type { Actor } from '@/lib/server/actor'
import type { Role } from '@/lib/server/auth/roles'
import { creatorStudyRole, type StudyRole } from '@/lib/server/auth/study-roles'
import { db } from '@/lib/server/db'
import { insertUser } from '@/lib/server/services/users'

/** A fresh user of the given role (unique email per call) and the Actor that acts as them. */
export async function makeUser(role: Role, password = 'correct horse battery'): Promise<Actor> {
  const email = `${role}-${randomUUID().slice(0, 8)}@test.parley`
  const user = await db.$transaction((tx) => insertUser(tx, { email, name: `${role} tester`, role, password }))
  return { userId: user.id, email: user.email, name: user.name, role, via: 'session' }
}

const hashes = new Map<string, Promise<string>>()

/**
 * Several fresh users at once (one transaction of two statements), for tests that make hundreds: the
 * rows insertUser writes (a verified user, a credential account), but every user made with the same
 * password shares one hash, computed once per password (scrypt is slow on purpose: hashing was most of
 * the time of a test that made three users per case). Sign-in and password checks work as for makeUser.
 */
export async function makeUsers<const R extends readonly Role[]>(
  roles: R,
  password = 'correct horse battery',
): Promise<{ [K in keyof R]: Actor }> {
  let hash = hashes.get(password)
  if (!hash) {
    hash = hashPassword(password)
    hashes.set(password, hash)
  }
  const hashed = await hash
  const users = roles.map((role) => ({
    id: randomUUID(),
    email: `${role}-${randomUUID().slice(0, 8)}@test.parley`,
    name: `${role} tester`,
    role,
    emailVerified: true,
  }))
  await db.$transaction([
    db.user.createMany({ data: users }),
    db.account.createMany({
      data: users.map((u) => ({
        id: randomUUID(),
        accountId: u.id,
        providerId: 'credential',
        userId: u.id,
        password: hashed,
      })),
    }),
  ])
  return users.map((u) => ({ userId: u.id, email: u.email, name: u.name, role: u.role, via: 'session' })) as {
    [K in keyof R]: Actor
  }
}

/**
 * A study created by `owner`, who becomes its member as createStudy makes them (a researcher or admin
 * as study admin); each other member gets their `role` as study role (pass `{ ...actor, role }` for
 * another study role than the account's).
 */
export async function makeStudy(owner: Actor, members: Array<{ userId: string; role: StudyRole }> = []) {
  return db.study.create({
    data: {
      name: `study ${randomUUID().slice(0, 6)}`,
      createdById: owner.userId,
      members: {
        create: [
          { userId: owner.userId, role: creatorStudyRole(owner.role) },
          ...members.map((m) => ({ userId: m.userId, role: m.role })),
        ],
      },
    },
  })
}

/**
 * A session without a run (the runner's tests): the row, and the people of its human seats. Seats are
 * the engine's SeatFill shape (lib/server/engine/seats.ts).
 */
export async function makeSession(
  studyId: string,
  s: {
    protocol: string
    config: object
    task: string
    instance: object
    seats: Record<string, Record<string, unknown>>
  },
) {
  const session = await db.protocolSession.create({
    data: {
      studyId,
      protocol: s.protocol,
      protocolVersion: '1',
      config: s.config,
      task: s.task,
      instance: s.instance,
      seats: s.seats as object,
    },
  })
  const people = Object.entries(s.seats).filter(([, f]) => f.kind === 'human')
  if (people.length)
    await db.sessionSeat.createMany({
      data: people.map(([seat, f]) => ({
        sessionId: session.id,
        seat,
        userId: (f.userId as string | undefined) ?? null,
        claimable: f.claimable === true,
      })),
    })
  return session
}

/**
 * What the session page shows an expert: a PXP DRUG session (n = 10, k = 3, machine without a
 * connection) in `studyId` whose machine opened with `first` (message 1, INIT) and that now awaits
 * `expertUserId` in seat h.
 */
export async function makeAwaitingPxpSession(
  studyId: string,
  expertUserId: string,
  first: { prediction: string; explanation: string } = { prediction: 'CCO', explanation: 'A reduction.' },
) {
  const s = await makeSession(studyId, {
    protocol: 'pxp',
    config: { n: 10, k: 3 },
    task: 'drug',
    instance: { input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'Fischer esterification.' },
    seats: {
      m: { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } },
      h: { kind: 'human', userId: expertUserId },
    },
  })
  await db.protocolSession.update({ where: { id: s.id }, data: { status: 'awaiting', awaitingSeat: 'h' } })
  await machineOpens(s.id, first, { raw: `Prediction: ${first.prediction}` })
  return s
}

/** A PXP session's message 1: the machine (seat m) opens with `first` (INIT) to the person in seat h. */
export async function machineOpens(
  sessionId: string,
  first: { prediction: string; explanation: string },
  payload?: { raw: string },
) {
  await db.protocolMessage.create({
    data: {
      sessionId,
      seq: 1,
      sender: 'm',
      receiver: 'h',
      label: 'INIT',
      value: first.prediction,
      detail: first.explanation,
      body: { seq: 1, sender: 'm', tag: 'INIT', ...first },
      ...(payload ? { payload } : {}),
    },
  })
}
