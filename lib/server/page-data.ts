import { forbidden, notFound } from 'next/navigation'
import { requirePage } from '@/lib/server/auth/session'
import { execute, type Operation, type Result } from '@/lib/server/operation'

/**
 * Run a read operation for a page as the signed-in user. Not found (including "not yours") renders
 * the 404 page and a missing scope the 403 page, so no data leaks by URL.
 */
export async function loadForPage<I, O>(op: Operation<I, O>, input: unknown): Promise<O> {
  const { actor } = await requirePage(op.scope)
  return pageData(await execute(op, actor, input))
}

/** An operation's result as a page shows it: the data, or the 404 / 403 page, or the error page. */
export function pageData<O>(result: Result<O> | null): O {
  if (!result) notFound()
  if (result.ok) return result.data
  if (result.status === 404 || result.status === 400) notFound()
  if (result.status === 403) forbidden()
  throw new Error(result.error)
}

/** Search params arrive as string | string[]; keep the first of each. */
export async function flatParams(sp: Promise<Record<string, string | string[] | undefined>>) {
  const raw = await sp
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v])) as Record<
    string,
    string | undefined
  >
}
