import { moleculeSvg } from '@/lib/tasks/chem'
import { isSandboxUnavailable } from '@/lib/tasks/sandbox'

/**
 * A DRUG row's SMILES drawn by RDKit on the server (its SVG passed through sanitizeSvg), the SMILES
 * below; text only when RDKit cannot parse it (or is unavailable). Reactants (dot-separated) are
 * drawn together.
 */
export async function Structure({ smiles, label }: { smiles: string; label: string }) {
  const svg = await moleculeSvg(smiles, 220, 150).catch((err: unknown) => {
    if (isSandboxUnavailable(err)) return null
    throw err
  })
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
