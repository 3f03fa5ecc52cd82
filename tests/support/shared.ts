import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, it } from 'vitest'

/**
 * The released data sets live in ../shared beside the project (never copied into it). Set
 * PARLEY_SHARED_DIR to read them from elsewhere.
 */
export const SHARED_DIR = process.env.PARLEY_SHARED_DIR
  ? path.resolve(process.env.PARLEY_SHARED_DIR)
  : path.resolve(import.meta.dirname, '../../../shared')

export const PXP_DATA = path.join(SHARED_DIR, 'datasets', 'pxp-interact')

/** A path inside the shared folder: `sharedDir('datasets', 'clembench-privateshared')`. */
export function sharedDir(...parts: string[]): string {
  return path.join(SHARED_DIR, ...parts)
}

/**
 * A `describe` block that needs released data under ../shared (`needs`, a path inside it, e.g.
 * "datasets/clembench-privateshared"). Without that folder the block is skipped with a visible line
 * ("skipped: … needs ../shared/… (released data)"), so a checkout without the data still runs the
 * rest of the suite. With PARLEY_REQUIRE_SHARED=1 (CI) a missing folder FAILS instead of skipping.
 * Read the files in `beforeAll` or in the tests, not in the block's body: vitest runs the body of a
 * skipped block too, to collect its tests.
 */
export function describeShared(name: string, fn: () => void, needs = 'datasets'): void {
  const dir = sharedDir(needs)
  if (existsSync(dir)) {
    describe(name, fn)
    return
  }
  const where = process.env.PARLEY_SHARED_DIR ? `${dir} (PARLEY_SHARED_DIR)` : `../shared/${needs}`
  if (process.env.PARLEY_REQUIRE_SHARED === '1') {
    describe(name, () => {
      it(`needs ${where} (released data)`, () => {
        throw new Error(`PARLEY_REQUIRE_SHARED=1 but ${dir} does not exist: the released data must be there.`)
      })
    })
    return
  }
  console.log(`skipped: ${name}: needs ${where} (released data)`)
  describe.skip(name, fn)
}

/**
 * For runners without `describeShared` (Playwright): why a test that needs `needs` under ../shared
 * cannot run here (null when it can). With PARLEY_REQUIRE_SHARED=1 (CI) a missing folder throws.
 * Use as `test.skip(!!sharedMissing(x), sharedMissing(x) ?? '')` at the start of the test.
 */
export function sharedMissing(needs = 'datasets'): string | null {
  const dir = sharedDir(needs)
  if (existsSync(dir)) return null
  if (process.env.PARLEY_REQUIRE_SHARED === '1')
    throw new Error(`PARLEY_REQUIRE_SHARED=1 but ${dir} does not exist: the released data must be there.`)
  const reason = `needs ../shared/${needs} (released data)`
  console.log(`skipped: ${reason}`)
  return reason
}
