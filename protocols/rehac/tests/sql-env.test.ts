import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { parseSqlTasksJsonl } from '../core/sql-reward'
import {
  loadSqlSchema,
  runSqlStatement,
  SQL_LIMITS,
  type SqlRun,
  screenStatement,
  sqlNames,
  sqlObservation,
  sqlReward,
} from '../server/sql-env'

const DEMO = path.resolve(import.meta.dirname, '../demo')
const SHOP_SQL = readFileSync(path.join(DEMO, 'shop.sql'), 'utf8')
const TASKS = parseSqlTasksJsonl(readFileSync(path.join(DEMO, 'sql-tasks.jsonl'), 'utf8'))
const SLUG = 'shoptest'

afterAll(() => db.$disconnect())

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
  it('puts the tables in their own schema, readable by the reader alone', async () => {
    const loaded = await loadSqlSchema(SLUG, SHOP_SQL)
    expect(loaded).toEqual({
      schema: 'rehac_shoptest',
      reader: 'rehac_shoptest_reader',
      tables: ['author', 'book', 'customer', 'purchase', 'purchase_item'],
    })
    const { rows } = await sql().query<{ can: boolean; own: boolean; login: boolean }>(
      `SELECT has_table_privilege('rehac_shoptest_reader', 'public."user"', 'SELECT') AS can,
              has_table_privilege('rehac_shoptest_reader', 'rehac_shoptest.book', 'SELECT') AS own,
              (SELECT rolcanlogin FROM pg_roles WHERE rolname = 'rehac_shoptest_reader') AS login`,
    )
    expect(rows[0]).toEqual({ can: false, own: true, login: false })
  })

  it('is idempotent: a second load gives the same tables and rows', async () => {
    const before = await counts()
    await loadSqlSchema(SLUG, SHOP_SQL)
    await loadSqlSchema(SLUG, SHOP_SQL)
    expect(await counts()).toEqual(before)
    expect(before).toMatchObject({ books: 15, stock: 117, authors: 8 })
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
    expect(await counts()).toEqual(before)
  })

  it('cannot switch the role back, run two statements, or reach dynamic SQL', async () => {
    const cases: [string, string][] = [
      ['SET ROLE postgres', 'refused: SET statements are not allowed here'],
      ['  /* x */ reset role', 'refused: RESET statements are not allowed here'],
      ["SELECT set_config('role', 'postgres', true)", 'refused: set_config is not allowed here'],
      ['DO $$ BEGIN PERFORM 1; END $$', 'refused: DO statements are not allowed here'],
      ["SELECT query_to_xml('select 1', true, true, '')", 'refused: query_to_xml is not allowed here'],
      ["SELECT U&\"set\\005fconfig\"('role', 'x', true)", 'refused: U& escapes are not allowed here'],
      ['COMMIT', 'refused: COMMIT statements are not allowed here'],
      ['SELECT 1; SELECT 2', 'cannot insert multiple commands into a prepared statement'],
      ['', 'refused: the statement is empty'],
      [`SELECT '${'x'.repeat(SQL_LIMITS.maxStatementChars)}'`, 'refused: the statement is longer than 4000 characters'],
    ]
    for (const [statement, observation] of cases)
      expect(sqlObservation(await runSqlStatement(SLUG, statement)), statement).toBe(observation)
    expect(screenStatement('SELECT title FROM book')).toBeNull()
    expect(screenStatement('SELECT title AS dataset_config FROM book')).toBeNull()
    expect(screenStatement("SELECT pg_catalog.set_config('role', 'x', true)")).toBe('set_config is not allowed here')
    expect(screenStatement("SELECT \"query_to_xmlschema\"('x', true, true, '')")).toBe(
      'query_to_xml is not allowed here',
    )
    expect(screenStatement("UPDATE pg_settings SET setting = 'postgres' WHERE name = 'role'")).toBe(
      'pg_settings is not allowed here',
    )
    // The role in force is the reader's, whatever the session's own user is.
    expect(rowsOf(await runSqlStatement(SLUG, 'SELECT current_user'))).toEqual([['rehac_shoptest_reader']])
  })

  it('stops a slow statement at the timeout, and the pool works after it', async () => {
    const t0 = Date.now()
    const run = await runSqlStatement(SLUG, 'SELECT pg_sleep(10)', { timeoutMs: 500 })
    expect(Date.now() - t0).toBeLessThan(5_000)
    expect(sqlObservation(run)).toBe('canceling statement due to statement timeout')
    expect(rowsOf(await runSqlStatement(SLUG, 'SELECT count(*) FROM book'))).toEqual([['15']])
    // Nothing of the transaction is left on the pooled connections.
    const { rows } = await sql().query<{ role: string; ro: string }>(
      "SELECT current_user AS role, current_setting('transaction_read_only') AS ro",
    )
    expect(rows[0]?.role).not.toBe('rehac_shoptest_reader')
    expect(rows[0]?.ro).toBe('off')
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
