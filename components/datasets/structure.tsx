import { depictSvg, getRDKit } from '@/lib/tasks/chem'

/**
 * A DRUG row's SMILES drawn by RDKit on the server (its SVG passed through sanitizeSvg), the SMILES
 * below; text only when RDKit cannot parse it. Reactants (dot-separated) are drawn together.
 */
export async function Structure({ smiles, label }: { smiles: string; label: string }) {
  const svg = depictSvg(await getRDKit(), smiles, 220, 150)
  return (
    <figure className="space-y-1" data-testid="structure">
      {svg ? (
        <div
          role="img"
          aria-label={`${label}: ${smiles}`}
          className="w-56 overflow-hidden rounded border border-stone-200 bg-white [&_svg]:h-auto [&_svg]:max-w-full"
          dangerouslySetInnerHTML={{ __html: svg }}
        />
      ) : (
        <p className="text-xs text-amber-800">RDKit cannot draw this SMILES.</p>
      )}
      <figcaption className="text-xs text-stone-600">
        <code className="break-all">{smiles}</code>
      </figcaption>
    </figure>
  )
}
