import type { Actor } from '@/lib/server/actor'
import { hasScope } from '@/lib/server/auth/roles'
import { db } from '@/lib/server/db'
import { visibleSessions } from '@/lib/server/services/sessions'
import { studiesWhere } from '@/lib/server/services/studies'

/**
 * May this person watch a live topic (`session:<id>`, `run:<id>`, `dataset:<id>`: an import's progress)? The same rules as the
 * pages that show it: a run needs read access to its study (account and study role), a
 * session is visible as on /sessions (their own, or any of a study they read). The stream route
 * answers 404 otherwise.
 */
export async function mayWatch(actor: Actor, topic: string): Promise<boolean> {
  const [kind, id] = topic.split(':') as [string, string]
  if (kind === 'run') {
    if (!hasScope(actor.role, 'studies:read')) return false
    return !!(await db.run.findFirst({
      where: { id, study: studiesWhere(actor, 'read') },
      select: { id: true },
    }))
  }
  if (kind === 'dataset') {
    if (!hasScope(actor.role, 'studies:read')) return false
    return !!(await db.dataset.findFirst({ where: { id, study: studiesWhere(actor, 'read') }, select: { id: true } }))
  }
  return !!(await db.protocolSession.findFirst({ where: { id, ...visibleSessions(actor) }, select: { id: true } }))
}
