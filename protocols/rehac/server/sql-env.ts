/**
 * The environment of ReHAC's InterCode-SQL task (PAPER §3.1, "Try Again": the action is an SQL statement,
 * the observation its output or error) on Parley's own PostgreSQL, kept apart from Parley's tables.
 *
 * A task set's database is an SQL file (CREATE TABLE / INSERT …, names unqualified) loaded by
 * {@link loadSqlSchema} into a schema of its own, `rehac_<slug>`:
 * - the schema is dropped and made again, so loading twice gives the same schema (idempotent);
 * - the file runs with `SET LOCAL ROLE rehac_<slug>_owner` (a NOLOGIN role owning the schema), so a file
 *   cannot write outside its schema by mistake; the file is still trusted input, like a migration;
 * - `rehac_<slug>_reader` (NOLOGIN) gets USAGE on the schema and SELECT on its tables and nothing else:
 *   any direct grant in `public` is revoked, and the load fails if the reader can SELECT any table outside
 *   its schema (Parley's tables in `public`, pg-boss's …), checked with has_table_privilege.
 * Roles belong to the whole PostgreSQL cluster, so two databases on one server share them; their grants
 * are per database.
 *
 * {@link runSqlStatement} runs one statement on a client of Parley's `sql()` pool, inside a transaction that
 * is always rolled back: `SET TRANSACTION READ ONLY` (so DROP, INSERT, UPDATE fail with PostgreSQL's own
 * `cannot execute … in a read-only transaction`), `SET LOCAL statement_timeout`, `SET LOCAL search_path`
 * to the task's schema alone, then `SET LOCAL ROLE` the reader (so a table outside it fails with
 * `permission denied for table …`). The statement goes over the extended protocol, which takes exactly one
 * statement ("cannot insert multiple commands into a prepared statement"), and is executed with a row
 * limit: the Execute message asks for at most maxRows + 1 rows and the portal is then dropped, so a huge
 * result never leaves the server (the +1 tells that there were more).
 *
 * The weak point of SET ROLE: the reader acts inside a session whose own user is Parley's, and PostgreSQL
 * lets a statement switch the role back (`SET ROLE`, `RESET ROLE`, `set_config('role', …)`, a DO block).
 * {@link screenStatement} therefore refuses, before anything runs, the statements that can: SET, RESET, DO
 * and transaction or session control, any mention of set_config or session_authorization, U& escapes
 * (which could spell those names), and the built-in functions that run SQL text (query_to_xml and its
 * family, ts_stat, ts_rewrite, dblink), through which a name could be built at run time. A LOGIN role with
 * a pool of its own would not need the screen (not done: it needs a password and pg_hba rules of its own).
 */
import pg from 'pg'
import { sql } from '@/lib/server/sdk'
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
  await client.query(
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN
         CREATE ROLE ${ident(role)} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
       END IF;
     EXCEPTION WHEN duplicate_object THEN NULL;
     END $$`,
  )
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
 * Why a statement is refused before it runs (see the header), or null. The checks read the raw text,
 * lower-cased, so they also fire inside string literals and comments: a false refusal costs a step,
 * a miss would hand Parley's tables over.
 */
export function screenStatement(statement: string): string | null {
  const text = statement.trim()
  if (!text) return 'the statement is empty'
  if (text.length > SQL_LIMITS.maxStatementChars)
    return `the statement is longer than ${SQL_LIMITS.maxStatementChars} characters`
  if (text.includes('\0')) return 'the statement contains a NUL character'
  const lower = text.toLowerCase()
  // The first word, after leading comments and parentheses.
  const first = /^(?:\s|\(|--[^\n]*\n?|\/\*[\s\S]*?\*\/)*([a-z]+)/.exec(lower)?.[1] ?? ''
  const control = [
    'set',
    'reset',
    'do',
    'begin',
    'start',
    'commit',
    'end',
    'rollback',
    'abort',
    'savepoint',
    'release',
    'prepare',
    'execute',
    'deallocate',
    'discard',
    'listen',
    'unlisten',
    'notify',
    'load',
    'copy',
    'call',
    'declare',
    'fetch',
    'move',
    'close',
  ]
  if (control.includes(first)) return `${first.toUpperCase()} statements are not allowed here`
  const names = [
    'set_config',
    'session_authorization',
    'query_to_xml',
    'cursor_to_xml',
    'table_to_xml',
    'schema_to_xml',
    'database_to_xml',
    'ts_stat',
    'ts_rewrite',
    'dblink',
    // UPDATE pg_settings calls set_config through a rule (the read-only transaction stops it too).
    'pg_settings',
  ]
  // A name counts at the start of an identifier only (`dataset_config` is not set_config); a longer name
  // that starts with one (query_to_xmlschema) is refused with it.
  for (const n of names) if (new RegExp(`(^|[^a-z0-9_$])${n}`).test(lower)) return `${n} is not allowed here`
  if (/\bu&\s*['"]/.test(lower)) return 'U& escapes are not allowed here'
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

/** Run one statement in the task set's schema as its reader; see the header. Never writes, never throws for SQL errors. */
export async function runSqlStatement(slug: string, statement: string, options: RunOptions = {}): Promise<SqlRun> {
  const { schema, reader } = sqlNames(slug)
  const refused = screenStatement(statement)
  if (refused) return { ok: false, error: `refused: ${refused}` }
  const maxRows = options.maxRows ?? SQL_LIMITS.maxRows
  const timeout = Math.max(1, Math.floor(options.timeoutMs ?? SQL_LIMITS.statementTimeoutMs))
  const client = await sql().connect()
  let broken: Error | undefined
  try {
    await client.query('BEGIN')
    await client.query('SET TRANSACTION READ ONLY')
    await client.query(`SET LOCAL statement_timeout = ${timeout}`)
    await client.query(`SET LOCAL search_path = ${ident(schema)}`)
    await client.query(`SET LOCAL ROLE ${ident(reader)}`)
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
  } catch (err) {
    broken = err instanceof Error ? err : new Error(String(err))
    throw err
  } finally {
    try {
      await client.query('ROLLBACK')
    } catch (err) {
      broken ??= err instanceof Error ? err : new Error(String(err))
    }
    // A client whose rollback failed is not handed back to the pool.
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
  const goldRun = await runSqlStatement(slug, gold, { maxRows: SQL_LIMITS.rewardMaxRows })
  if (!goldRun.ok) throw new Error(`the gold query fails: ${goldRun.error}`)
  const run = await runSqlStatement(slug, statement, { maxRows: SQL_LIMITS.rewardMaxRows })
  if (!run.ok) return { reward: 0, run, capped: goldRun.truncated }
  return { reward: multisetIoU(run.rows, goldRun.rows), run, capped: run.truncated || goldRun.truncated }
}
