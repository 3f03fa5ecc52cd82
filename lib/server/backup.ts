import { createReadStream, createWriteStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { PassThrough, type Readable, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
import pg from 'pg'
import { from as copyFrom, to as copyTo } from 'pg-copy-streams'

/**
 * `parley db export` / `parley db import`: a logical copy of Parley's data without `pg_dump`, for
 * installs on the embedded PostgreSQL (whose npm package ships no client tools, and whose version a
 * system `pg_dump` is usually too old for). The file is plain SQL that `psql` can also load:
 * one `COPY … FROM stdin` block per table (images included: they are rows of `Asset`), parents before
 * children, in one transaction, after a header naming the migrations it was taken at. The schema is
 * not in it: the target database is migrated to the same migrations first (`npm run db:migrate`),
 * which `importDatabase` checks. Ephemeral tables (heartbeats, LLM leases and buckets) and the job
 * queue are left out; after an import the sessions of running runs are queued again.
 * With a file name ending in `.gz` the file is gzip-compressed.
 */
export const SKIPPED_TABLES = new Set(['_prisma_migrations', 'WorkerProcess', 'LlmLease', 'LlmLimitState'])
const HEADER = '-- parley-export: '

interface Header {
  version: 1
  created: string
  migrations: string[]
  tables: Record<string, number>
}

const q = (ident: string) => `"${ident.replaceAll('"', '""')}"`

/** Public tables, parents before children (foreign keys), without the skipped ones. */
async function tablesInOrder(client: pg.ClientBase): Promise<string[]> {
  const { rows: tables } = await client.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  )
  const { rows: fks } = await client.query<{ child: string; parent: string }>(
    `SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE k.contype = 'f' AND n.nspname = 'public' AND k.conrelid <> k.confrelid`,
  )
  const names = tables.map((t) => t.name).filter((n) => !SKIPPED_TABLES.has(n))
  const parents = new Map(names.map((n) => [n, new Set<string>()]))
  for (const fk of fks) if (parents.has(fk.child) && parents.has(fk.parent)) parents.get(fk.child)?.add(fk.parent)
  const out: string[] = []
  const done = new Set<string>()
  while (out.length < names.length) {
    const ready = names.filter((n) => !done.has(n) && [...(parents.get(n) ?? [])].every((p) => done.has(p)))
    if (!ready.length) throw new Error('the foreign keys form a cycle; use pg_dump')
    for (const n of ready) {
      done.add(n)
      out.push(n)
    }
  }
  return out
}

async function migrations(client: pg.ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT migration_name AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL
     ORDER BY migration_name`,
  )
  return rows.map((r) => r.name)
}

/** Write the export of the database at `url` to `file` (`-` for stdout). Returns the rows per table. */
export async function exportDatabase(url: string, file: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url, application_name: 'parley-export' })
  await client.connect()
  const sink: Writable = file === '-' ? process.stdout : createWriteStream(file)
  const out = new PassThrough()
  const done = file.endsWith('.gz') ? pipeline(out, createGzip(), sink) : pipeline(out, sink)
  try {
    // One snapshot for every table.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    const tables = await tablesInOrder(client)
    const counts: Record<string, number> = {}
    for (const t of tables) {
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${q(t)}`)
      counts[t] = Number(rows[0]?.n ?? 0)
    }
    const header: Header = {
      version: 1,
      created: new Date().toISOString(),
      migrations: await migrations(client),
      tables: counts,
    }
    out.write(
      `-- Parley database export (data only). Load into a database migrated to the same migrations:\n` +
        `--   npm run db:migrate && npx parley db import <this file>   (or: psql -v ON_ERROR_STOP=1 -f <this file>)\n` +
        `${HEADER}${JSON.stringify(header)}\nBEGIN;\n`,
    )
    for (const t of tables) {
      const { rows: cols } = await client.query<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped
         ORDER BY attnum`,
        [q(t)],
      )
      const columns = cols.map((c) => q(c.name)).join(', ')
      out.write(`COPY ${q(t)} (${columns}) FROM stdin;\n`)
      const stream = client.query(copyTo(`COPY ${q(t)} (${columns}) TO STDOUT`))
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (!out.write(chunk)) await new Promise((r) => out.once('drain', r))
      }
      out.write('\\.\n')
    }
    out.end('COMMIT;\n')
    await client.query('COMMIT')
    await done
    return counts
  } catch (err) {
    out.destroy(err as Error)
    throw err
  } finally {
    await client.end()
  }
}

/**
 * Load an export into the (migrated, empty) database at `url`, in one transaction. Refuses when the
 * database's migrations differ from the export's, or when it already holds users.
 */
export async function importDatabase(url: string, file: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url, application_name: 'parley-import' })
  await client.connect()
  // Read only once connected: readline emits lines as soon as it exists, and lines emitted before
  // the loop below asks for them are lost.
  const raw: Readable = file === '-' ? process.stdin : createReadStream(file)
  const input = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
  const counts: Record<string, number> = {}
  try {
    let header: Header | undefined
    let copy: Writable | undefined
    let copyDone: Promise<void> | undefined
    let table = ''
    let committed = false
    for await (const line of lines) {
      if (copy) {
        if (line === '\\.') {
          copy.end()
          await copyDone
          copy = undefined
          continue
        }
        counts[table] = (counts[table] ?? 0) + 1
        if (!copy.write(`${line}\n`)) await new Promise((r) => copy?.once('drain', r))
        continue
      }
      if (line.startsWith(HEADER)) {
        header = JSON.parse(line.slice(HEADER.length)) as Header
        const have = await migrations(client)
        const want = header.migrations
        if (have.join(',') !== want.join(',')) {
          const missing = want.filter((m) => !have.includes(m))
          throw new Error(
            `the database's migrations differ from the export's (${missing.length ? `missing ${missing.join(', ')}` : `the database has ${have.length - want.length} more`}): migrate it with the same Parley version first`,
          )
        }
        const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM "user"')
        if (Number(rows[0]?.n) > 0) throw new Error('the database is not empty (it has users): import into a fresh one')
        continue
      }
      if (line === 'BEGIN;') {
        if (!header) throw new Error('not a Parley export (no header line)')
        await client.query('BEGIN')
        continue
      }
      if (line === 'COMMIT;') {
        for (const [t, n] of Object.entries(header?.tables ?? {}))
          if ((counts[t] ?? 0) !== n) throw new Error(`table ${t}: expected ${n} rows, read ${counts[t] ?? 0}`)
        await client.query('COMMIT')
        committed = true
        continue
      }
      const m = /^COPY "((?:[^"]|"")+)" \(.*\) FROM stdin;$/.exec(line)
      if (m) {
        table = (m[1] ?? '').replaceAll('""', '"')
        const stream = client.query(copyFrom(line.replace(/ FROM stdin;$/, ' FROM STDIN')))
        copy = stream
        copyDone = new Promise<void>((resolve, reject) => {
          stream.on('finish', resolve)
          stream.on('error', reject)
        })
        continue
      }
      if (line.startsWith('--') || line === '') continue
      throw new Error(`unexpected line in the export: ${line.slice(0, 80)}`)
    }
    if (!header || !committed) throw new Error('the export is incomplete (no COMMIT): nothing was imported')
    return counts
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    await client.end()
  }
}
