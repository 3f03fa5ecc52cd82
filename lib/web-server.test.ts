import { afterEach, describe, expect, it, vi } from 'vitest'
import { JEMALLOC_CONF, JEMALLOC_PATHS, webAllocator, webProcesses, webV8Flags } from './web-server.mjs'

const DEBIAN = JEMALLOC_PATHS[0] as string
const installed = (path: string) => path === DEBIAN
const missing = () => false

describe('webAllocator (PARLEY_MALLOC)', () => {
  it('preloads jemalloc by default where it is installed, with its return-freed-pages options', () => {
    expect(webAllocator({}, installed)).toEqual({
      allocator: 'jemalloc',
      env: { LD_PRELOAD: DEBIAN, MALLOC_CONF: JEMALLOC_CONF },
    })
    expect(webAllocator({ PARLEY_MALLOC: 'auto' }, installed).allocator).toBe('jemalloc')
    expect(webAllocator({ PARLEY_MALLOC: ' JEMALLOC ' }, installed).allocator).toBe('jemalloc')
  })

  it('finds the library on other distributions’ paths too', () => {
    const other = JEMALLOC_PATHS[2] as string
    expect(webAllocator({}, (p) => p === other).env.LD_PRELOAD).toBe(other)
  })

  it('keeps the system allocator where jemalloc is not installed, or when asked to', () => {
    expect(webAllocator({}, missing)).toEqual({ allocator: 'system', env: {} })
    expect(webAllocator({ PARLEY_MALLOC: 'system' }, installed)).toEqual({ allocator: 'system', env: {} })
  })

  it('keeps an operator’s own preloads and jemalloc options', () => {
    const { env } = webAllocator({ LD_PRELOAD: '/opt/trace.so', MALLOC_CONF: 'narenas:1' }, installed)
    expect(env).toEqual({ LD_PRELOAD: `/opt/trace.so ${DEBIAN}`, MALLOC_CONF: 'narenas:1' })
    // Already preloaded: not twice.
    expect(webAllocator({ LD_PRELOAD: DEBIAN }, installed).env.LD_PRELOAD).toBe(DEBIAN)
  })

  it('refuses jemalloc when it is not installed, and values it does not know, with what to do', () => {
    expect(() => webAllocator({ PARLEY_MALLOC: 'jemalloc' }, missing)).toThrow(/not installed.*libjemalloc2/)
    expect(() => webAllocator({ PARLEY_MALLOC: 'tcmalloc' }, installed)).toThrow(
      'PARLEY_MALLOC must be auto, jemalloc or system (got "tcmalloc").',
    )
  })
})

describe('webProcesses (PARLEY_WEB_PROCESSES) and the young generation', () => {
  afterEach(() => vi.unstubAllEnvs())

  it('runs one process per core by default, at most two', () => {
    vi.stubEnv('PARLEY_WEB_PROCESSES', '')
    expect(webProcesses(1)).toBe(1)
    expect(webProcesses(2)).toBe(2)
    expect(webProcesses(16)).toBe(2)
  })

  it('runs what the setting says, and refuses what is not a whole positive number', () => {
    vi.stubEnv('PARLEY_WEB_PROCESSES', '4')
    expect(webProcesses(2)).toBe(4)
    vi.stubEnv('PARLEY_WEB_PROCESSES', '1.5')
    expect(() => webProcesses(2)).toThrow('PARLEY_WEB_PROCESSES must be a whole number (got "1.5").')
    vi.stubEnv('PARLEY_WEB_PROCESSES', '0')
    expect(() => webProcesses(2)).toThrow(/PARLEY_WEB_PROCESSES must be a positive number/)
  })

  it('gives one process a 2 × 32 MB young generation, several 2 × 8 MB each, single-threaded GC when they fill the cores', () => {
    expect(webV8Flags(1, 2)).toEqual({ semiSpaceMb: 32, singleThreadedGc: false })
    expect(webV8Flags(1, 1)).toEqual({ semiSpaceMb: 32, singleThreadedGc: false })
    expect(webV8Flags(2, 2)).toEqual({ semiSpaceMb: 8, singleThreadedGc: true })
    expect(webV8Flags(2, 8)).toEqual({ semiSpaceMb: 8, singleThreadedGc: false })
    expect(webV8Flags(4, 2)).toEqual({ semiSpaceMb: 8, singleThreadedGc: true })
  })
})
