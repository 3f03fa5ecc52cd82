import type { MainModule } from '@rdkit/rdkit'
import { LRUCache } from 'lru-cache'

/**
 * Chemistry through RDKit's WebAssembly build. One RDKit instance per process, loaded on first use
 * (about 0.1 s). In Next the package is listed in serverExternalPackages so its .wasm is found.
 *
 * The instance is kept on globalThis, not in this module: Next bundles this module once per server
 * layer (the pages' and the route handlers'), and each copy used to start its own RDKit, two
 * 16 MB WebAssembly memories and their compiled code in every web process.
 */
const shared = globalThis as unknown as { parleyRdkit?: Promise<MainModule>; parleyMoleculeSvgCache?: SvgCache }

export function getRDKit(): Promise<MainModule> {
  shared.parleyRdkit ??= import('@rdkit/rdkit').then(async (m) => {
    const init = (m as unknown as { default: (opts?: object) => Promise<MainModule> }).default
    return init()
  })
  return shared.parleyRdkit
}

/** Canonical SMILES of one molecule, or null when RDKit cannot parse it. */
export function canonicalSmiles(rd: MainModule, smiles: string): string | null {
  const s = smiles.trim()
  if (!s) return null
  const mol = rd.get_mol(s)
  if (!mol) return null
  try {
    return mol.is_valid() ? mol.get_smiles() : null
  } finally {
    mol.delete()
  }
}

/**
 * The canonical SMILES of every component of a '.'-separated list (the reactants of a pathway).
 * Returns the set and the parts RDKit could not parse.
 */
export function canonicalSet(rd: MainModule, smiles: string): { set: Set<string>; invalid: string[] } {
  const set = new Set<string>()
  const invalid: string[] = []
  for (const part of smiles
    .split('.')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const c = canonicalSmiles(rd, part)
    if (c === null) invalid.push(part)
    else for (const piece of c.split('.')) set.add(piece)
  }
  return { set, invalid }
}

export type ReactantMatchMode = 'exact' | 'overlap'

/**
 * MATCH for DRUG predictions: compare the canonical reactant sets. 'exact' (Parley's default, the
 * paper's "same pathway") needs the same set; 'overlap' (the authors' released code) accepts any
 * shared reactant. Unparsable SMILES never match.
 */
export function reactantsMatch(rd: MainModule, a: string, b: string, mode: ReactantMatchMode = 'exact'): boolean {
  const x = canonicalSet(rd, a)
  const y = canonicalSet(rd, b)
  if (x.invalid.length || y.invalid.length || !x.set.size || !y.set.size) return false
  if (mode === 'overlap') return [...x.set].some((s) => y.set.has(s))
  return x.set.size === y.set.size && [...x.set].every((s) => y.set.has(s))
}

/**
 * A 2-D depiction of a molecule (or '.'-separated molecules) as SVG, or null when RDKit cannot parse
 * it. RDKit draws only paths and atom labels; anything script-like is stripped anyway before the
 * string reaches a page.
 */
export function depictSvg(rd: MainModule, smiles: string, width = 320, height = 220): string | null {
  const s = smiles.trim()
  if (!s) return null
  const mol = rd.get_mol(s)
  if (!mol) return null
  try {
    if (!mol.is_valid()) return null
    return sanitizeSvg(mol.get_svg(width, height))
  } finally {
    mol.delete()
  }
}

/**
 * Drawings already made, by size and SMILES. RDKit's drawing of a molecule at a size never changes,
 * so nothing needs invalidating; the cache is only bounded (entries and bytes), least recently used
 * first out. A session page draws the product and every predicted pathway on each load: without it
 * RDKit redrew the same molecules for every expert and every reload. Unparsable SMILES are
 * remembered too (as null).
 */
type SvgCache = LRUCache<string, { svg: string | null }>
// One per process, like the RDKit instance (each server layer's copy of this module shares it).
shared.parleyMoleculeSvgCache ??= new LRUCache<string, { svg: string | null }>({
  max: 5000,
  maxSize: 32 * 2 ** 20,
  sizeCalculation: (v, k) => (v.svg?.length ?? 0) + k.length + 16,
})
export const moleculeSvgCache: SvgCache = shared.parleyMoleculeSvgCache

/** The sizes molecules are drawn at (width, height in px): one of a session's products, one of a reply's reactants. */
export const MOLECULE_SIZES = { lg: [340, 240], sm: [220, 150] } as const satisfies Record<
  string,
  readonly [number, number]
>

/** Where the browser gets a molecule's drawing (app/api/molecules): an image, kept by the browser. */
export function moleculeUrl(smiles: string, size: keyof typeof MOLECULE_SIZES): string {
  return `/api/molecules?${new URLSearchParams({ smiles: smiles.trim(), size })}`
}

/** {@link depictSvg} through {@link moleculeSvgCache}; RDKit is loaded (once) only on a miss. */
export async function moleculeSvg(smiles: string, width = 320, height = 220): Promise<string | null> {
  const key = `${width}x${height} ${smiles.trim()}`
  const hit = moleculeSvgCache.get(key)
  if (hit) return hit.svg
  const svg = depictSvg(await getRDKit(), smiles, width, height)
  moleculeSvgCache.set(key, { svg })
  return svg
}

/** Keep an SVG inert: no scripts, no event handlers, no foreign objects, no external references. */
export function sanitizeSvg(svg: string): string {
  return svg
    .replace(/<\?xml[^>]*>/gi, '')
    .replace(/<(script|foreignObject)[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<(script|foreignObject)[^>]*\/?>/gi, '')
    .replace(/\son\w+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '')
    .replace(/(href\s*=\s*)("|')\s*(javascript|data|https?):[^"']*\2/gi, '$1$2#$2')
}
