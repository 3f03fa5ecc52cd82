// `parley agreement labels|rank|alpha|fleiss`, in process (commander with the command module, as
// lib/cli/index.ts mounts it) and as a user runs them (bin/parley.mjs, no database). The expected
// figures are the published ones (Thomas et al. Table 1, Fleiss 1971, Krippendorff 2011) or worked
// out from the definitions in the comments.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Command, CommanderError } from 'commander'
import { afterAll, describe, expect, it } from 'vitest'
import { agreementCommands } from '@/lib/cli/agreement'
import { CliError, readJsonFile } from '@/lib/cli/tools'

const root = path.resolve(import.meta.dirname, '../..')
const tmp = mkdtempSync(path.join(tmpdir(), 'parley-agreement-cli-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

interface Result {
  status: number | null
  stdout: string
  stderr: string
}

let files = 0
const file = (content: unknown) => {
  const f = path.join(tmp, `input-${++files}.json`)
  writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content))
  return f
}

/** The commands under commander with main()'s exit codes (usage 2, a failure 1 as "parley: <message>"). */
async function inProcess(args: string[]): Promise<Result> {
  let stdout = ''
  let stderr = ''
  const program = new Command()
    .name('parley')
    .exitOverride()
    .configureOutput({ writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) })
  agreementCommands(program.command('agreement'), { out: (s) => (stdout += `${s}\n`), readJsonFile, CliError })
  try {
    await program.parseAsync(args, { from: 'user' })
    return { status: 0, stdout, stderr }
  } catch (err) {
    if (err instanceof CommanderError) return { status: err.exitCode === 0 ? 0 : 2, stdout, stderr }
    return { status: 1, stdout, stderr: `${stderr}parley: ${err instanceof Error ? err.message : String(err)}\n` }
  }
}

const spawned = (args: string[], input?: string): Result =>
  spawnSync(process.execPath, ['bin/parley.mjs', ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: '' },
    input,
    encoding: 'utf8',
    timeout: 60_000,
  })

/** The one JSON object a command prints. */
function printed(r: Result): Record<string, unknown> {
  expect(r.status, r.stderr).toBe(0)
  const lines = r.stdout.trim().split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]!) as Record<string, unknown>
}

const TABLE1 = { model0_gold0: 866, model0_gold1: 405, model1_gold0: 95, model1_gold1: 1585 }

