/**
 * The environment of ReHAC's InterCode-SQL task (PAPER §3.1, "Try Again": the action is an SQL statement,
 * the observation its output or error) on Parley's own PostgreSQL, kept apart from Parley's tables.
 *
 * A task set's database is an SQL file (CREATE TABLE / INSERT …, names unqualified) loaded by
 * {@link loadSqlSchema} into a schema of its own, `rehac_<slug>`:
 * - the schema is dropped and made again, so loading twice gives the same schema (idempotent);
 * - the file runs with `SET LOCAL ROLE rehac_<slug>_owner` (a NOLOGIN role owning the schema), so a file
 *   cannot write outside its schema by mistake; the file is still trusted input, like a migration;
 * - `rehac_<slug>_reader` is a LOGIN role (NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION
 *   NOBYPASSRLS, CONNECTION LIMIT 8) with CONNECT on the database, USAGE on the schema and SELECT on its
 *   tables, nothing else: any direct grant in `public` is revoked, and the load fails if the reader can
 *   SELECT a table outside its schema or call a SECURITY DEFINER function outside the system schemas.
 *   Its password is never stored: it is HMAC-SHA256 keyed with BETTER_AUTH_SECRET of the role name, hex
 *   ({@link readerPassword}), so every Parley
 *   process derives the same one, and each load sets it again (as a SCRAM verifier computed here, so the
 *   clear text never reaches the server's logs): a changed secret heals on the next load. The role's
 *   defaults are read-only transactions, a statement timeout, an idle-in-transaction timeout and
 *   search_path = its schema alone.
 * Roles belong to the whole PostgreSQL cluster, so two databases on one server share them; their grants
 * are per database.
 *
 * {@link runSqlStatement} runs an annotator's or a model's statement on a connection of the reader's own
 * small pool (its session user is the reader, so nothing in the statement can become Parley's user:
 * `SET ROLE`, `set_config('role', …)`, `SET SESSION AUTHORIZATION` fail with PostgreSQL's `permission
 * denied`), inside `BEGIN READ ONLY` with `SET LOCAL statement_timeout`, always rolled back and followed
 * by `DISCARD ALL` (for what survives a rollback: session advisory locks, prepared statements, and
 * whatever a statement that ends the transaction itself, a COMMIT, leaves). A connection on which anything failed is closed, not
 * reused. The statement goes over the extended protocol, which takes exactly one statement ("cannot insert
 * multiple commands into a prepared statement"), and is executed with a row limit: the Execute message asks
 * for at most maxRows + 1 rows and the portal is then dropped, so a huge result never leaves the server
 * (the +1 tells that there were more).
 *
 * What the reader can still do, as any role can: read the system catalogs (names of Parley's tables and
 * columns, not their rows), see the text of statements that other sessions *of the same reader* run now
 * (pg_stat_activity; so the gold query of {@link sqlReward} does not run as the reader but on Parley's pool
 * as the schema's owner, whose statements the reader cannot see), cancel those same sessions, and use what
 * PUBLIC holds: TEMP on the database (useless here: CREATE is refused in a read-only transaction and
 * DISCARD ALL drops temporary tables; not revoked from PUBLIC because that would change the whole
 * database for every role, not this sandbox), EXECUTE on functions (Parley's own are plain SQL
 * functions; a SECURITY DEFINER one would fail the load), CONNECT on other databases (useless without the
 * password, which only Parley can derive). A statement may also raise its own work_mem for up to the
 * statement timeout.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto'
import pg from 'pg'
import { settings, sql } from '@/lib/server/sdk'
import { multisetIoU, type SqlRow } from '../core/sql-reward'

export const SQL_LIMITS = {
  /** Characters of one statement (an action). */
  maxStatementChars: 4_000,
  /** Characters of a schema file. */
  maxSchemaChars: 2_000_000,
  /** Rows fetched for an observation; more are not read (the observation says so). */
  maxRows: 200,
  /** Rows fetched for the reward (both queries); past it the IoU is computed on the first rows. */
  rewardMaxRows: 10_000,
  /** Rows and characters shown in an observation. */
  shownRows: 30,
  maxCellChars: 200,
  maxObservationChars: 4_000,
  statementTimeoutMs: 3_000,
  /** The reader role's defaults (a backstop: each run sets its own statement timeout). */
  idleInTransactionMs: 10_000,
  /** Connections of one reader: per process in its pool, and in all (the role's CONNECTION LIMIT). */
  readerPoolMax: 2,
  readerConnectionLimit: 8,
} as const

