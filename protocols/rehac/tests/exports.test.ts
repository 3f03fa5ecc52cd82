import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { execute } from '@/lib/server/operation'
import { exportRun } from '@/lib/server/services/run-export'
import type { makeUser } from '../../../tests/support/fixtures'
import { useFakeLlm } from '../../../tests/support/llm'
import { treeRun } from './tree-run'

const fake = useFakeLlm()
const repo = path.resolve(import.meta.dirname, '../../..')
const tmp = mkdtempSync(path.join(tmpdir(), 'parley-rehac-exports-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

async function table(
  w: { researcher: Awaited<ReturnType<typeof makeUser>>; runId: string },
  name: string,
  args: Record<string, string> = {},
) {
  const r = await execute(exportRun, w.researcher, { runId: w.runId, table: name, args })
  if (!r.ok) throw new Error(`${name}: ${r.error}`)
  const out: Record<string, unknown>[] = []
  for await (const l of r.data.lines()) out.push(JSON.parse(l))
  return out
}

describe('ReHAC exports of a collected run', () => {
  it('offline-RL, Monte-Carlo, imitation, tree and metrics rows at a chosen λ; the offline-RL rows equal `parley rehac advantages` on the trajectories export', async () => {
    const w = await treeRun(fake())
    const trajectories = await table(w, 'trajectories')
    expect(trajectories).toHaveLength(3)

    for (const lambda of [0.06, 0.1]) {
      const adv = await table(w, 'advantages', { lambda: String(lambda) })
      expect(adv.map((r) => Object.keys(r))).toEqual(Array(4).fill(['state', 'action', 'reward', 'count']))
      const root = adv.filter((r) => r.state === adv[0]?.state)
      const rootA = root.find((r) => r.action === 0)?.reward as number
      expect(rootA).toBeCloseTo(0.25 + lambda / 4, 12)
      expect(root.find((r) => r.action === 1)?.reward).toBeCloseTo(-rootA, 12)
      const next = adv.filter((r) => r.state !== adv[0]?.state)
      expect(next.find((r) => r.action === 0)).toMatchObject({ count: 1 })
      expect(next.find((r) => r.action === 0)?.reward as number).toBeCloseTo((1 + lambda) / 2, 12)
      expect(root.find((r) => r.action === 0)).toMatchObject({ count: 2 })

      // The same trajectories through the CLI give the same rows (meanReturn is the CLI's extra column).
      const file = path.join(tmp, `t-${lambda}.jsonl`)
      writeFileSync(file, trajectories.map((t) => JSON.stringify(t)).join('\n'))
      const cli = spawnSync(
        process.execPath,
        ['bin/parley.mjs', 'rehac', 'advantages', file, '--lambda', String(lambda)],
        { cwd: repo, env: { ...process.env, DATABASE_URL: '' }, encoding: 'utf8', timeout: 120_000 },
      )
      expect(cli.stderr).toBe('')
      const fromCli = cli.stdout
        .trim()
        .split('\n')
        .map((l) => {
          const { meanReturn: _m, ...rest } = JSON.parse(l) as Record<string, unknown>
          return rest
        })
      expect(fromCli).toEqual(adv)
    }

    const mc = await table(w, 'monte-carlo', { lambda: '0.08' })
    // The root state (shortest) first, then the state after the agent's search.
    const byState = [...mc].sort(
      (a, b) => (a.state as string).length - (b.state as string).length || (a.action as number) - (b.action as number),
    )
    expect(byState.map((r) => [r.action, r.count])).toEqual([
      [0, 2],
      [1, 1],
      [0, 1],
      [1, 1],
    ])
    const means = byState.map((r) => r.meanReturn as number)
    for (const [got, want] of means.map((m, i) => [m, [(1 - 0.08) / 2, -0.08, 1, -0.08][i]]))
      expect(got).toBeCloseTo(want as number, 12)
    const imitation = await table(w, 'imitation', { lambda: '0.08' })
    expect(imitation.map((r) => r.action)).toEqual([0, 0])

    const tree = await table(w, 'tree', { lambda: '0.1' })
    expect(tree.map((r) => [r.path, r.steps, r.T, r.C]).sort()).toEqual([
      ['00', 2, 1, 0],
      ['01', 2, 0, 1],
      ['1', 1, 0, 1],
    ])
    // One root episode (the empty branch); each fork's path starts with the branch it was started for.
    expect(tree.filter((r) => r.branch === '')).toHaveLength(1)
    // A fork's parent is a session of the run whose path it shares up to the step it flipped.
    const byKey = new Map(tree.map((r) => [r.key, r]))
    for (const r of tree) {
      const branch = r.branch as string
      expect((r.path as string).startsWith(branch)).toBe(true)
      expect(branch === '' ? r.parent === '' : byKey.has(r.parent), `${r.key}'s parent`).toBe(true)
      if (branch !== '')
        expect(String(byKey.get(r.parent)?.path ?? 'no parent').startsWith(branch.slice(0, -1))).toBe(true)
      expect(r.R as number).toBeCloseTo((r.T as number) - 0.1 * (r.C as number), 12)
    }

    const metrics = await table(w, 'metrics', { lambdas: '0,0.1' })
    expect(metrics).toHaveLength(2)
    expect(metrics[0]).toMatchObject({ method: 'program:tree', lambda: 0, episodes: 3, humanSteps: 2, steps: 5 })
    expect(metrics[0]?.T as number).toBeCloseTo(1 / 3, 12)
    expect(metrics[1]?.R as number).toBeCloseTo(1 / 3 - (0.1 * 2) / 3, 12)
    expect(metrics[1]?.hir as number).toBeCloseTo(2 / 5, 12)

    // A bad λ is refused before any row, naming the parameter.
    for (const [name, args] of [
      ['advantages', { lambda: 'abc' }],
      ['tree', { lambda: '-1' }],
      ['metrics', { lambdas: '0.08,x' }],
    ] as const) {
      const bad = await execute(exportRun, w.researcher, { runId: w.runId, table: name, args })
      expect(bad, name).toMatchObject({
        ok: false,
        status: 400,
        fieldErrors: { [Object.keys(args)[0] as string]: expect.any(Array) },
      })
    }
  })
})
