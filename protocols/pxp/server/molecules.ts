import { z } from 'zod'
import { MOLECULE_SIZES, moleculeSvg } from '@/lib/tasks/chem'
import { AppError, cleanString, defineOperation, type PluginEndpoint } from '@/lib/server/sdk'

/**
 * A molecule drawn by RDKit as SVG, for signed-in people: the session page shows its molecules as
 * images from here instead of inlining the drawings in every page view (twice: in the HTML and in
 * the React payload). The answer is a pure function of the query: it reveals nothing the asker did
 * not send. RDKit unavailable is a 503 with Retry-After (the operation boundary's rule for the sandbox).
 */
export const drawMolecule = defineOperation({
  name: 'pxp.molecule',
  scope: 'media:read',
  input: z.object({
    smiles: cleanString().trim().min(1, 'Give a SMILES.').max(2000, 'A SMILES of at most 2,000 characters.'),
    size: z.enum(Object.keys(MOLECULE_SIZES) as [keyof typeof MOLECULE_SIZES], { error: 'Choose lg or sm.' }),
  }),
  async run(_actor, { smiles, size }) {
    const [width, height] = MOLECULE_SIZES[size]
    const svg = await moleculeSvg(smiles, width, height)
    if (!svg) throw new AppError(422, 'RDKit cannot draw this SMILES.')
    return { svg: svg.trim() }
  },
})

/** GET /pxp/molecules: the drawing as an image the browser keeps (one SMILES at one size never changes). */
export const moleculeEndpoint: PluginEndpoint = {
  method: 'GET',
  path: '/pxp/molecules',
  summary: 'A molecule drawn by RDKit as SVG (`smiles`, `size` lg or sm), as the session pages show a SMILES',
  op: drawMolecule,
  source: 'query',
  output: z.object({ svg: z.string() }),
  errors: { 422: 'RDKit cannot draw this SMILES' },
  answer: {
    contentType: 'image/svg+xml',
    respond: ({ svg }: { svg: string }) =>
      new Response(svg, {
        headers: {
          'content-type': 'image/svg+xml; charset=utf-8',
          'cache-control': 'private, max-age=604800, immutable',
          // Opened as a document, the drawing may still not run or fetch anything.
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
          'x-content-type-options': 'nosniff',
        },
      }),
  },
}
