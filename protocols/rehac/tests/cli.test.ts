// `parley rehac advantages` and `parley rehac eval`, run as a user would (no database), and the same
// commands in process (commander with the command module), so they are tested before 'rehac' is a
// registered protocol. Expected figures worked out by hand.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PROTOCOL_IDS } from '@/lib/protocols/registry'
import { cli } from '@/protocols/rehac/server/cli'
import { runProtocolCli } from '../../../tests/support/protocol-cli'
import { describeShared, sharedDir } from '../../../tests/support/shared'

const root = path.resolve(import.meta.dirname, '../../..')
const env = { ...process.env, DATABASE_URL: '' }
const tmp = mkdtempSync(path.join(tmpdir(), 'parley-rehac-cli-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

interface Result {
  status: number | null
  stdout: string
  stderr: string
}
/** Runs `parley …`; `input` is standard input (for "-"). */
type Runner = (args: string[], input?: string) => Promise<Result>

const spawned: Runner = async (args, input) =>
  spawnSync(process.execPath, ['bin/parley.mjs', ...args], {
    cwd: root,
    env,
    input,
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 256 * 1024 * 1024, // the advantage rows of strategyqa.jsonl are ~10 MB
  })

/**
 * The command module under commander as lib/cli/index.ts mounts it, with main()'s exit codes (usage 2,
 * a failure 1 as "parley: <message>"). Standard input ("-") is given as a file of the same text.
 */
let stdinFiles = 0
const inProcess: Runner = async (args, input) => {
  const argv = args.map((a) => {
    if (a !== '-' || input === undefined) return a
    const f = path.join(tmp, `stdin-${++stdinFiles}.jsonl`)
    writeFileSync(f, input)
    return f
  })
  return runProtocolCli('rehac', cli, argv)
}

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n')
const file = (name: string, text: string) => {
  const f = path.join(tmp, name)
  writeFileSync(f, text)
  return f
}
const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))

/**
 * Four episodes of one question (paths: 0 agent, 1 human); R = f1 − 0.08·C, C the human steps:
 *   e1 "0"  Finish[a]            f1 1    em true   C 0  R  1
 *   e2 "1"  Finish[b]            f1 0.5  em false  C 1  R  0.42
 *   e3 "10" Search[x], Finish[b] f1 0.5  em 0      C 1  R  0.42
 *   e4 "11" Search[x], Finish[c] f1 0    em 0      C 2  R −0.16
 * States: s0 = "Question: Q\n<solver>" (every episode; agent first, by e1), and s1 = s0 + " human\n
 * …Observation 1: o\n<solver>" (e3 agent, e4 human). e2's step 1 differs from e3's, so it ends there.
 */
const Q = 'Question: Q\n'
const step = (who: string, n: number, action: string, obs: string) =>
  `<solver> ${who}\nThought ${n}: t${n}\nAction ${n}: ${action}\nObservation ${n}: ${obs}\n`
const EPISODES = [
  { trajectory: Q + step('agent', 1, 'Finish[a]', 'done'), em: true, f1: 1 },
  { trajectory: Q + step('human', 1, 'Finish[b]', 'done'), em: false, f1: 0.5 },
  { trajectory: Q + step('human', 1, 'Search[x]', 'o') + step('agent', 2, 'Finish[b]', 'done'), em: 0, f1: 0.5 },
  { trajectory: Q + step('human', 1, 'Search[x]', 'o') + step('human', 2, 'Finish[c]', 'done'), em: 0, f1: 0 },
]
const S0 = 'Question: Q\n<solver>'
const S1 = `${Q + step('human', 1, 'Search[x]', 'o')}<solver>`

const SPAWN_TIMEOUT = 120_000
const registered = (PROTOCOL_IDS as readonly string[]).includes('rehac')
if (!registered)
  console.log(
    "skipped: parley rehac via bin/parley.mjs: 'rehac' is not in PROTOCOL_IDS yet (the in-process runs cover it)",
  )