describe('parley agreement (in process)', () => {
  it('labels: the four counts of Table 1 → κ 0.644, accuracy 0.831, MAE 0.169, no graded MAE', async () => {
    const out = printed(await inProcess(['agreement', 'labels', file(TABLE1)]))
    expect(out.n).toBe(2951)
    expect(out.confusion).toEqual(TABLE1)
    expect(out.kappa as number).toBeCloseTo(0.644, 3)
    expect(out.accuracy as number).toBeCloseTo(0.831, 3)
    expect(out.maeBinary as number).toBeCloseTo(0.169, 3)
    expect(out).not.toHaveProperty('maeGraded')
  })

  it('labels: graded lists → binarised table and the MAE of the raw labels; κ null when undefined', async () => {
    // gold (0, 1, 2, 2), model (0, 2, 1, 0): binarised (0,1,1,1) vs (0,1,1,0): a = 1, b = 1, d = 2;
    // p_o = 3/4, p_e = (2·1 + 2·3)/16 = 1/2, κ = (3/4 − 1/2)/(1/2) = 0.5; graded MAE (0 + 1 + 1 + 2)/4 = 1
    const out = printed(await inProcess(['agreement', 'labels', file({ gold: [0, 1, 2, 2], model: [0, 2, 1, 0] })]))
    expect(out.confusion).toEqual({ model0_gold0: 1, model0_gold1: 1, model1_gold0: 0, model1_gold1: 2 })
    expect(out.kappa as number).toBeCloseTo(0.5, 12)
    expect(out.maeBinary as number).toBeCloseTo(0.25, 12)
    expect(out.maeGraded as number).toBeCloseTo(1, 12)
    const constant = printed(await inProcess(['agreement', 'labels', file({ gold: [1, 2], model: [2, 1] })]))
    expect(constant.kappa).toBeNull()
  })

  it('rank: τ and RBO of a list and its reverse (norm 0) and of itself (norm 1)', async () => {
    const ids = ['q1', 'q2', 'q3', 'q4', 'q5', 'q6']
    const rev = printed(
      await inProcess(['agreement', 'rank', file({ ranking_a: ids, ranking_b: [...ids].reverse(), phis: [0.9, 0.7] })]),
    )
    expect(rev.n).toBe(6)
    expect(rev.kendallTau as number).toBeCloseTo(-1, 12)
    const rbo = rev.rbo as Record<string, { trunc: number; min: number; max: number; norm: number; ext: number }>
    expect(Object.keys(rbo)).toEqual(['0.9', '0.7'])
    // reversed, N = 6: overlap at depth d is max(0, 2d − 6): (1−φ)(φ³·2/4 + φ⁴·4/5 + φ⁵·6/6)
    const phi = 0.9
    expect(rbo['0.9']!.trunc).toBeCloseTo((1 - phi) * (phi ** 3 * 0.5 + phi ** 4 * 0.8 + phi ** 5), 12)
    expect(rbo['0.9']!.min).toBeCloseTo(rbo['0.9']!.trunc, 12)
    expect(rbo['0.9']!.max).toBeCloseTo(1 - phi ** 6, 12)
    expect(rbo['0.9']!.norm).toBeCloseTo(0, 12)
    const same = printed(await inProcess(['agreement', 'rank', file({ ranking_a: ids, ranking_b: ids })]))
    expect(same.kendallTau as number).toBeCloseTo(1, 12)
    const r = same.rbo as Record<string, { norm: number; ext: number }>
    expect(Object.keys(r)).toEqual(['0.9', '0.7']) // the default φs
    expect(r['0.7']!.norm).toBe(1)
    expect(r['0.7']!.ext).toBeCloseTo(1, 12)
  })

  it("alpha: Krippendorff's (2011) example at each level", async () => {
    // 4 observers × 12 units, null = missing (R irr's kripp.alpha example `nmm`, transposed)
    const units = [
      [1, 1, null, 1],
      [2, 2, 3, 2],
      [3, 3, 3, 3],
      [3, 3, 3, 3],
      [2, 2, 2, 2],
      [1, 2, 3, 4],
      [4, 4, 4, 4],
      [1, 1, 2, 1],
      [2, 2, 2, 2],
      [null, 5, 5, 5],
      [null, null, 1, 1],
      [null, null, 3, null],
    ]
    const f = file({ units })
    const nominal = printed(await inProcess(['agreement', 'alpha', f]))
    expect(nominal.level).toBe('nominal')
    expect(nominal.pairable).toBe(40)
    expect(Math.abs((nominal.alpha as number) - 0.743)).toBeLessThan(0.0005)
    const ordinal = printed(await inProcess(['agreement', 'alpha', f, '--level', 'ordinal']))
    expect(Math.abs((ordinal.alpha as number) - 0.815)).toBeLessThan(0.0005)
    const interval = printed(await inProcess(['agreement', 'alpha', f, '--level', 'interval']))
    expect(Math.abs((interval.alpha as number) - 0.849)).toBeLessThan(0.0005)
    const ratio = printed(await inProcess(['agreement', 'alpha', f, '--level', 'ratio']))
    expect(Math.abs((ratio.alpha as number) - 0.797)).toBeLessThan(0.0005)
  })

  it("fleiss: Fleiss (1971)'s example (Wikipedia's worked example)", async () => {
    const counts = [
      [0, 0, 0, 0, 14],
      [0, 2, 6, 4, 2],
      [0, 0, 3, 5, 6],
      [0, 3, 9, 2, 0],
      [2, 2, 8, 1, 1],
      [7, 7, 0, 0, 0],
      [3, 2, 6, 3, 0],
      [2, 5, 3, 2, 2],
      [6, 5, 2, 1, 0],
      [0, 2, 2, 3, 7],
    ]
    const out = printed(await inProcess(['agreement', 'fleiss', file({ counts })]))
    expect(out.fleissKappa as number).toBeCloseTo(0.21, 3)
    expect(out.pBar as number).toBeCloseTo(0.378, 3)
    expect(out.pExpected as number).toBeCloseTo(0.213, 3)
  })

  it.each([
    ['labels', 'not json', /is not JSON/],
    ['labels', { gold: [0, 1], model: [0] }, /model: gold and model must have the same length/],
    ['labels', { gold: [0, 3], model: [0, 1] }, /gold\.1: /],
    ['labels', { model0_gold0: 1, model0_gold1: 2, model1_gold0: 3 }, /model1_gold1: /],
    ['labels', { model0_gold0: 0, model0_gold1: 0, model1_gold0: 0, model1_gold1: 0 }, /add up to 0/],
    ['rank', { ranking_a: ['a', 'a'], ranking_b: ['a', 'b'] }, /ranking_a: an id appears twice/],
    ['rank', { ranking_a: ['a'], ranking_b: ['a'], phis: [1] }, /phis\.0: φ must be less than 1/],
    ['alpha', { units: [[1, 'x']] }, /units\.0\.1: /],
    [
      'fleiss',
      {
        counts: [
          [1, 1],
          [2, 1],
        ],
      },
      /counts\.1: 3 ratings, item 0 has 2/,
    ],
    ['fleiss', { counts: [[1, 0]] }, /at least 2 ratings/],
  ] as const)('%s refuses %j with a one-line message, exit 1', async (command, content, message) => {
    const r = await inProcess(['agreement', command, file(content)])
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(message)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('a missing file and an unknown --level are refused', async () => {
    const missing = await inProcess(['agreement', 'fleiss', path.join(tmp, 'nope.json')])
    expect(missing.status).toBe(1)
    expect(missing.stderr).toMatch(/Cannot read/)
    const level = await inProcess(['agreement', 'alpha', file({ units: [[1, 1]] }), '--level', 'cardinal'])
    expect(level.status).toBe(2)
    expect(level.stderr).toMatch(/must be one of nominal, ordinal, interval, ratio/)
  })
})

describe('parley agreement (bin/parley.mjs, no database)', () => {
  it('each command prints one JSON object and exits by itself; bad input exits 1 with one line', () => {
    const labels = printed(spawned(['agreement', 'labels', file(TABLE1)]))
    expect(labels.kappa as number).toBeCloseTo(0.644, 3)
    const stdin = printed(spawned(['agreement', 'labels', '-'], JSON.stringify(TABLE1)))
    expect(stdin.kappa).toBe(labels.kappa)
    const rank = printed(
      spawned(['agreement', 'rank', file({ ranking_a: [1, 2, 3], ranking_b: [3, 2, 1], phis: [0.5] })]),
    )
    expect(rank.kendallTau as number).toBeCloseTo(-1, 12)
    expect((rank.rbo as Record<string, { norm: number }>)['0.5']!.norm).toBeCloseTo(0, 12)
    const alpha = printed(
      spawned([
        'agreement',
        'alpha',
        file({
          units: [
            [1, 1],
            [2, 2],
            [3, null],
          ],
        }),
        '--level',
        'interval',
      ]),
    )
    expect(alpha).toEqual({ alpha: 1, level: 'interval', pairable: 4 })
    const fleiss = printed(
      spawned([
        'agreement',
        'fleiss',
        file({
          counts: [
            [2, 0],
            [0, 2],
          ],
        }),
      ]),
    )
    // perfect agreement: P̄ = 1, p = (½, ½), P̄e = ½, κ = 1
    expect(fleiss).toEqual({ fleissKappa: 1, pBar: 1, pExpected: 0.5 })
    const bad = spawned(['agreement', 'labels', file({ gold: [0, 1], model: [1] })])
    expect(bad.status).toBe(1)
    expect(bad.stdout).toBe('')
    expect(bad.stderr.trim()).toMatch(/^parley: .*model: gold and model must have the same length$/)
  }, 120_000)
})
