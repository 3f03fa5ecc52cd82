import { describe, expect, it } from 'vitest'
import { ConfigError, config, parseConfig, settings, settingsSchemas } from './config'

describe('configuration', () => {
  it('refuses PARLEY_WORKERS=four, naming the variable and the value', () => {
    expect(() => parseConfig({ PARLEY_WORKERS: 'four' })).toThrow(ConfigError)
    expect(() => parseConfig({ PARLEY_WORKERS: 'four' })).toThrow(/PARLEY_WORKERS: expected a whole number.*"four"/)
  })

  it("covers the web server's own settings (scripts/serve.mjs) and the drain", () => {
    for (const [name, value, message] of [
      ['PARLEY_WEB_PROCESSES', 'two', /PARLEY_WEB_PROCESSES: expected a whole number from 1 to 256 \(got "two"\)/],
      ['PARLEY_HEAP_MB', '-5', /PARLEY_HEAP_MB: expected a positive number/],
      ['PARLEY_MALLOC', 'tcmalloc', /PARLEY_MALLOC: expected auto, jemalloc or system/],
      ['PARLEY_AUTH_RATE_LIMIT', 'no', /PARLEY_AUTH_RATE_LIMIT: expected on or off/],
      ['PARLEY_DRAIN_SECONDS', '1.5', /PARLEY_DRAIN_SECONDS: expected a whole number/],
      ['PARLEY_SIGNIN_FREE_FAILURES', '0', /PARLEY_SIGNIN_FREE_FAILURES: must be at least 1/],
    ] as const)
      expect(() => parseConfig({ [name]: value })).toThrow(message)
    expect(parseConfig({ PARLEY_MALLOC: ' JEMALLOC ', PARLEY_WEB_PROCESSES: '3' })).toMatchObject({
      PARLEY_MALLOC: 'jemalloc',
      PARLEY_WEB_PROCESSES: 3,
    })
    expect(config({}).drainSeconds).toBe(5)
  })

  it('lists every bad variable at once and never echoes a secret', () => {
    let err: ConfigError | undefined
    try {
      parseConfig({
        PORT: '70000',
        DATABASE_URL: 'mysql://x',
        PARLEY_LOG_FORMAT: 'xml',
        BETTER_AUTH_SECRET: 'short-secret',
        PARLEY_DB_POOL_MAX: '0',
        HTTPS_PROXY: 'not a url',
      })
    } catch (e) {
      err = e as ConfigError
    }
    expect(err?.problems.map((p) => p.split(':')[0]).sort()).toEqual(
      ['BETTER_AUTH_SECRET', 'DATABASE_URL', 'HTTPS_PROXY', 'PARLEY_DB_POOL_MAX', 'PARLEY_LOG_FORMAT', 'PORT'].sort(),
    )
    expect(err?.message).not.toContain('short-secret')
    expect(err?.message).toContain('PORT: must be at most 65535 (got "70000")')
  })

  it('takes blank values as unset and fills the documented defaults', () => {
    const c = config({ PARLEY_WORKERS: '', PARLEY_JOB_SLICE_MS: '0' })
    expect(c.workers).toBe(4)
    expect(c.jobSliceMs).toBe(0)
    expect(c.jobExpireSeconds).toBe(600)
    // The connection budget (docs/OPERATIONS.md): Prisma + hot pool + pg-boss per process, by kind.
    expect([c.dbPoolMax, c.dbHotPoolMax, c.jobPoolMax]).toEqual([4, 4, 2])
    const w = config({ PARLEY_PROCESS: 'worker' })
    expect([w.dbPoolMax, w.dbHotPoolMax, w.jobPoolMax]).toEqual([2, 6, 3])
    expect(settings(['PARLEY_DB_HOT_POOL_MAX'], { PARLEY_PROCESS: 'worker' }).dbHotPoolMax).toBe(6)
    // Set, a size holds for every kind of process.
    expect(config({ PARLEY_PROCESS: 'worker', PARLEY_DB_POOL_MAX: '9' }).dbPoolMax).toBe(9)
  })

  it('accepts a server-actions key of 32 bytes and refuses a wrong one', () => {
    const key = Buffer.alloc(32, 7).toString('base64')
    expect(parseConfig({ NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: key }).NEXT_SERVER_ACTIONS_ENCRYPTION_KEY).toBe(key)
    expect(() => parseConfig({ NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: 'abc' })).toThrow(
      /NEXT_SERVER_ACTIONS_ENCRYPTION_KEY/,
    )
  })

  it('running code validates only what it reads: a bad unrelated variable does not break a pool', () => {
    const env = { PARLEY_SIGNIN_PER_MINUTE: 'undefined', PARLEY_DB_POOL_MAX: '12' }
    expect(settings(['PARLEY_DB_POOL_MAX'], env).dbPoolMax).toBe(12)
    expect(() => settings(['PARLEY_SIGNIN_PER_MINUTE'], env)).toThrow(/PARLEY_SIGNIN_PER_MINUTE/)
    expect(() => config(env)).toThrow(ConfigError)
  })

  it('builds the schema of a set of variables once, and reads their values afresh every time', () => {
    const keys = ['PARLEY_SEAT_LEASE_SECONDS', 'PARLEY_JOB_SLICE_MS'] as const
    expect(settings(keys, {})).toMatchObject({ seatLeaseSeconds: 900, jobSliceMs: 400 })
    const built = settingsSchemas()
    expect(settings(keys, { PARLEY_SEAT_LEASE_SECONDS: '60' })).toMatchObject({ seatLeaseSeconds: 60, jobSliceMs: 400 })
    expect(() => settings(keys, { PARLEY_JOB_SLICE_MS: 'soon' })).toThrow(/PARLEY_JOB_SLICE_MS/)
    expect(settings(keys, { PARLEY_JOB_SLICE_MS: '0' })).toMatchObject({ seatLeaseSeconds: 900, jobSliceMs: 0 })
    // A hot path (a submitted turn reads the lease) no longer builds a zod schema per call.
    expect(settingsSchemas()).toBe(built)
    settings(['PARLEY_SEAT_LEASE_SECONDS'], {})
    expect(settingsSchemas()).toBe(built + 1)
  })
})

describe('the documentation of the settings', () => {
  it('.env.example and the README list every variable the schema validates', async () => {
    const { readFileSync } = await import('node:fs')
    const { ConfigSchema } = await import('./config')
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    // curl's lower-case spellings of the proxy variables are accepted too; the upper-case ones are listed.
    const names = Object.keys(ConfigSchema.shape).filter((n) => n !== n.toLowerCase())
    expect(names.filter((n) => !new RegExp(`^# ${n}=`, 'm').test(example))).toEqual([])
    expect(names.filter((n) => !readme.includes(`\`${n}\``))).toEqual([])
  })
})
