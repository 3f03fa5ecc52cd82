import { readFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { parseSqlTasksJsonl } from '../core/sql-reward'
import {
  endSqlReaders,
  loadSqlSchema,
  readerPassword,
  runSqlStatement,
  SQL_LIMITS,
  type SqlRun,
  screenStatement,
  sqlNames,
  sqlObservation,
  sqlReward,
  scramVerifier,
} from '../server/sql-env'

const DEMO = path.resolve(import.meta.dirname, '../demo')
const SHOP_SQL = readFileSync(path.join(DEMO, 'shop.sql'), 'utf8')
const TASKS = parseSqlTasksJsonl(readFileSync(path.join(DEMO, 'sql-tasks.jsonl'), 'utf8'))
const SLUG = 'shoptest'

afterAll(async () => {
  await endSqlReaders()
  await db.$disconnect()
})

/** Counted as Parley's own connection (not the reader): what the refused statements must leave alone. */
async function counts() {
  const q = async (text: string) => Number((await sql().query<{ n: string }>(text)).rows[0]?.n)
  return {
    books: await q('SELECT count(*) AS n FROM rehac_shoptest.book'),
    stock: await q('SELECT sum(stock) AS n FROM rehac_shoptest.book'),
    authors: await q('SELECT count(*) AS n FROM rehac_shoptest.author'),
    users: await q('SELECT count(*) AS n FROM public."user"'),
    sessions: await q('SELECT count(*) AS n FROM public."ProtocolSession"'),
  }
}

const rowsOf = (run: SqlRun) => (run.ok ? run.rows : run.error)

beforeAll(async () => {
  await loadSqlSchema(SLUG, SHOP_SQL)
})

describe('loading a task set', () => {
  it('puts the tables in their own schema, readable by the reader alone, a login role of no power', async () => {
    // What a load takes away again: powers and defaults given to the role outside it.
    await sql().query(
      "ALTER ROLE rehac_shoptest_reader SUPERUSER BYPASSRLS CREATEDB NOLOGIN; ALTER ROLE rehac_shoptest_reader SET work_mem = '1GB'",
    )
    const loaded = await loadSqlSchema(SLUG, SHOP_SQL)
    expect(loaded).toEqual({
      schema: 'rehac_shoptest',
      reader: 'rehac_shoptest_reader',
      tables: ['author', 'book', 'customer', 'purchase', 'purchase_item'],
    })
    const { rows } = await sql().query(
      `SELECT has_table_privilege('rehac_shoptest_reader', 'public."user"', 'SELECT') AS can,
              has_table_privilege('rehac_shoptest_reader', 'rehac_shoptest.book', 'SELECT') AS own,
              has_table_privilege('rehac_shoptest_reader', 'rehac_shoptest.book', 'INSERT') AS write,
              has_schema_privilege('rehac_shoptest_reader', 'rehac_shoptest', 'CREATE') AS "create",
              has_database_privilege('rehac_shoptest_reader', current_database(), 'CONNECT') AS connect,
              r.rolcanlogin AS login, r.rolsuper AS super, r.rolcreaterole AS createrole, r.rolcreatedb AS createdb,
              r.rolinherit AS inherit, r.rolreplication AS replication, r.rolbypassrls AS bypassrls,
              r.rolconnlimit AS connlimit, r.rolconfig AS config,
              (SELECT count(*)::int FROM pg_auth_members m WHERE m.member = r.oid) AS memberships
         FROM pg_roles r WHERE r.rolname = 'rehac_shoptest_reader'`,
    )
    expect(rows[0]).toEqual({
      can: false,
      own: true,
      write: false,
      create: false,
      connect: true,
      login: true,
      super: false,
      createrole: false,
      createdb: false,
      inherit: false,
      replication: false,
      bypassrls: false,
      connlimit: 8,
      config: [
        'default_transaction_read_only=on',
        'statement_timeout=3000',
        'idle_in_transaction_session_timeout=10000',
        'search_path=rehac_shoptest',
      ],
      memberships: 0,
    })
  })

  it('is idempotent: a second load gives the same tables and rows', async () => {
    const before = await counts()
    await loadSqlSchema(SLUG, SHOP_SQL)
    await loadSqlSchema(SLUG, SHOP_SQL)
    expect(await counts()).toEqual(before)
    expect(before).toMatchObject({ books: 15, stock: 117, authors: 8 })
  })

  it('sets the password of the current secret on every load, so a changed secret heals', async () => {
    const role = 'rehac_shoptest_reader'
    // Hand-checked: openssl dgst -sha256 -hmac <the test secret>, and Python's hashlib for the verifier.
    expect(readerPassword(role, 'vitest-secret-vitest-secret-vitest-secret-01')).toBe(
      '16a4f6e2e873bb0d99354f9b2086de336a97fafd0f92fe8015efb456a4b1e295',
    )
    expect(scramVerifier('pencil', Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'), 4096)).toBe(
      'SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=:wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=',
    )
    const stored = async () =>
      String((await sql().query('SELECT rolpassword FROM pg_authid WHERE rolname = $1', [role])).rows[0]?.rolpassword)
    // The stored verifier is the one sent (PostgreSQL would hash a string it did not read as a verifier).
    const fits = (verifier: string, password: string) => {
      const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(verifier)
      return !!m && scramVerifier(password, Buffer.from(m[2] as string, 'base64'), Number(m[1])) === verifier
    }
    expect(fits(await stored(), readerPassword(role))).toBe(true)
    /** Whether this server checks passwords on DATABASE_URL's host (CI's and this machine's trust them). */
    const enforced = async () => {
      const url = new URL(process.env.DATABASE_URL as string)
      url.username = role
      url.password = 'wrong'
      const client = new pg.Client({ connectionString: url.toString() })
      try {
        await client.connect()
        return false
      } catch {
        return true
      } finally {
        await client.end().catch(() => {})
      }
    }
    const original = process.env.BETTER_AUTH_SECRET
    process.env.BETTER_AUTH_SECRET = 'another-secret-another-secret-another-secret'
    try {
      expect(fits(await stored(), readerPassword(role))).toBe(false)
      if (await enforced())
        await expect(runSqlStatement(SLUG, 'SELECT 1')).rejects.toThrow('password authentication failed')
      await loadSqlSchema(SLUG, SHOP_SQL)
      expect(fits(await stored(), readerPassword(role))).toBe(true)
      expect(rowsOf(await runSqlStatement(SLUG, 'SELECT count(*) FROM book'))).toEqual([['15']])
    } finally {
      process.env.BETTER_AUTH_SECRET = original
      await loadSqlSchema(SLUG, SHOP_SQL)
    }
    expect(fits(await stored(), readerPassword(role))).toBe(true)
  })

  it('refuses to finish when the reader could read a table outside its schema', async () => {
    await sql().query('DROP SCHEMA IF EXISTS rehac_leak_other CASCADE')
    await loadSqlSchema('leak', 'CREATE TABLE t (x int);')
    await sql().query('CREATE SCHEMA rehac_leak_other; CREATE TABLE rehac_leak_other.secret (x int)')
    await sql().query('GRANT USAGE ON SCHEMA rehac_leak_other TO rehac_leak_reader')
    await sql().query('GRANT SELECT ON rehac_leak_other.secret TO rehac_leak_reader')
    try {
      await expect(loadSqlSchema('leak', 'CREATE TABLE t (x int);')).rejects.toThrow(
        'the role rehac_leak_reader can read tables outside rehac_leak (rehac_leak_other.secret)',
      )
    } finally {
      await sql().query('DROP SCHEMA rehac_leak_other CASCADE; DROP SCHEMA IF EXISTS rehac_leak CASCADE')
    }
  })

  it('refuses to finish when the reader could call a SECURITY DEFINER function', async () => {
    await sql().query(
      'CREATE OR REPLACE FUNCTION public.rehac_test_definer() RETURNS bigint LANGUAGE sql SECURITY DEFINER AS $$ SELECT count(*) FROM public."user" $$',
    )
    try {
      await expect(loadSqlSchema('leak', 'CREATE TABLE t (x int);')).rejects.toThrow(
        'the role rehac_leak_reader can call SECURITY DEFINER functions (public.rehac_test_definer)',
      )
    } finally {
      await sql().query('DROP FUNCTION public.rehac_test_definer(); DROP SCHEMA IF EXISTS rehac_leak CASCADE')
    }
  })

  it('refuses a slug that is not a plain name', () => {
    expect(() => sqlNames('Shop; DROP')).toThrow('bad SQL task set slug')
    expect(sqlNames('shop')).toEqual({ schema: 'rehac_shop', owner: 'rehac_shop_owner', reader: 'rehac_shop_reader' })
  })
})

describe('the demo tasks', () => {
  it('has 10 gold queries, each running and returning rows', async () => {
    expect(TASKS).toHaveLength(10)
    for (const t of TASKS) {
      const run = await runSqlStatement(SLUG, t.gold)
      expect(run.ok, `${t.id}: ${rowsOf(run)}`).toBe(true)
      if (run.ok) expect(run.rows.length, t.id).toBeGreaterThan(0)
    }
  })

  it('gives the hand-checked answers', async () => {
    const gold = (id: string) => TASKS.find((t) => t.id === id)?.gold as string
    expect(rowsOf(await runSqlStatement(SLUG, gold('shop02')))).toEqual([['117']])
    expect(rowsOf(await runSqlStatement(SLUG, gold('shop06')))).toEqual([['Hugo Marchetti']])
    expect(rowsOf(await runSqlStatement(SLUG, gold('shop08')))).toEqual([['The Patient Engine', '32.00']])
    const buyers = await runSqlStatement(SLUG, gold('shop09'))
    expect(buyers.ok && [...buyers.rows].sort()).toEqual([['Ada Lindqvist'], ['Greta Holm']])
    const months = await runSqlStatement(SLUG, `${gold('shop10')} ORDER BY 1`)
    expect(rowsOf(months)).toEqual([
      ['1', '2'],
      ['2', '2'],
      ['3', '3'],
      ['4', '2'],
      ['5', '2'],
      ['6', '1'],
    ])
  })
})

describe('observations', () => {
  it('shows rows as InterCode did: a list of tuples, numbers bare, NULL as None', async () => {
    const gold = (id: string) => TASKS.find((t) => t.id === id)?.gold as string
    expect(sqlObservation(await runSqlStatement(SLUG, gold('shop08')))).toBe("[('The Patient Engine', 32.00)]")
    expect(sqlObservation(await runSqlStatement(SLUG, gold('shop06')))).toBe("[('Hugo Marchetti',)]")
    expect(sqlObservation(await runSqlStatement(SLUG, "SELECT NULL::text, true, 1.5::float8, 'it''s'"))).toBe(
      `[(None, True, 1.5, "it's")]`,
    )
    expect(sqlObservation(await runSqlStatement(SLUG, 'SELECT title FROM book WHERE price > 1000'))).toBe('[]')
  })

  it('caps a huge result at the row limit without reading the rest', async () => {
    const t0 = Date.now()
    // 10^8 rows, produced lazily (a set-returning function in FROM would be materialised whole first).
    const run = await runSqlStatement(
      SLUG,
      'SELECT (a - 1) * 10000 + b AS g, md5(((a - 1) * 10000 + b)::text) FROM generate_series(1, 10000) a, generate_series(1, 10000) b',
    )
    expect(Date.now() - t0).toBeLessThan(SQL_LIMITS.statementTimeoutMs / 2)
    expect(run.ok && run.rows.length).toBe(SQL_LIMITS.maxRows)
    expect(run.ok && run.truncated).toBe(true)
    expect(run.ok && run.rows[199]?.[0]).toBe('200')
    const obs = sqlObservation(run)
    expect(obs.startsWith("[(1, 'c4ca4238a0b923820dcc509a6f75849b'), (2, ")).toBe(true)
    expect(obs.endsWith(`(${SQL_LIMITS.shownRows} of more than ${SQL_LIMITS.maxRows} rows shown)`)).toBe(true)
    // Exactly the cap: all rows, not truncated.
    const exact = await runSqlStatement(SLUG, 'SELECT g FROM generate_series(1, 5) g', { maxRows: 5 })
    expect(exact.ok && [exact.rows.length, exact.truncated]).toEqual([5, false])
  })
})

/** Parley's own user (a superuser in CI and the embedded cluster): whom an escape would become. */
const PARLEY = decodeURIComponent(new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@x').username) || 'postgres'
const denied = `permission denied to set role "${PARLEY}"`
/** Statements that became Parley's user under the old SET LOCAL ROLE sandbox, and what PostgreSQL says now. */
const ESCAPES: [string, string | RegExp][] = [
  [`SELECT set_config('role', '${PARLEY}', true)`, denied],
  [`SET ROLE "${PARLEY}"`, denied],
  [`SET SESSION AUTHORIZATION "${PARLEY}"`, /^permission denied to set session authorization/],
  // The escape the blocklist was for: switch the role back, then read through dynamic SQL.
  [
    `SELECT set_config('role', '${PARLEY}', true), query_to_xml('SELECT count(*) FROM public."user"', true, true, '')`,
    denied,
  ],
  [
    `SELECT set_config('role', '${PARLEY}', true), query_to_xml('SELECT count(*) FROM public."ProtocolSession"', true, true, '')`,
    denied,
  ],
  [`DO $$ BEGIN EXECUTE 'SET ROLE "${PARLEY}"'; PERFORM count(*) FROM public."user"; END $$`, denied],
  [`SELECT U&"set\\005fconfig"('role', '${PARLEY}', true)`, denied],
]

describe('what the reader may not do', () => {
  it('refuses DROP, UPDATE and INSERT with PostgreSQL’s message, and nothing changes', async () => {
    const before = await counts()
    expect(sqlObservation(await runSqlStatement(SLUG, 'DROP TABLE book'))).toBe(
      'cannot execute DROP TABLE in a read-only transaction',
    )
    expect(sqlObservation(await runSqlStatement(SLUG, 'UPDATE book SET stock = 0'))).toBe(
      'cannot execute UPDATE in a read-only transaction',
    )
    expect(sqlObservation(await runSqlStatement(SLUG, "INSERT INTO author VALUES (99, 'X', 'Y', 2000)"))).toBe(
      'cannot execute INSERT in a read-only transaction',
    )
    expect(await counts()).toEqual(before)
  })

  it("cannot see or read Parley's tables", async () => {
    const before = await counts()
    expect(sqlObservation(await runSqlStatement(SLUG, 'SELECT * FROM "user"'))).toBe('relation "user" does not exist')
    expect(sqlObservation(await runSqlStatement(SLUG, 'SELECT * FROM public."user"'))).toBe(
      'permission denied for table user',
    )
    expect(sqlObservation(await runSqlStatement(SLUG, 'SELECT count(*) FROM public."ProtocolSession"'))).toBe(
      'permission denied for table ProtocolSession',
    )
    expect(
      sqlObservation(await runSqlStatement(SLUG, `SELECT query_to_xml('SELECT * FROM public."user"', true, true, '')`)),
    ).toBe('permission denied for table user')
    expect(
      sqlObservation(
        await runSqlStatement(
          SLUG,
          `SELECT query_to_xml('SELECT count(*) FROM public."ProtocolSession"', true, true, '')`,
        ),
      ),
    ).toBe('permission denied for table ProtocolSession')
    expect(await counts()).toEqual(before)
  })

  it.each(ESCAPES)('cannot become Parley’s user: %s', async (statement, observation) => {
    const before = await counts()
    const run = await runSqlStatement(SLUG, statement)
    if (typeof observation === 'string') expect(sqlObservation(run)).toBe(observation)
    else expect(sqlObservation(run)).toMatch(observation)
    expect(await counts()).toEqual(before)
  })

  it('is the reader in its session too: RESET ROLE changes nothing', async () => {
    expect(rowsOf(await runSqlStatement(SLUG, 'RESET ROLE'))).toEqual([])
    expect(rowsOf(await runSqlStatement(SLUG, 'SELECT session_user, current_user'))).toEqual([
      ['rehac_shoptest_reader', 'rehac_shoptest_reader'],
    ])
  })

  it('runs one statement only, and nothing of it outlives its run', async () => {
    const before = await counts()
    expect(sqlObservation(await runSqlStatement(SLUG, 'SELECT 1; DROP TABLE book'))).toBe(
      'cannot insert multiple commands into a prepared statement',
    )
    expect(sqlObservation(await runSqlStatement(SLUG, 'CREATE TEMP TABLE scratch (x int)'))).toBe(
      'cannot execute CREATE TABLE in a read-only transaction',
    )
    expect(await counts()).toEqual(before)
    // A session advisory lock and a prepared statement survive a rollback; DISCARD ALL does not let them.
    expect(rowsOf(await runSqlStatement(SLUG, 'SELECT pg_advisory_lock(424242)'))).toEqual([['']])
    const { rows: locks } = await sql().query(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242",
    )
    expect(locks[0]?.n).toBe(0)
    expect(sqlObservation(await runSqlStatement(SLUG, 'PREPARE two AS SELECT 2'))).toBe('PREPARE')
    expect(sqlObservation(await runSqlStatement(SLUG, 'EXECUTE two'))).toBe('prepared statement "two" does not exist')
    expect(rowsOf(await runSqlStatement(SLUG, 'SET statement_timeout = 1'))).toEqual([])
    expect(rowsOf(await runSqlStatement(SLUG, "SELECT current_setting('statement_timeout')"))).toEqual([['3s']])
  })

  it('screens only what the database cannot judge', async () => {
    const cases: [string, string][] = [
      ['', 'refused: the statement is empty'],
      ['  ', 'refused: the statement is empty'],
      [`SELECT '${'x'.repeat(SQL_LIMITS.maxStatementChars)}'`, 'refused: the statement is longer than 4000 characters'],
      ['SELECT 1\0; SELECT 2', 'refused: the statement contains a NUL character'],
    ]
    for (const [statement, observation] of cases)
      expect(sqlObservation(await runSqlStatement(SLUG, statement)), statement).toBe(observation)
    // Refused by the old blocklist, harmless as the reader: now they run.
    for (const ok of [
      "SELECT set_config('application_name', 'x', true)",
      'SELECT title AS dataset_config FROM book WHERE id = 1',
      "SELECT count(*) FROM pg_settings WHERE name = 'search_path'",
      "SELECT query_to_xml('SELECT count(*) AS n FROM book', false, false, '')::text LIKE '%<n>15</n>%'",
      'DO $$ BEGIN PERFORM 1; END $$',
    ]) {
      expect(screenStatement(ok), ok).toBeNull()
      expect((await runSqlStatement(SLUG, ok)).ok, ok).toBe(true)
    }
  })

  it('keeps the gold query out of the reader’s sight while it runs', async () => {
    const mystery = TASKS.find((t) => t.id === 'shop01')?.gold as string
    const slowGold = `${mystery} AND (SELECT pg_sleep(0.6)) IS NOT NULL` // once (an initplan)
    const reward = sqlReward(SLUG, mystery, slowGold)
    await new Promise((r) => setTimeout(r, 200))
    const seen = await runSqlStatement(
      SLUG,
      "SELECT usename, query FROM pg_stat_activity WHERE query LIKE '%pg_sleep(0.6)%' AND pid <> pg_backend_pid()",
    )
    expect((await reward).reward).toBe(1)
    // The gold runs on Parley's pool: its session is listed, its text is not.
    expect(rowsOf(seen)).toEqual([])
    const sessions = await runSqlStatement(
      SLUG,
      "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'parley-hot' AND query = '<insufficient privilege>'",
    )
    expect(sessions.ok && Number(sessions.rows[0]?.[0])).toBeGreaterThan(0)
  })

  it('stops a slow statement at the timeout, and the pool works after it', async () => {
    const t0 = Date.now()
    const run = await runSqlStatement(SLUG, 'SELECT pg_sleep(10)', { timeoutMs: 500 })
    expect(Date.now() - t0).toBeLessThan(5_000)
    expect(sqlObservation(run)).toBe('canceling statement due to statement timeout')
    expect(rowsOf(await runSqlStatement(SLUG, 'SELECT count(*) FROM book'))).toEqual([['15']])
    // A statement may end its own connection: the pool makes another.
    expect(sqlObservation(await runSqlStatement(SLUG, 'SELECT pg_terminate_backend(pg_backend_pid())'))).toBe(
      'terminating connection due to administrator command',
    )
    expect(rowsOf(await runSqlStatement(SLUG, 'SELECT count(*) FROM book'))).toEqual([['15']])
    const { rows } = await sql().query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = 'rehac_shoptest_reader' AND state <> 'idle'",
    )
    expect(rows[0]?.n).toBe(0)
  })
})

describe('the reward', () => {
  it('is the multiset IoU of the rows against the gold query’s', async () => {
    const mystery = TASKS.find((t) => t.id === 'shop01')?.gold as string
    expect((await sqlReward(SLUG, mystery, mystery)).reward).toBe(1)
    expect((await sqlReward(SLUG, `${mystery} ORDER BY title DESC`, mystery)).reward).toBe(1)
    // 3 of the 5 mystery books cost less than 15.00.
    expect((await sqlReward(SLUG, `${mystery} AND price < 15`, mystery)).reward).toBe(0.6)
    const failed = await sqlReward(SLUG, 'SELECT nope FROM book', mystery)
    expect([failed.reward, sqlObservation(failed.run)]).toEqual([0, 'column "nope" does not exist'])
    await expect(sqlReward(SLUG, mystery, 'SELECT nope FROM book')).rejects.toThrow('the gold query fails')
  })
})
