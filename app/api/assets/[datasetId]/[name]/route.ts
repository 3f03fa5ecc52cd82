import { getAuth } from '@/lib/server/auth/auth'
import { actorFromUser, type SessionUser } from '@/lib/server/auth/session-user'
import { AppError } from '@/lib/server/errors'
import { readAsset } from '@/lib/server/services/datasets'

export const dynamic = 'force-dynamic'

/** A dataset image, for people who may see its study. */
export async function GET(req: Request, ctx: { params: Promise<{ datasetId: string; name: string }> }) {
  const session = await getAuth().api.getSession({ headers: req.headers })
  const actor = session ? actorFromUser(session.user as SessionUser, 'session') : null
  if (!actor) return Response.json({ error: 'Sign in to continue.' }, { status: 401 })
  const { datasetId, name } = await ctx.params
  try {
    const asset = await readAsset(actor, datasetId, decodeURIComponent(name))
    return new Response(new Uint8Array(asset.bytes), {
      headers: {
        'content-type': asset.mime,
        'cache-control': 'private, max-age=3600',
        'x-content-type-options': 'nosniff',
      },
    })
  } catch (err) {
    if (err instanceof AppError) return Response.json({ error: err.message }, { status: err.status })
    throw err
  }
}
