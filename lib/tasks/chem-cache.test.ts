import { beforeEach, describe, expect, it, vi } from 'vitest'
import { depictSvg, moleculeSvg, moleculeSvgCache, rdkitSandbox } from './chem'

describe('moleculeSvg (the cache of RDKit drawings)', () => {
  beforeEach(() => moleculeSvgCache.clear())

  it('returns exactly what RDKit draws, keyed by SMILES and size', async () => {
    const ester = await moleculeSvg('CCOC(C)=O', 340, 240)
    expect(ester).toBe(await depictSvg('CCOC(C)=O', 340, 240))
    // Another size is another drawing, not the cached one.
    const small = await moleculeSvg('CCOC(C)=O', 220, 150)
    expect(small).toBe(await depictSvg('CCOC(C)=O', 220, 150))
    expect(small).not.toBe(ester)
    // Another molecule at the same size is another drawing.
    const acid = await moleculeSvg('CC(=O)O', 340, 240)
    expect(acid).toBe(await depictSvg('CC(=O)O', 340, 240))
    expect(acid).not.toBe(ester)
    expect(moleculeSvgCache.size).toBe(3)
    // Surrounding spaces do not make another entry (RDKit ignores them too).
    expect(await moleculeSvg('  CCOC(C)=O ', 340, 240)).toBe(ester)
    expect(moleculeSvgCache.size).toBe(3)
  })

  it('draws a molecule once, however often it is asked for', async () => {
    const spy = vi.spyOn(rdkitSandbox(), 'call')
    try {
      for (let i = 0; i < 5; i++) await moleculeSvg('c1ccccc1O', 340, 240)
      expect(spy).toHaveBeenCalledTimes(1)
    } finally {
      spy.mockRestore()
    }
  })

  it('remembers an unparsable SMILES as null', async () => {
    expect(await moleculeSvg('C1CC(', 340, 240)).toBeNull()
    expect(moleculeSvgCache.get('340x240 C1CC(')).toEqual({ svg: null })
    expect(await moleculeSvg('C1CC(', 340, 240)).toBeNull()
  })

  it('is bounded by entries and by bytes', async () => {
    expect(moleculeSvgCache.max).toBe(5000)
    expect(moleculeSvgCache.maxSize).toBe(32 * 2 ** 20)
    const alkanes = Array.from({ length: 20 }, (_, i) => 'C'.repeat(i + 1))
    for (const s of alkanes) await moleculeSvg(s, 100, 100)
    expect(moleculeSvgCache.size).toBe(20)
    // Every drawing's bytes are counted against maxSize.
    let bytes = 0
    for (const [k, v] of moleculeSvgCache.entries()) bytes += (v.svg?.length ?? 0) + k.length + 16
    expect(moleculeSvgCache.calculatedSize).toBe(bytes)
  })
})

describe('one RDKit worker per process', () => {
  it('is shared by every copy of the module, as Next loads one per server layer', async () => {
    // vi.resetModules() makes the next import evaluate chem.ts afresh: a second copy of the module,
    // like the pages' and the route handlers' bundles of one Next process.
    vi.resetModules()
    const first = await import('./chem')
    vi.resetModules()
    const second = await import('./chem')
    expect(second).not.toBe(first)
    expect(second.rdkitSandbox()).toBe(first.rdkitSandbox())
    expect(second.moleculeSvgCache).toBe(first.moleculeSvgCache)
  })
})