const SLUG = /^[a-z][a-z0-9_]{0,39}$/

/** A task set's schema and roles. The slug is lower-case letters, digits and _, at most 40 characters. */
export function sqlNames(slug: string): { schema: string; owner: string; reader: string } {
  if (!SLUG.test(slug)) throw new Error(`bad SQL task set slug "${slug}": use a-z, 0-9 and _, starting with a letter`)
  return { schema: `rehac_${slug}`, owner: `rehac_${slug}_owner`, reader: `rehac_${slug}_reader` }
}

/** Names made by {@link sqlNames} only (checked there), so quoting is all that is needed. */
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`

async function ensureRole(client: pg.PoolClient, role: string): Promise<void> {
  // CREATE ROLE has no IF NOT EXISTS; two loads at once may race here, hence the duplicate_object catch.
  // The attributes are set again by ALTER ROLE for the reader (a role made by an older Parley was NOLOGIN).
  await client.query(
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN
         CREATE ROLE ${ident(role)} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
       END IF;
     EXCEPTION WHEN duplicate_object THEN NULL;
     END $$`,
  )
}

/** The app secret, as the config reads it (every Parley process has the same). */
function appSecret(): string {
  const secret = settings(['BETTER_AUTH_SECRET']).BETTER_AUTH_SECRET
  if (!secret) throw new Error('BETTER_AUTH_SECRET is not set: the SQL environment derives its reader password from it')
  return secret
}

/**
 * The reader's password: derived from the app secret, never stored. The role name is prefixed with what the
 * key is for, so this HMAC never equals one that other code (Better Auth's cookie signatures) makes with
 * the same secret.
 */
export function readerPassword(role: string, secret: string = appSecret()): string {
  return createHmac('sha256', secret).update(`parley:rehac-sql-reader:${role}`).digest('hex')
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802/7677, PostgreSQL's format
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`). ALTER ROLE … PASSWORD takes it as it is,
 * so the clear text is not in the statement (which the server may log). It also works with the `md5` and
 * `password` methods of pg_hba.conf.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256')
  const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest()
  const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest()
  const serverKey = hmac(salted, 'Server Key')
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`
}

const globalForReaders = globalThis as unknown as { parleyRehacReaders?: Map<string, { key: string; pool: pg.Pool }> }

/**
 * The reader's own pool, on DATABASE_URL's host, port, database and options with the reader as user. Made
 * again when the password (the secret) or the URL changes; the old pool is ended.
 */
function readerPool(role: string): pg.Pool {
  globalForReaders.parleyRehacReaders ??= new Map()
  const readers = globalForReaders.parleyRehacReaders
  const url = settings(['DATABASE_URL']).DATABASE_URL
  if (!url) throw new Error('DATABASE_URL is not set')
  const reader = new URL(url)
  reader.username = role
  reader.password = readerPassword(role)
  const key = reader.toString()
  const known = readers.get(role)
  if (known?.key === key) return known.pool
  if (known) known.pool.end().catch(() => {})
  const pool = new pg.Pool({
    connectionString: key,
    max: SQL_LIMITS.readerPoolMax,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
    application_name: 'parley-rehac-sql',
  })
  // An idle connection that ends (a statement may terminate its own role's backends) is dropped by the pool.
  pool.on('error', () => {})
  readers.set(role, { key, pool })
  return pool
}

