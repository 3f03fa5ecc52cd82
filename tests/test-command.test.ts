import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '..')
const results = mkdtempSync(path.join(tmpdir(), 'parley-test-results-'))
afterAll(() => rmSync(results, { recursive: true, force: true }))

/** `npm test -- e2e` on a machine without Chromium: its one line, and no launch error per browser test. */
function runE2eWithoutChromium(ci: boolean) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CHROMIUM_PATH: path.join(results, 'no-chromium-here'),
    PARLEY_TEST_RESULTS: results,
  }
  delete env.CI
  if (ci) env.CI = 'true'
  return spawnSync(process.execPath, ['scripts/test.mjs', 'e2e'], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  })
}

describe('npm test without Chromium', () => {
  it('skips the browser tests with one line saying how to install it, and passes', () => {
    const r = runE2eWithoutChromium(false)
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('skipped: the browser tests'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('apt-get install -y chromium')
    expect(r.stdout).not.toMatch(/build \(next build\)|playwright test/)
    expect(r.status).toBe(0)
  })

  it('fails in CI, which requires the browser tests', () => {
    const r = runE2eWithoutChromium(true)
    expect(r.stdout).toContain('skipped: the browser tests (Playwright) need Chromium')
    expect(r.status).toBe(1)
  })
})
