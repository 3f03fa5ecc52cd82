#!/usr/bin/env node
// `npm test`: the whole suite. Typecheck and lint, the production build, unit + integration tests
// (vitest) against real PostgreSQL (some start `next start` on that build), then the Playwright
// end-to-end suite in Debian's Chromium against the same build.
//
// PostgreSQL: the server in DATABASE_URL when it is set (CI), else the embedded one (.data/test-pg).
// Each run creates fresh databases for vitest and Playwright and drops them at the end.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import pg from 'pg'
import { ROOT, startEmbedded } from './embedded-db.mjs'
import { deploy } from './migrate.mjs'

const only = process.argv.slice(2) // e.g. `npm test -- unit` or `npm test -- e2e`
const want = (name) => only.length === 0 || only.includes(name)
// PARLEY_TEST_RESULTS: where the runners' JSON reports go (a test of this script points it elsewhere).
const results = process.env.PARLEY_TEST_RESULTS ?? path.join(ROOT, '.data', 'test-results')
rmSync(results, { recursive: true, force: true })
mkdirSync(results, { recursive: true })

function run(cmd, args, env = {}) {
  return new Promise((resolve) => {
    const started = Date.now()
    const p = spawn(cmd, args, {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...env },
    })
    p.on('exit', (code) => resolve({ code: code ?? 1, seconds: (Date.now() - started) / 1000 }))
  })
}
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name)

/**
 * Debian's Chromium (never a downloaded browser): CHROMIUM_PATH, else /usr/bin/chromium, as
 * playwright.config.ts launches it. Detected before anything runs, so a machine without it gets one
 * line saying how to install it instead of a launch error per browser test.
 */
function findChromium() {
  const where = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
  if (existsSync(where)) return { ok: true, where }
  return {
    ok: false,
    where,
    why: `which is not at ${where}: install it with \`sudo apt-get install -y chromium\` (Debian's package; no browser is downloaded), or set CHROMIUM_PATH.`,
  }
}

let embedded
let adminUrl = process.env.DATABASE_URL
if (!adminUrl) {
  embedded = await startEmbedded({
    dataDir: path.join(ROOT, '.data', 'test-pg'),
    port: Number(process.env.PARLEY_TEST_PG_PORT ?? 54330),
    database: 'postgres',
  })
  adminUrl = embedded.url
}
const stamp = `${Date.now().toString(36)}_${process.pid}`
const dbUrl = (name) => {
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return u.toString()
}
const admin = new pg.Client({ connectionString: adminUrl })
await admin.connect()
const created = []
async function freshDb(suffix) {
  const name = `parley_test_${stamp}_${suffix}`
  await admin.query(`CREATE DATABASE "${name}"`)
  created.push(name)
  return dbUrl(name)
}

const steps = []
const skippedSteps = []
let failed = false
const browser = findChromium()
async function step(name, fn) {
  const r = await fn()
  steps.push({ name, ...r })
  if (r.code !== 0) failed = true
  console.log(`\n── ${name}: ${r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`} in ${r.seconds.toFixed(1)} s\n`)
}

try {
  if (want('static')) {
    await step('typecheck', () => run(bin('tsc'), ['--noEmit']))
    await step('lint', () => run(bin('biome'), ['check', '.']))
  }
  // The production build comes before vitest, so the integration tests that start real `next start`
  // processes (several instances, shutdown, backup) run in the full suite instead of skipping.
  let built = false
  if (want('e2e') && !browser.ok) {
    // One visible line instead of a launch error in every browser test. CI has Chromium and requires it.
    console.log(`skipped: the browser tests (Playwright) need Chromium, ${browser.why}`)
    if (process.env.CI) {
      steps.push({ name: 'end-to-end (playwright, chromium): no Chromium', code: 1, seconds: 0 })
      failed = true
    } else {
      skippedSteps.push(`end-to-end (playwright): no Chromium at ${browser.where}`)
    }
  }
  // Without a browser the build is still needed by the integration tests, not by anything else.
  if (want('e2e') && (browser.ok || want('unit'))) {
    const before = steps.length
    await step('build (next build)', () => run(bin('next'), ['build']))
    built = steps[before]?.code === 0
  }
  if (want('unit')) {
    const url = await freshDb('unit')
    await step('unit + integration (vitest)', () =>
      run(bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${results}/vitest.json`], {
        DATABASE_URL: url,
      }),
    )
  }
  if (want('e2e') && browser.ok) {
    const url = await freshDb('e2e')
    // Migrate before Playwright starts the web server (it starts before globalSetup runs).
    await deploy([], { url, quiet: true })
    if (built) {
      await step('end-to-end (playwright, chromium)', () =>
        run(bin('playwright'), ['test', '--reporter=list,json'], {
          DATABASE_URL: url,
          PLAYWRIGHT_JSON_OUTPUT_NAME: `${results}/playwright.json`,
        }),
      )
    }
  }
} finally {
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {})
  await admin.end()
  await embedded?.stop()
}

// One closing line with the counts of every runner.
let passed = 0
let failures = 0
let skipped = 0
const failedNames = []
const firstLine = (text) =>
  stripVTControlCharacters(String(text ?? ''))
    .trim()
    .split('\n')[0]
    .slice(0, 300)
const vitestFile = path.join(results, 'vitest.json')
if (existsSync(vitestFile)) {
  const v = JSON.parse(readFileSync(vitestFile, 'utf8'))
  passed += v.numPassedTests
  failures += v.numFailedTests
  skipped += v.numPendingTests + (v.numTodoTests ?? 0)
  // Name every failed test at the very end, where a truncated CI log still shows it.
  for (const file of v.testResults ?? []) {
    const rel = path.relative(ROOT, file.name)
    const bad = (file.assertionResults ?? []).filter((t) => t.status === 'failed')
    if (bad.length === 0 && file.status === 'failed') failedNames.push(`${rel}: ${firstLine(file.message)}`)
    for (const t of bad) failedNames.push(`${rel} › ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`)
  }
}
const pwFile = path.join(results, 'playwright.json')
if (existsSync(pwFile)) {
  const report = JSON.parse(readFileSync(pwFile, 'utf8'))
  passed += report.stats.expected + (report.stats.flaky ?? 0)
  failures += report.stats.unexpected
  skipped += report.stats.skipped
  const walk = (suite, titles) => {
    const here = suite.title && suite.title !== suite.file ? [...titles, suite.title] : titles
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        if (t.status !== 'unexpected') continue
        const where = `${spec.file}:${spec.line} › ${[...here, spec.title].join(' › ')}`
        failedNames.push(`${where}: ${firstLine(t.results?.at(-1)?.error?.message)}`)
      }
    }
    for (const child of suite.suites ?? []) walk(child, here)
  }
  for (const suite of report.suites ?? []) walk(suite, [])
}
for (const s of steps) console.log(`${s.code === 0 ? 'ok    ' : 'FAILED'} ${s.name} (${s.seconds.toFixed(1)} s)`)
for (const name of skippedSteps) console.log(`skipped ${name}`)
for (const name of failedNames) console.log(`failed: ${name}`)
if (failed && failures === 0) failures = steps.filter((s) => s.code !== 0).length
console.log(`Tests: ${passed} passed, ${failures} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(failed ? 1 : 0)
