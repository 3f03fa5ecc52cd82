import { sessionActor } from '@/lib/server/api/auth'
import { AppError } from '@/lib/server/errors'
import { inputProblem } from '@/lib/server/input'
import { readAsset } from '@/lib/server/services/datasets'

export const dynamic = 'force-dynamic'

/** A dataset image, for people who may see its study. */
export async function GET(req: Request, ctx: { params: Promise<{ datasetId: string; name: string }> }) {
  const actor = await sessionActor(req.headers)
  if (!actor) return Response.json({ error: 'Sign in to continue.' }, { status: 401 })
  const { datasetId, name: encoded } = await ctx.params
  let name: string
  try {
    name = decodeURIComponent(encoded)
  } catch {
    return Response.json({ error: 'The asset name is not valid percent-encoded UTF-8.' }, { status: 400 })
  }
  const problem = inputProblem({ datasetId, name })
  if (problem) return Response.json({ error: `${problem.path.join('.')}: ${problem.message}` }, { status: 400 })
  try {
    const asset = await readAsset(actor, datasetId, name)
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
