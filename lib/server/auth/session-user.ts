import type { Actor } from '@/lib/server/actor'
import { isRole } from '@/lib/server/auth/roles'

export type SessionUser = { id: string; email: string; name: string; role?: unknown; disabled?: unknown }

/** A disabled account, or one with an unknown role, acts as nobody. */
export function actorFromUser(user: SessionUser, via: string): Actor | null {
  if (user.disabled === true || !isRole(user.role)) return null
  return { userId: user.id, email: user.email, name: user.name, role: user.role, via }
}
