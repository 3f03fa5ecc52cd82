import { describe, expect, it } from 'vitest'
import { failureFrom } from './operation'
import { isDatabaseBusy } from './errors'

describe('a database with no room in time is a 503 (try again), not a 500', () => {
  it('recognises Prisma’s and pg’s timeouts, and nothing else', () => {
    expect(
      isDatabaseBusy({
        code: 'P2028',
        message: 'Transaction API error: Unable to start a transaction in the given time.',
      }),
    ).toBe(true)
    expect(isDatabaseBusy({ code: 'P2024' })).toBe(true)
    expect(isDatabaseBusy(new Error('timeout exceeded when trying to connect'))).toBe(true)
    expect(isDatabaseBusy(new Error('Transaction API error: Unable to start a transaction in the given time.'))).toBe(
      true,
    )
    expect(isDatabaseBusy({ code: 'P2002' })).toBe(false)
    expect(isDatabaseBusy(new Error('relation "x" does not exist'))).toBe(false)
    expect(isDatabaseBusy(null)).toBe(false)
  })

  it('failureFrom answers 503 for the busy database and still 500 for a real fault', () => {
    const busy = failureFrom(
      { code: 'P2028', message: 'Unable to start a transaction in the given time' },
      'sessions.submit',
    )
    expect(busy).toMatchObject({ ok: false, status: 503 })
    expect(busy.error).toMatch(/Nothing was saved/)
    expect(failureFrom(new Error('boom'), 'sessions.submit')).toMatchObject({ ok: false, status: 500 })
  })
})

describe('an unreachable database is told apart from a wrong statement', () => {
  it('recognises refused and cut connections, a restarting server, and nothing else', async () => {
    const { isDatabaseUnavailable } = await import('./errors')
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
    expect(isDatabaseUnavailable(refused)).toBe(true)
    expect(isDatabaseUnavailable(new AggregateError([refused], ''))).toBe(true)
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true)
    expect(
      isDatabaseUnavailable({ code: '57P01', message: 'terminating connection due to administrator command' }),
    ).toBe(true)
    expect(isDatabaseUnavailable({ code: 'P1001', message: "Can't reach database server at localhost" })).toBe(true)
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: refused }))).toBe(true)
    expect(isDatabaseUnavailable({ code: '23505', message: 'duplicate key value' })).toBe(false)
    expect(isDatabaseUnavailable({ code: 'P2002' })).toBe(false)
    expect(isDatabaseUnavailable(new Error('relation "x" does not exist'))).toBe(false)
    expect(isDatabaseUnavailable(null)).toBe(false)
  })
})
