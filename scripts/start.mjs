#!/usr/bin/env node
// `npm start`: install-free start of Parley. Without DATABASE_URL it runs an embedded PostgreSQL,
// migrates, seeds demo users on an empty database, builds if the build is missing or stale, and
// starts Next. `npm run dev` does the same with `next dev`.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { buildIsStale } from './build-stale.mjs'
import { ROOT, startEmbeddedApart } from './embedded-db.mjs'
import { deploy } from './migrate.mjs'
import { loadAuthSecret } from './secret.mjs'

const dev = process.argv.includes('--dev')
try {
  process.loadEnvFile(path.join(ROOT, '.env'))
} catch {}
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' }
const port = env.PORT ?? '3000'
const host = env.HOST ?? '127.0.0.1'
let embedded

// One shutdown: Ctrl+C reaches this script and the web server, whose exit then asks again. Both wait for
// the same stop, so the script exits only once nothing it started still listens.
let closing
function shutdown(code = 0) {
  closing ??= (async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await gone
    }
    if (embedded) await embedded.stop()
    console.log('Parley stopped.')
    process.exit(code)
  })()
  return closing
}
let child
process.on('SIGINT', () => shutdown(0))
process.on('SIGTERM', () => shutdown(0))
process.on('SIGHUP', () => shutdown(0))

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd: ROOT, env, stdio: 'inherit' })
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`))))
  })
}

try {
  if (!env.DATABASE_URL) {
    embedded = await startEmbeddedApart()
    env.DATABASE_URL = embedded.url
    env.PARLEY_DEMO ??= '1'
    console.log(
      `Database: embedded PostgreSQL (${embedded.reused ? 'already running' : 'started'}) on ${new URL(embedded.url).port}`,
    )
  } else {
    console.log('Database: DATABASE_URL')
  }
  // The same secret every process finds (scripts/secret.mjs): the environment, else .data/auth-secret.
  loadAuthSecret(env, { create: true })
  env.BETTER_AUTH_URL ??= `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`
  env.PORT = port
  await deploy([], { url: env.DATABASE_URL })
  if (env.PARLEY_DEMO === '1') await run(process.execPath, ['--import', 'tsx', 'prisma/seed.ts', '--if-empty'])
  if (!dev && buildIsStale(ROOT)) {
    console.log('Building Parley (first start or changed sources) …')
    await run(path.join(ROOT, 'node_modules/.bin/next'), ['build'])
  }
  // Production: scripts/serve.mjs (next start in PARLEY_WEB_PROCESSES processes, heap-limited).
  const [cmd, args] = dev
    ? [path.join(ROOT, 'node_modules/.bin/next'), ['dev']]
    : [process.execPath, [path.join(ROOT, 'scripts/serve.mjs')]]
  child = spawn(cmd, [...args, '-p', port, '-H', host], {
    cwd: ROOT,
    env,
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  child.on('exit', (code) => shutdown(code ?? 0))
  console.log(`\nParley is starting at http://${host}:${port}`)
  if (env.PARLEY_DEMO === '1') {
    console.log(
      'Demo sign-in: admin@parley.local / parley-demo (also researcher@, expert@, annotator@, viewer@parley.local)',
    )
  } else if (!env.PARLEY_ADMIN_EMAIL) {
    console.log(`No demo users: open http://${host}:${port}/setup to create the first admin.`)
  }
} catch (err) {
  console.error(`\nParley could not start: ${err?.message ?? err}`)
  await shutdown(1)
}
