import { randomUUID } from 'node:crypto'
import type { Actor } from '@/lib/server/actor'
import type { Role } from '@/lib/server/auth/roles'
import { creatorStudyRole } from '@/lib/server/auth/study-roles'
import { db } from '@/lib/server/db'
import { insertUser } from '@/lib/server/services/users'

/** A fresh user of the given role (unique email per call) and the Actor that acts as them. */
export async function makeUser(role: Role, password = 'correct horse battery'): Promise<Actor> {
  const email = `${role}-${randomUUID().slice(0, 8)}@test.parley`
  const user = await db.$transaction((tx) => insertUser(tx, { email, name: `${role} tester`, role, password }))
  return { userId: user.id, email: user.email, name: user.name, role, via: 'session' }
}

/**
 * A study created by `owner`, who becomes its member as createStudy makes them (a researcher or admin
 * as study admin); each other member gets their `role` as study role (pass `{ ...actor, role }` for
 * another study role than the account's).
 */
export async function makeStudy(owner: Actor, members: Actor[] = []) {
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

export async function makeWork(studyId: string, assignee: Actor, title = 'work item') {
  return db.assignment.create({ data: { studyId, userId: assignee.userId, kind: 'review', title } })
}