describe.each([
  ['in process', inProcess, false],
  ['via bin/parley.mjs', spawned, !registered],
] as const)('parley rehac (%s)', (_how, parley, skip) => {
  // A spawned run starts tsx (seconds on a busy machine); some tests run several.
  const tryIt = (name: string, fn: () => Promise<void>) => it.skipIf(skip)(name, fn, SPAWN_TIMEOUT)
  const data = file('episodes.jsonl', `${jsonl(EPISODES)}\n`)

  tryIt('advantages: two rows per state seen with both actions, in first-seen order', async () => {
    const r = await parley(['rehac', 'advantages', data])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const rows = lines(r.stdout)
    expect(rows.map((x) => [x.state, x.action, x.count])).toEqual([
      [S0, 0, 1],
      [S0, 1, 3],
      [S1, 0, 1],
      [S1, 1, 1],
    ])
    expect(Object.keys(rows[0])).toEqual(['state', 'action', 'reward', 'count', 'meanReturn'])
    // s0: agent R̄ = 1; human R̄ = (0.42 + 0.42 − 0.16)/3 = 0.68/3; A = ±(1 − 0.68/3)/2 = ±0.38666…
    // s1: agent R̄ = 0.42 (e3); human R̄ = −0.16 (e4); A = ±(0.42 + 0.16)/2 = ±0.29
    const want = [
      [1, 0.38666666666666666],
      [0.68 / 3, -0.38666666666666666],
      [0.42, 0.29],
      [-0.16, -0.29],
    ]
    rows.forEach((x, i) => {
      expect(x.meanReturn).toBeCloseTo(want[i]?.[0] as number, 12)
      expect(x.reward).toBeCloseTo(want[i]?.[1] as number, 12)
    })
  })

  tryIt('advantages: --lambda and --max-state-chars (code points), standard input', async () => {
    // λ = 0: s0 agent 1, human (0.5 + 0.5 + 0)/3 = 1/3 → A = ±1/3; s1 agent 0.5, human 0 → ±0.25
    const r = await parley(['rehac', 'advantages', '-', '--lambda', '0'], jsonl(EPISODES))
    expect(r.status).toBe(0)
    const want = [1 / 3, -1 / 3, 0.25, -0.25]
    expect(
      lines(r.stdout)
        .map((x, i) => x.reward - (want[i] as number))
        .every((d) => Math.abs(d) < 1e-12),
    ).toBe(true)
    // s0 is 20 characters: the limit 20 keeps it and drops s1; 19 drops both.
    expect(S0.length).toBe(20)
    const keep = await parley(['rehac', 'advantages', data, '--max-state-chars', '20'])
    expect(lines(keep.stdout).map((x) => x.state)).toEqual([S0, S0])
    const none = await parley(['rehac', 'advantages', data, '--max-state-chars', '19'])
    expect(none.status).toBe(0)
    expect(none.stdout).toBe('')
  })

  tryIt('eval: means, totals, cost and pooled HIR at λ', async () => {
    const r = await parley(['rehac', 'eval', data])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
    const e = JSON.parse(r.stdout)
    // T = (1 + 0.5 + 0.5 + 0)/4; em = (1 + 0 + 0 + 0)/4; C = 0 + 1 + 1 + 2 = 4 of 1 + 1 + 2 + 2 = 6 steps;
    // cost = 0.08 · 4/4; R = (1 + 0.42 + 0.42 − 0.16)/4 = 0.42 = T − cost; HIR = 4/6.
    expect(Object.keys(e)).toEqual(['trajectories', 'T', 'em', 'humanSteps', 'steps', 'cost', 'R', 'hir'])
    expect(e).toMatchObject({ trajectories: 4, T: 0.5, em: 0.25, humanSteps: 4, steps: 6, cost: 0.08, hir: 4 / 6 })
    expect(e.R).toBeCloseTo(0.42, 12)
    const free = JSON.parse((await parley(['rehac', 'eval', '-', '--lambda', '0.5'], jsonl(EPISODES))).stdout)
    // λ = 0.5: R = (1 + 0 + 0 − 1)/4 = 0; cost 0.5 · 1 = 0.5
    expect(free).toMatchObject({ T: 0.5, cost: 0.5, R: 0 })
  })

  tryIt('a bad file exits 1 naming the line', async () => {
    const bad = file('bad.jsonl', `${jsonl([EPISODES[0], { ...EPISODES[1], f1: 2 }])}\n`)
    for (const cmd of ['advantages', 'eval']) {
      const r = await parley(['rehac', cmd, bad])
      expect(r.status).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^parley: .*bad\.jsonl: line 2: f1: .*\n$/)
    }
    const notJson = await parley(['rehac', 'eval', '-'], `${jsonl(EPISODES)}\n\n{"trajectory":`)
    expect(notJson.status).toBe(1)
    expect(notJson.stderr).toMatch(/: line 6: not JSON/)
    const noStep = await parley(['rehac', 'advantages', '-'], jsonl([{ trajectory: 'Question: Q', em: 0, f1: 0 }]))
    expect(noStep.status).toBe(1)
    expect(noStep.stderr).toMatch(/: line 1: trajectory: no "<solver> agent\|human" line/)
    const missing = await parley(['rehac', 'eval', '-'], jsonl([{ trajectory: EPISODES[0]?.trajectory, f1: 1 }]))
    expect(missing.stderr).toMatch(/: line 1: em: /)
    const empty = await parley(['rehac', 'eval', '-'], '\n\n')
    expect(empty.status).toBe(1)
    expect(empty.stderr).toMatch(/No trajectories in /)
    const noFile = await parley(['rehac', 'eval', 'no/such/file.jsonl'])
    expect(noFile.status).toBe(1)
    expect(noFile.stderr).toMatch(/Cannot read no\/such\/file\.jsonl/)
  })

  tryIt('a bad --lambda or --max-state-chars is a usage error (exit 2) and nothing is read', async () => {
    for (const v of ['-0.1', 'abc', 'Infinity', '']) {
      const r = await parley(['rehac', 'eval', data, '--lambda', v])
      expect(r.status).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/--lambda .*must be a finite number ≥ 0/)
    }
    for (const v of ['0', '1.5', '-3', 'x']) {
      const r = await parley(['rehac', 'advantages', data, '--max-state-chars', v])
      expect(r.status).toBe(2)
      expect(r.stderr).toMatch(/--max-state-chars .*must be a positive whole number/)
    }
  })

  tryIt('the help explains both formats', async () => {
    const a = await parley(['rehac', 'advantages', '--help'])
    expect(a.status).toBe(0)
    expect(a.stdout).toMatch(/"trajectory"[\s\S]*<solver> agent[\s\S]*"reward": A\(s,a\)/)
    const e = await parley(['rehac', 'eval', '--help'])
    expect(e.stdout).toMatch(/"hir": humanSteps \/ steps/)
  })
})

