import { MOLECULE_SIZES, moleculeSvg, moleculeUrl } from '@/lib/tasks/chem'
import { isSandboxUnavailable } from '@/lib/tasks/sandbox'

/**
 * A molecule drawn by RDKit (server side) next to its SMILES. The drawing is an image from
 * PXP's /api/v1/pxp/molecules (RDKit's SVG through sanitizeSvg, kept in moleculeSvgCache on the server and by the
 * browser), not inlined in the page; whether RDKit can draw the SMILES is decided here, from the
 * same cache, so an unparsable SMILES shows as text with a note (so does every SMILES while RDKit is
 * unavailable: the page still renders).
 */
export async function Molecule({ smiles, label, size = 'lg' }: { smiles: string; label: string; size?: 'lg' | 'sm' }) {
  const [w, h] = MOLECULE_SIZES[size]
  const drawable = await moleculeSvg(smiles, w, h).then(
    (svg) => (svg !== null ? 'yes' : 'no'),
    (err: unknown) => {
      if (isSandboxUnavailable(err)) return 'unavailable' as const
      throw err
    },
  )
  return (
    <figure className="space-y-1">
      {drawable === 'unavailable' ? (
        <p className="text-xs text-amber-800">RDKit is unavailable right now; the molecule is shown as SMILES.</p>
      ) : drawable === 'yes' ? (
        <img
          src={moleculeUrl(smiles, size)}
          alt={`${label}: ${smiles}`}
          width={w}
          height={h}
          className="h-auto max-w-full rounded border border-stone-200 bg-white"
        />
      ) : (
        <p className="text-xs text-amber-800">RDKit cannot draw this SMILES.</p>
      )}
      <figcaption className="text-xs text-stone-600">
        {label}: <code className="break-all">{smiles}</code>
      </figcaption>
    </figure>
  )
}
