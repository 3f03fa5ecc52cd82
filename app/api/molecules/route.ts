import { z } from 'zod'
import { sessionActor } from '@/lib/server/api/auth'
import { cleanString } from '@/lib/server/input'
import { MOLECULE_SIZES, moleculeSvg } from '@/lib/tasks/chem'
import { isSandboxUnavailable } from '@/lib/tasks/sandbox'

export const dynamic = 'force-dynamic'

const Query = z.object({
  smiles: cleanString().trim().min(1, 'Give a SMILES.').max(2000, 'A SMILES of at most 2,000 characters.'),
  size: z.enum(Object.keys(MOLECULE_SIZES) as [keyof typeof MOLECULE_SIZES]),
})

/**
 * A molecule drawn by RDKit as SVG, for signed-in people: the session page shows its molecules as
 * images from here instead of inlining the drawings in every page view (twice: in the HTML and in
 * the React payload). The drawing of one SMILES at one size never changes, so the browser keeps it
 * (private, a week) and asks once. The answer is a pure function of the query: it reveals nothing
 * the asker did not send.
 */
export async function GET(req: Request) {
  const actor = await sessionActor(req.headers)
  if (!actor) return Response.json({ error: 'Sign in to continue.' }, { status: 401 })
  const params = new URL(req.url).searchParams
  const parsed = Query.safeParse({ smiles: params.get('smiles') ?? '', size: params.get('size') ?? '' })
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    return Response.json({ error: `${issue?.path.join('.')}: ${issue?.message}` }, { status: 400 })
  }
  const [width, height] = MOLECULE_SIZES[parsed.data.size]
  let svg: string | null
  try {
    svg = await moleculeSvg(parsed.data.smiles, width, height)
  } catch (err) {
    if (!isSandboxUnavailable(err)) throw err
    return Response.json({ error: err.message }, { status: 503, headers: { 'retry-after': '5' } })
  }
  if (!svg) return Response.json({ error: 'RDKit cannot draw this SMILES.' }, { status: 422 })
  return new Response(svg.trim(), {
    headers: {
      'content-type': 'image/svg+xml; charset=utf-8',
      'cache-control': 'private, max-age=604800, immutable',
      // Opened as a document, the drawing may still not run or fetch anything.
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      'x-content-type-options': 'nosniff',
    },
  })
}
