import { headers } from 'next/headers'
import { forbidden, redirect } from 'next/navigation'
import { cache } from 'react'
import type { Actor } from '@/lib/server/actor'
import { readSession } from '@/lib/server/auth/session-cookie'
import { hasScope, type Scope } from '@/lib/server/auth/roles'
import { actorFromUser } from '@/lib/server/auth/session-user'

export interface CurrentSession {
  actor: Actor
  sessionId: string
}

/** The signed-in person for this request (validated against the session table), or null. */
export const getCurrentSession = cache(async (): Promise<CurrentSession | null> => {
  const result = await readSession(await headers())
  if (!result) return null
  const actor = actorFromUser(result.user, 'session')
  return actor ? { actor, sessionId: result.session.id } : null
})

/** For pages: sends a visitor without a valid session to sign-in; answers 403 without the scope. */
export async function requirePage(scope?: Scope): Promise<CurrentSession> {
  const current = await getCurrentSession()
  if (!current) {
    const path = (await headers()).get('x-parley-path') ?? '/'
    redirect(`/sign-in?next=${encodeURIComponent(path)}`)
  }
  if (scope && !hasScope(current.actor.role, scope)) forbidden()
  return current
}
