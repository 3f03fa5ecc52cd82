import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { afterEach, describe, expect, it } from 'vitest'
import { canonicalSmiles, depictSvg, rdkitSandbox, reactantsMatch } from './chem'
import { firstGroups, regexSandbox } from './pattern'
import { SandboxError, sandboxProblems } from './sandbox'

/**
 * The worker threads behind RDKit and regex MATCH (lib/tasks/sandbox.ts), driven with the inputs that
 * broke the web process before: RDKit's own instance ran on the event loop, so 1,000 carbons left it
 * answering "memory access out of bounds" to everything after, and 700 spun the process for minutes.
 * These calls go to the worker as they are (`call`), past the SMILES limits chem.ts applies, to prove
 * what the worker does when something gets through.
 */

/** Runs `work` and reports the event loop's longest delay meanwhile (perf_hooks, 10 ms resolution). */
async function loopDelay<T>(work: () => Promise<T>): Promise<{ result: T; maxMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 })
  h.enable()
  try {
    const result = await work()
    return { result, maxMs: h.max / 1e6 }
  } finally {
    h.disable()
  }
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

const rdkitOptions = { ...rdkitSandbox().settings }
afterEach(() => rdkitSandbox().configure(rdkitOptions))

describe('RDKit in its worker thread', () => {
  it('a WebAssembly trap fails that call only: the worker is replaced and RDKit answers the next one', async () => {
    const sb = rdkitSandbox()
    expect(await canonicalSmiles('OCC')).toBe('CCO')
    const restarts = sb.stats.restarts
    const err = await rejection(sb.call('canonical', [['C'.repeat(1000)]]))
    expect(err).toBeInstanceOf(SandboxError)
    expect((err as SandboxError).kind).toBe('crashed')
    expect((err as SandboxError).message).toMatch(/RDKit failed on this input \(memory access out of bounds\)/)
    expect(sb.stats.restarts).toBe(restarts + 1)
    expect(await canonicalSmiles('C(O)C')).toBe('CCO')
    expect(await reactantsMatch('CC(=O)O.OCC', 'C(O)C.OC(C)=O')).toBe(true)
    expect(await depictSvg('CCO')).toContain('<svg')
  })

  it('a call that runs past its time limit is answered with an error, while the event loop stays free', async () => {
    const sb = rdkitSandbox()
    sb.configure({ timeoutMs: 1500 })
    await sb.ensureStarted()
    // 700 carbons: RDKit never returns from get_smiles (it spun a web process for 11 minutes).
    const t0 = performance.now()
    const { result: err, maxMs } = await loopDelay(() => rejection(sb.call('canonical', [['C'.repeat(700)]])))
    const ms = performance.now() - t0
    expect(err).toBeInstanceOf(SandboxError)
    expect((err as SandboxError).kind).toBe('timeout')
    expect((err as SandboxError).message).toBe('RDKit took longer than 1500 ms on this input.')
    expect(ms).toBeGreaterThanOrEqual(1400)
    expect(ms).toBeLessThan(5000)
    expect(maxMs).toBeLessThan(500)
    expect(await canonicalSmiles('OCC')).toBe('CCO')
  })

  it('calls queued behind a stuck one are answered by the next worker', async () => {
    const sb = rdkitSandbox()
    sb.configure({ timeoutMs: 1500 })
    const stuck = rejection(sb.call('canonical', [['C'.repeat(700)]]))
    const after = Promise.all([canonicalSmiles('OCC'), canonicalSmiles('c1ccccc1O')])
    expect(((await stuck) as SandboxError).kind).toBe('timeout')
    expect(await after).toEqual(['CCO', 'Oc1ccccc1'])
  })

  it('a worker that cannot start refuses calls with the reason, is named by sandboxProblems, and recovers', async () => {
    const sb = rdkitSandbox()
    await sb.stop()
    sb.configure({
      retryAfterMs: 0,
      create: () =>
        new Worker(new URL('./rdkit-worker.mjs', import.meta.url), {
          execArgv: [],
          workerData: { wasm: '/nonexistent/RDKit_minimal.wasm' },
        }),
    })
    const err = await rejection(canonicalSmiles('OCC'))
    expect((err as SandboxError).kind).toBe('unavailable')
    expect((err as SandboxError).message).toMatch(/^RDKit cannot start: .*RDKit_minimal\.wasm/)
    expect(await sandboxProblems()).toEqual([expect.stringMatching(/^RDKit cannot start/)])
    // Within retryAfterMs a call is refused at once, without another attempt.
    sb.configure({ retryAfterMs: 60_000 })
    const starts = sb.stats.starts
    expect(((await rejection(canonicalSmiles('OCC'))) as SandboxError).kind).toBe('unavailable')
    expect(sb.stats.starts).toBe(starts)
    // Once it can start again, the next look (readiness asks sandboxProblems) brings it back.
    sb.configure({ create: rdkitOptions.create, retryAfterMs: 0 })
    expect(await sandboxProblems()).toEqual([])
    expect(await canonicalSmiles('OCC')).toBe('CCO')
  })
})

describe('regex MATCH in its worker thread', () => {
  it('a pattern that runs out of time is answered with an error while the event loop stays free; the next call works', async () => {
    await regexSandbox().ensureStarted()
    // 7,000 instructions × 100,000 characters: tens of seconds of matching, even in linear time.
    const text = 'a'.repeat(100_000)
    const { result: err, maxMs } = await loopDelay(() => rejection(firstGroups('(\\w+\\s?){1,1000}z', 'i', [text])))
    expect(err).toBeInstanceOf(SandboxError)
    expect((err as SandboxError).kind).toBe('timeout')
    expect((err as SandboxError).message).toBe('Regex MATCH took longer than 2000 ms on this input.')
    expect(maxMs).toBeLessThan(500)
    expect(await firstGroups('grade\\s*(\\d)', 'i', ['Tumour GRADE 2', 'none'])).toEqual(['2', null])
  })

  it('refuses a text over MATCH_INPUT_MAX before any matching', async () => {
    await expect(firstGroups('a', '', ['a'.repeat(200_001)])).rejects.toThrow(
      'Regex MATCH searches at most 200,000 characters; this text has 200,001.',
    )
  })
})
