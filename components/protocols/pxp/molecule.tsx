import { moleculeSvg } from '@/lib/tasks/chem'

/**
 * A molecule drawn by RDKit (server side) next to its SMILES. The SVG is RDKit's own output, passed
 * through sanitizeSvg and kept in moleculeSvgCache (the same drawing is never made twice); an unparsable SMILES shows as text with a note.
 */
export async function Molecule({ smiles, label, size = 'lg' }: { smiles: string; label: string; size?: 'lg' | 'sm' }) {
  const [w, h] = size === 'lg' ? [340, 240] : [220, 150]
  const svg = await moleculeSvg(smiles, w, h)
  return (
    <figure className="space-y-1">
      {svg ? (
        <div
          role="img"
          aria-label={`${label}: ${smiles}`}
          className="overflow-hidden rounded border border-stone-200 bg-white [&_svg]:h-auto [&_svg]:max-w-full"
          dangerouslySetInnerHTML={{ __html: svg }}
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
