import { Worker } from 'node:worker_threads'
import { LRUCache } from 'lru-cache'
import { type Sandbox, SandboxError, sandbox } from './sandbox'

/**
 * Chemistry through RDKit's WebAssembly build, in a worker thread (lib/tasks/rdkit-worker.mjs, run by
 * lib/tasks/sandbox.ts): never on the event loop that answers requests, one call at a time with a
 * time limit, and a new worker after any call that ran out of time or broke RDKit. One worker per
 * process, started on first use (RDKit loads in about 0.1–0.5 s) and kept on globalThis like every
 * process-wide thing (Next bundles this module once per server layer). In Next the package is
 * listed in serverExternalPackages so its .wasm is found.
 *
 * Before RDKit sees a SMILES, {@link smilesProblem} holds it to {@link SMILES_LIMITS}: RDKit's stack
 * overflows into its heap on a chain of about 650 atoms ("memory access out of bounds", or a thread
 * spinning for minutes on 700), and drawing a few hundred atoms takes seconds.
 */

/**
 * What Parley hands to RDKit at most, per SMILES (a product, or a '.'-separated list of reactants).
 * The released DRUG data stays far below (at most 99 characters and a few dozen atoms per reactant
 * set); large drugs have 50–150 heavy atoms, so two of them still fit.
 */
export const SMILES_LIMITS = { characters: 2000, atoms: 250, molecules: 20 } as const

/** Atoms as SMILES writes them: a bracket atom, an organic-subset element (aromatic too) or `*`. */
const ATOM = /\[[^\]]*\]|Cl|Br|[BCNOPSFI]|[bcnops]|\*/g

const parts = (smiles: string) =>
  smiles
    .split('.')
    .map((p) => p.trim())
    .filter(Boolean)

const n = (x: number) => x.toLocaleString('en-US')

/** Why Parley does not hand this SMILES to RDKit (over {@link SMILES_LIMITS}), in words; null when it does. */
export function smilesProblem(smiles: string): string | null {
  const s = smiles.trim()
  if (s.length > SMILES_LIMITS.characters)
    return `This SMILES has ${n(s.length)} characters; Parley checks at most ${n(SMILES_LIMITS.characters)} (a retrosynthesis answer is far shorter).`
  const molecules = parts(s).length
  if (molecules > SMILES_LIMITS.molecules)
    return `This SMILES lists ${n(molecules)} molecules; Parley checks at most ${SMILES_LIMITS.molecules} in one answer.`
  const atoms = s.match(ATOM)?.length ?? 0
  if (atoms > SMILES_LIMITS.atoms)
    return `This SMILES has ${n(atoms)} atoms; Parley checks at most ${SMILES_LIMITS.atoms} in one answer (a retrosynthesis answer has far fewer).`
  return null
}

/** The process's RDKit worker (readiness reports it when it cannot start; tests configure it). */
export function rdkitSandbox(): Sandbox {
  return sandbox('rdkit', {
    label: 'RDKit',
    // Next's bundler follows this form (a literal URL beside the module) into the build.
    // No execArgv: the worker needs none of the process's flags (a loader's, --input-type …).
    create: () => new Worker(new URL('./rdkit-worker.mjs', import.meta.url), { execArgv: [] }),
    timeoutMs: 5000,
    startTimeoutMs: 30_000,
    maxQueue: 64,
    retryAfterMs: 5000,
  })
}

const canonicalAll = (list: string[]) =>
  list.length ? rdkitSandbox().call<Array<string | null>>('canonical', [list]) : Promise.resolve([])

/** Canonical SMILES of one molecule, or null when RDKit cannot parse it (or it is over the limits). */
export async function canonicalSmiles(smiles: string): Promise<string | null> {
  const s = smiles.trim()
  if (!s || smilesProblem(s)) return null
  const [c] = await canonicalAll([s])
  return c ?? null
}

function setOf(list: string[], canon: Array<string | null>): { set: Set<string>; invalid: string[] } {
  const set = new Set<string>()
  const invalid: string[] = []
  list.forEach((part, i) => {
    const c = canon[i]
    if (c == null) invalid.push(part)
    else for (const piece of c.split('.')) set.add(piece)
  })
  return { set, invalid }
}