// Paper Table 4 ("Ours (ReHAC)", λ = 0.08) and the training rows of strategyqa.jsonl, from the released
// files as they are (see core/metrics.test.ts and core/advantages.test.ts for the same figures).
describeShared(
  'parley rehac on the released files',
  () => {
    const at2 = (x: number) => Math.round(x * 100 * 100) / 100
    describe.each([
      ['in process', inProcess, false],
      ['via bin/parley.mjs', spawned, !registered],
    ] as const)('%s', (_how, parley, skip) => {
      it.skipIf(skip).each([
        ['hotpotqa', { R: 31.38, hir: 51.46, T: 46.9, em: 37, humanSteps: 194, steps: 377 }],
        ['strategyqa', { R: 61.12, hir: 20.47, T: 66, humanSteps: 61, steps: 298 }],
        ['intercode', { R: 60.08, hir: 4.15, T: 62, humanSteps: 24, steps: 578 }],
      ] as const)(
        'eval %s gives Table 4',
        async (name, want) => {
          const r = await parley([
            'rehac',
            'eval',
            sharedDir('datasets', 'rehac', 'results', `${name}_lambda0.08.jsonl`),
          ])
          expect(r.stderr).toBe('')
          const e = JSON.parse(r.stdout)
          expect(e.trajectories).toBe(100)
          expect(e.cost).toBeCloseTo(e.T - e.R, 12)
          const got = {
            R: at2(e.R),
            hir: at2(e.hir),
            T: at2(e.T),
            em: at2(e.em),
            humanSteps: e.humanSteps,
            steps: e.steps,
          }
          expect(got).toMatchObject(want)
        },
        SPAWN_TIMEOUT,
      )

      it.skipIf(skip)(
        'advantages of strategyqa.jsonl: 4,338 rows, the first two by hand',
        async () => {
          const r = await parley(['rehac', 'advantages', sharedDir('datasets', 'rehac', 'strategyqa.jsonl')])
          expect(r.stderr).toBe('')
          expect(r.status).toBe(0)
          const rows = lines(r.stdout)
          expect(rows).toHaveLength(4338)
          // idx 296: "00" f1 1 → R 1; "10" → 0.92; "11" → 0.84. Agent R̄ 1 (n 1), human 0.88 (n 2), A ±0.06.
          const [a, b] = rows
          expect(a.state).toBe('Question: Would it be safe to have a jackfruit thrown at your head?\n<solver>')
          expect([a.action, a.count, b.action, b.count]).toEqual([0, 1, 1, 2])
          expect(a.reward).toBeCloseTo(0.06, 12)
          expect(b.meanReturn).toBeCloseTo(0.88, 12)
          for (let i = 0; i < rows.length; i += 2) expect(rows[i].reward + rows[i + 1].reward).toBe(0)
        },
        SPAWN_TIMEOUT,
      )
    })

    it.skipIf(!registered)(
      'stops quietly when its reader closes the pipe early (`… | head -1`), as Unix tools do',
      () => {
        // ~10 MB of rows into a pipe whose reader is gone after the first line: EPIPE on the next write.
        const file = sharedDir('datasets', 'rehac', 'strategyqa.jsonl')
        const r = spawnSync('sh', ['-c', `node bin/parley.mjs rehac advantages "$1" | head -1`, 'sh', file], {
          cwd: root,
          env,
          encoding: 'utf8',
          timeout: 60_000,
        })
        expect(r.stderr).toBe('')
        expect(JSON.parse(r.stdout).state).toMatch(/^Question: /)
      },
      SPAWN_TIMEOUT,
    )
  },
  'datasets/rehac',
)