/** End the readers' pools (tests; a process that stops). */
export async function endSqlReaders(): Promise<void> {
  const readers = globalForReaders.parleyRehacReaders
  globalForReaders.parleyRehacReaders = undefined
  await Promise.all([...(readers?.values() ?? [])].map((r) => r.pool.end().catch(() => {})))
}

export interface LoadedSchema {
  schema: string
  reader: string
  /** The tables of the schema, by name. */
  tables: string[]
}

/** Load (or load again) a task set's SQL file into its own schema; see the header. */
export async function loadSqlSchema(slug: string, schemaSql: string): Promise<LoadedSchema> {
  const { schema, owner, reader } = sqlNames(slug)
  if (schemaSql.length > SQL_LIMITS.maxSchemaChars)
    throw new Error(`the SQL file of "${slug}" is longer than ${SQL_LIMITS.maxSchemaChars} characters`)
  // Roles are cluster-wide and outside the transaction's rollback on some failures: made first, idempotently.
  const roleClient = await sql().connect()
  try {
    await ensureRole(roleClient, owner)
    await ensureRole(roleClient, reader)
    // Every load: the password of the current secret, and the attributes and defaults in full. NOSUPERUSER,
    // NOREPLICATION and NOBYPASSRLS are named only when the role has one of them: PostgreSQL lets only a
    // superuser name those in ALTER ROLE, and Parley's user may be a CREATEROLE one (CREATE ROLE above made
    // them false; a reader that has one and a Parley that may not remove it must fail here).
    const { rows: attrs } = await roleClient.query<{ strong: boolean }>(
      'SELECT rolsuper OR rolreplication OR rolbypassrls AS strong FROM pg_roles WHERE rolname = $1',
      [reader],
    )
    const strong = attrs[0]?.strong ? 'NOSUPERUSER NOREPLICATION NOBYPASSRLS' : ''
    await roleClient.query(
      `ALTER ROLE ${ident(reader)} LOGIN NOCREATEDB NOCREATEROLE NOINHERIT ${strong}
         CONNECTION LIMIT ${SQL_LIMITS.readerConnectionLimit} PASSWORD '${scramVerifier(readerPassword(reader))}'`,
    )
    // RESET ALL first: a default the role was given otherwise (by hand, by an older Parley) does not stay.
    await roleClient.query(`ALTER ROLE ${ident(reader)} RESET ALL`)
    for (const setting of [
      'default_transaction_read_only = on',
      `statement_timeout = ${SQL_LIMITS.statementTimeoutMs}`,
      `idle_in_transaction_session_timeout = ${SQL_LIMITS.idleInTransactionMs}`,
      `search_path = ${ident(schema)}`,
    ])
      await roleClient.query(`ALTER ROLE ${ident(reader)} SET ${setting}`)
  } finally {
    roleClient.release()
  }
  const client = await sql().connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rehac-sql:${schema}`])
    await client.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`)
    await client.query(`CREATE SCHEMA ${ident(schema)} AUTHORIZATION ${ident(owner)}`)
    await client.query(`SET LOCAL search_path = ${ident(schema)}`)
    await client.query(`SET LOCAL ROLE ${ident(owner)}`)
    await client.query(schemaSql)
    await client.query('RESET ROLE')
    await client.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${ident(reader)}, ${ident(owner)}`)
    await client.query(`REVOKE ALL ON SCHEMA public FROM ${ident(reader)}, ${ident(owner)}`)
    const { rows: dbs } = await client.query<{ name: string }>('SELECT current_database() AS name')
    await client.query(`GRANT CONNECT ON DATABASE ${ident(dbs[0]?.name ?? '')} TO ${ident(reader)}`)
    await client.query(`GRANT USAGE ON SCHEMA ${ident(schema)} TO ${ident(reader)}`)
    await client.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${ident(schema)} TO ${ident(reader)}`)
    const { rows: leaks } = await client.query<{ name: string }>(
      `SELECT n.nspname || '.' || c.relname AS name
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
          AND n.nspname <> $1 AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
          AND has_table_privilege($2, c.oid, 'SELECT')
        ORDER BY 1 LIMIT 10`,
      [schema, reader],
    )
    if (leaks.length)
      throw new Error(
        `the role ${reader} can read tables outside ${schema} (${leaks.map((l) => l.name).join(', ')}): revoke that before loading`,
      )
    // A SECURITY DEFINER function runs as its owner: one the reader can call would be a way out.
    const { rows: definers } = await client.query<{ name: string }>(
      `SELECT n.nspname || '.' || p.proname AS name
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND has_schema_privilege($1, n.oid, 'USAGE') AND has_function_privilege($1, p.oid, 'EXECUTE')
        ORDER BY 1 LIMIT 10`,
      [reader],
    )
    if (definers.length)
      throw new Error(
        `the role ${reader} can call SECURITY DEFINER functions (${definers.map((d) => d.name).join(', ')}): revoke EXECUTE before loading`,
      )
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'm', 'p') ORDER BY 1`,
      [schema],
    )
    await client.query('COMMIT')
    return { schema, reader, tables: tables.map((t) => t.name) }
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.release()
  }
}

/**
 * Why a statement is refused before it runs, or null: only what the database cannot judge. The sandbox is
 * the reader role (see the header), not this text; so `SET ROLE`, `DO`, `query_to_xml` and the rest reach
 * PostgreSQL, which refuses what the reader may not do with its own message.
 * - empty: the extended protocol would run nothing and say nothing;
 * - longer than {@link SQL_LIMITS.maxStatementChars}: a bound on what is stored and sent;
 * - a NUL character: the protocol sends the text as a C string, so the server would run only the part
 *   before it, not the statement that is recorded.
 */
export function screenStatement(statement: string): string | null {
  const text = statement.trim()
  if (!text) return 'the statement is empty'
  if (text.length > SQL_LIMITS.maxStatementChars)
    return `the statement is longer than ${SQL_LIMITS.maxStatementChars} characters`
  if (text.includes('\0')) return 'the statement contains a NUL character'
  return null
}

export interface SqlColumn {
  name: string
  /** Shown without quotes (numbers), as True/False (booleans), or quoted (the rest), as InterCode's Python did. */
  kind: 'number' | 'bool' | 'text'
}

export type SqlRun =
  | { ok: true; columns: SqlColumn[]; rows: SqlRow[]; truncated: boolean; command: string }
  | { ok: false; error: string }

// PostgreSQL type OIDs shown as numbers: int2, int4, int8, oid, float4, float8, numeric.
const NUMBER_TYPES = new Set([21, 23, 20, 26, 700, 701, 1700])
const BOOL_TYPE = 16
/** Every value as PostgreSQL's text output (the reward compares text). */
const TEXT_TYPES = { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig

/**
 * A query that fetches at most `cap` + 1 rows. pg's Query with `rows` would ask for the next batch on
 * PortalSuspended; this one syncs instead (the portal is dropped, the rest is never produced), and syncs
 * after an error too (pg leaves that to the caller when `rows` is set; without it the connection waits).
 */
class CappedQuery extends pg.Query {
  suspended = false
  private synced = false
  constructor(text: string, cap: number, callback: (err: Error | undefined, result: pg.QueryResult) => void) {
    super(
      { text, rows: cap + 1, rowMode: 'array', types: TEXT_TYPES, queryMode: 'extended' } as pg.QueryConfig,
      callback as never,
    )
  }
  handlePortalSuspended(connection: { sync(): void }) {
    this.suspended = true
    this.synced = true
    connection.sync()
  }
  handleCommandComplete(msg: unknown, connection: { sync(): void }) {
    this.synced = true
    ;(
      pg.Query.prototype as unknown as { handleCommandComplete: (m: unknown, c: unknown) => void }
    ).handleCommandComplete.call(this, msg, connection)
  }
  handleEmptyQuery(connection: { sync(): void }) {
    this.synced = true
    connection.sync()
  }
  handleError(err: Error, connection: { sync(): void }) {
    if (!this.synced) {
      this.synced = true
      // A dead connection (the error is its end) has nothing to sync; the pool then drops the client.
      try {
        connection.sync()
      } catch {}
    }
    ;(pg.Query.prototype as unknown as { handleError: (e: Error, c: unknown) => void }).handleError.call(
      this,
      err,
      connection,
    )
  }
}

function runCapped(
  client: pg.PoolClient,
  text: string,
  cap: number,
): Promise<{ result: pg.QueryResult; suspended: boolean }> {
  return new Promise((resolve, reject) => {
    const q: CappedQuery = new CappedQuery(text, cap, (err, result) => {
      if (err) reject(err)
      else resolve({ result, suspended: q.suspended })
    })
    client.query(q as never)
  })
}

export interface RunOptions {
  maxRows?: number
  timeoutMs?: number
}

/** The run of a statement on a client whose transaction is open and set; SQL errors are the result. */
async function execute(client: pg.PoolClient, statement: string, maxRows: number): Promise<SqlRun> {
  try {
    const { result, suspended } = await runCapped(client, statement.trim(), maxRows)
    const fields = result.fields ?? []
    const columns: SqlColumn[] = fields.map((f) => ({
      name: f.name,
      kind: NUMBER_TYPES.has(f.dataTypeID) ? 'number' : f.dataTypeID === BOOL_TYPE ? 'bool' : 'text',
    }))
    const all = (result.rows ?? []) as unknown as SqlRow[]
    return {
      ok: true,
      columns,
      rows: all.slice(0, maxRows),
      truncated: suspended || all.length > maxRows,
      command: result.command ?? '',
    }
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) }
  }
}

const timeoutOf = (options: RunOptions) => Math.max(1, Math.floor(options.timeoutMs ?? SQL_LIMITS.statementTimeoutMs))

/**
 * Run one statement in the task set's schema as its reader, over the reader's own pool; see the header.
 * Never writes, never throws for SQL errors (the observation is PostgreSQL's message); throws when the
 * reader cannot connect (the task set is not loaded, or the database refuses the login).
 */
export async function runSqlStatement(slug: string, statement: string, options: RunOptions = {}): Promise<SqlRun> {
  const { reader } = sqlNames(slug)
  const refused = screenStatement(statement)
  if (refused) return { ok: false, error: `refused: ${refused}` }
  const maxRows = options.maxRows ?? SQL_LIMITS.maxRows
  const client = await readerPool(reader).connect()
  let broken: Error | undefined
  // A connection that ends while checked out (a statement may terminate its own backend) reports it here;
  // without a listener that would be an uncaught error.
  const onError = (err: Error) => {
    broken ??= err
  }
  client.on('error', onError)
  try {
    // One simple query: both run, or the error closes the connection below.
    await client.query(`BEGIN READ ONLY; SET LOCAL statement_timeout = ${timeoutOf(options)}`)
    const run = await execute(client, statement, maxRows)
    // A connection on which the statement failed is not reused: its state is whatever the error left.
    if (!run.ok) broken = new Error(run.error)
    return run
  } catch (err) {
    broken ??= err instanceof Error ? err : new Error(String(err))
    throw err
  } finally {
    try {
      await client.query('ROLLBACK')
      await client.query('DISCARD ALL')
    } catch (err) {
      broken ??= err instanceof Error ? err : new Error(String(err))
    }
    client.off('error', onError)
    client.release(broken)
  }
}

/**
 * A task's gold query: trusted text of the task set, run on Parley's pool as the schema's owner (read-only,
 * rolled back). Not as the reader: pg_stat_activity shows a role the statements its other sessions run,
 * and an annotator's statement running at the same moment would see the answer.
 */
async function runGold(slug: string, gold: string, options: RunOptions = {}): Promise<SqlRun> {
  const { schema, owner } = sqlNames(slug)
  const client = await sql().connect()
  let broken: Error | undefined
  try {
    await client.query(
      `BEGIN READ ONLY; SET LOCAL statement_timeout = ${timeoutOf(options)}; SET LOCAL search_path = ${ident(schema)}; SET LOCAL ROLE ${ident(owner)}`,
    )
    return await execute(client, gold, options.maxRows ?? SQL_LIMITS.rewardMaxRows)
  } catch (err) {
    broken = err instanceof Error ? err : new Error(String(err))
    throw err
  } finally {
    try {
      await client.query('ROLLBACK')
    } catch (err) {
      broken ??= err instanceof Error ? err : new Error(String(err))
    }
    client.release(broken)
  }
}

function pyText(v: string): string {
  const quote = v.includes("'") && !v.includes('"') ? '"' : "'"
  const body = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote
}

function cell(v: string | null, kind: SqlColumn['kind']): string {
  if (v === null) return 'None'
  const s = v.length > SQL_LIMITS.maxCellChars ? `${v.slice(0, SQL_LIMITS.maxCellChars)}…` : v
  if (kind === 'number') return s
  if (kind === 'bool') return v === 't' ? 'True' : 'False'
  return pyText(s)
}

/**
 * The observation for a run, as InterCode showed MySQL's fetchall(): a list of tuples,
 * `[('The Salt Road', 14.50), ('Winter Ledger', 16.00)]`, numbers bare, NULL as None; at most
 * {@link SQL_LIMITS.shownRows} rows and {@link SQL_LIMITS.maxObservationChars} characters, then a note of
 * how many there were. A statement without rows shows its command tag; an error shows PostgreSQL's message.
 */
export function sqlObservation(run: SqlRun): string {
  if (!run.ok) return run.error
  if (run.columns.length === 0) return run.command || 'OK'
  const total = run.rows.length
  const shown = run.rows.slice(0, SQL_LIMITS.shownRows)
  let text = '['
  let count = 0
  for (const row of shown) {
    const cells = row.map((v, i) => cell(v, run.columns[i]?.kind ?? 'text'))
    const tuple = `(${cells.join(', ')}${cells.length === 1 ? ',' : ''})`
    const next = `${count ? `${text}, ` : text}${tuple}`
    if (next.length > SQL_LIMITS.maxObservationChars - 60) break
    text = next
    count++
  }
  text += ']'
  if (count < total || run.truncated) {
    const of = run.truncated ? `more than ${total}` : `${total}`
    text += ` (${count} of ${of} rows shown)`
  }
  return text
}

export interface SqlReward {
  /** T: the multiset IoU of the rows (core/sql-reward.ts); 0 when the statement fails. */
  reward: number
  run: SqlRun
  /** One of the two results had more rows than {@link SQL_LIMITS.rewardMaxRows}: the IoU is of the first ones. */
  capped: boolean
}

/** T for a statement against the task's gold query; a gold query that fails is the task's error and throws. */
export async function sqlReward(slug: string, statement: string, gold: string): Promise<SqlReward> {
  const goldRun = await runGold(slug, gold, { maxRows: SQL_LIMITS.rewardMaxRows })
  if (!goldRun.ok) throw new Error(`the gold query fails: ${goldRun.error}`)
  const run = await runSqlStatement(slug, statement, { maxRows: SQL_LIMITS.rewardMaxRows })
  if (!run.ok) return { reward: 0, run, capped: goldRun.truncated }
  return { reward: multisetIoU(run.rows, goldRun.rows), run, capped: run.truncated || goldRun.truncated }
}