/**
 * The canonical SMILES of every component of a '.'-separated list (the reactants of a pathway).
 * Returns the set and the parts RDKit could not parse (the whole list when it is over the limits).
 */
export async function canonicalSet(smiles: string): Promise<{ set: Set<string>; invalid: string[] }> {
  if (smilesProblem(smiles)) return { set: new Set(), invalid: [smiles.trim()] }
  const list = parts(smiles)
  return setOf(list, await canonicalAll(list))
}

export type ReactantMatchMode = 'exact' | 'overlap'

/**
 * MATCH for DRUG predictions: compare the canonical reactant sets. 'exact' (Parley's default, the
 * paper's "same pathway") needs the same set; 'overlap' (the authors' released code) accepts any
 * shared reactant. Unparsable SMILES never match, nor do SMILES over the limits.
 */
export async function reactantsMatch(a: string, b: string, mode: ReactantMatchMode = 'exact'): Promise<boolean> {
  if (smilesProblem(a) || smilesProblem(b)) return false
  const pa = parts(a)
  const pb = parts(b)
  if (!pa.length || !pb.length) return false
  // One call for both sides.
  const canon = await canonicalAll([...pa, ...pb])
  const x = setOf(pa, canon.slice(0, pa.length))
  const y = setOf(pb, canon.slice(pa.length))
  if (x.invalid.length || y.invalid.length || !x.set.size || !y.set.size) return false
  if (mode === 'overlap') return [...x.set].some((s) => y.set.has(s))
  return x.set.size === y.set.size && [...x.set].every((s) => y.set.has(s))
}

/**
 * A 2-D depiction of a molecule (or '.'-separated molecules) as SVG, or null when RDKit cannot parse
 * it or it is over the limits. RDKit draws only paths and atom labels; anything script-like is
 * stripped anyway before the string reaches a page.
 */
export async function depictSvg(smiles: string, width = 320, height = 220): Promise<string | null> {
  const s = smiles.trim()
  if (!s || smilesProblem(s)) return null
  const svg = await rdkitSandbox().call<string | null>('svg', [s, width, height])
  return svg === null ? null : sanitizeSvg(svg)
}

/**
 * Drawings already made, by size and SMILES. RDKit's drawing of a molecule at a size never changes,
 * so nothing needs invalidating; the cache is only bounded (entries and bytes), least recently used
 * first out. A session page draws the product and every predicted pathway on each load: without it
 * RDKit redrew the same molecules for every expert and every reload. Unparsable SMILES are
 * remembered too (as null).
 */
type SvgCache = LRUCache<string, { svg: string | null }>
// One per process, like the RDKit worker (each server layer's copy of this module shares it).
const shared = globalThis as unknown as { parleyMoleculeSvgCache?: SvgCache }
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

/** Where the browser gets a molecule's drawing (PXP's REST endpoint): an image, kept by the browser. */
export function moleculeUrl(smiles: string, size: keyof typeof MOLECULE_SIZES): string {
  return `/api/v1/pxp/molecules?${new URLSearchParams({ smiles: smiles.trim(), size })}`
}

/**
 * {@link depictSvg} through {@link moleculeSvgCache}; RDKit is asked only on a miss. A SMILES RDKit
 * ran out of time on or broke on is remembered as null like an unparsable one (asked again, it would
 * cost the same); RDKit being unavailable (a SandboxError `unavailable` or `busy`) is thrown and
 * remembers nothing.
 */
export async function moleculeSvg(smiles: string, width = 320, height = 220): Promise<string | null> {
  const key = `${width}x${height} ${smiles.trim()}`
  const hit = moleculeSvgCache.get(key)
  if (hit) return hit.svg
  let svg: string | null
  try {
    svg = await depictSvg(smiles, width, height)
  } catch (err) {
    if (!(err instanceof SandboxError) || (err.kind !== 'timeout' && err.kind !== 'crashed')) throw err
    svg = null
  }
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
