import { afterAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { pgJson, pgText, withoutNul } from '@/lib/server/pg-text'

afterAll(() => db.$disconnect())

const NASTY = { 'k\u0000ey': ['a\u0000b', 'lone \ud800 high', 'lone \udc00 low', 'pair 😀', 'plain \\u0000 text'] }

describe('text for PostgreSQL: U+0000 and lone surrogates', () => {
  it('PostgreSQL refuses them as they are (what the helpers are for)', async () => {
    await expect(sql().query('SELECT $1::text AS t', ['a\u0000b'])).rejects.toThrow(/0x00/)
    await expect(sql().query('SELECT $1::jsonb AS j', [JSON.stringify('a\u0000b')])).rejects.toThrow(/Unicode/)
    await expect(sql().query('SELECT $1::jsonb AS j', [JSON.stringify('\ud800')])).rejects.toThrow(
      /invalid input syntax for type json/,
    )
  })

  it('pgText and pgJson write them escaped; everything else is unchanged', async () => {
    const { rows } = await sql().query<{ t: string; j: unknown }>('SELECT $1::text AS t, $2::jsonb AS j', [
      pgText('a\u0000b \ud800'),
      pgJson(NASTY),
    ])
    expect(rows[0]?.t).toBe('a\\u0000b \ufffd')
    expect(rows[0]?.j).toEqual({
      'k\\u0000ey': ['a\\u0000b', 'lone \ufffd high', 'lone \ufffd low', 'pair 😀', 'plain \\u0000 text'],
    })
    expect(pgJson({ a: 1, b: ['x', null], c: new Date(0) })).toBe(
      JSON.stringify({ a: 1, b: ['x', null], c: new Date(0) }),
    )
    expect(pgText(null)).toBeNull()
  })

  it('withoutNul drops U+0000 from every string and key', () => {
    expect(withoutNul(NASTY)).toEqual({
      key: ['ab', 'lone \ufffd high', 'lone \ufffd low', 'pair 😀', 'plain \\u0000 text'],
    })
    expect(withoutNul(3)).toBe(3)
  })
})
