import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildIsStale } from '../scripts/build-stale.mjs'

/**
 * `npm start` rebuilds when the build is older than what it was built from. A protocol's folder is a
 * source like `app/` and `lib/` (a change to protocols/ alone used to start the old build).
 * Database-free: npx vitest run tests/build-stale.test.ts --config vitest.pure.config.ts
 */
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function checkout() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'parley-stale-'))
  dirs.push(root)
  const old = new Date(Date.now() - 60_000)
  for (const f of [
    'app/page.tsx',
    'protocols/toy/ui/view.tsx',
    'lib/generated/prisma/client.ts',
    'prisma/schema.prisma',
  ]) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true })
    writeFileSync(path.join(root, f), 'x')
    utimesSync(path.join(root, f), old, old)
  }
  mkdirSync(path.join(root, '.next'))
  writeFileSync(path.join(root, '.next', 'BUILD_ID'), 'b')
  return root
}
const touch = (root: string, f: string) => {
  const now = new Date(Date.now() + 5_000)
  utimesSync(path.join(root, f), now, now)
}

describe('npm start: is the build stale?', () => {
  it('is stale without a build, fresh when every source is older than it', () => {
    const root = checkout()
    expect(buildIsStale(root)).toBe(false)
    rmSync(path.join(root, '.next', 'BUILD_ID'))
    expect(buildIsStale(root)).toBe(true)
  })

  it.each(['protocols/toy/ui/view.tsx', 'app/page.tsx', 'prisma/schema.prisma'])(
    'is stale after a change to %s',
    (f) => {
      const root = checkout()
      touch(root, f)
      expect(buildIsStale(root)).toBe(true)
    },
  )

  it('ignores the generated Prisma client (npm install writes it)', () => {
    const root = checkout()
    touch(root, 'lib/generated/prisma/client.ts')
    expect(buildIsStale(root)).toBe(false)
  })
})
