// `parley evince metrics`, run as a user would (no database).
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { debateFileSchema, debateMetrics } from '@/protocols/evince/core/metrics'

const root = path.resolve(import.meta.dirname, '../../..')
const env = { ...process.env, DATABASE_URL: '' }
const parley = (args: string[], input?: string) =>
  spawnSync(process.execPath, ['bin/parley.mjs', ...args], { cwd: root, env, input, encoding: 'utf8', timeout: 60_000 })

describe('parley evince metrics', () => {
  it('prints every metric per round of the Jaundice debate, as the pages compute them', () => {
    const file = 'protocols/evince/tests/fixtures/jaundice.json'
    const r = parley(['evince', 'metrics', file])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
    const out = JSON.parse(r.stdout)
    expect(out).toEqual(
      JSON.parse(
        JSON.stringify(debateMetrics(debateFileSchema.parse(JSON.parse(readFileSync(path.join(root, file), 'utf8'))))),
      ),
    )
    // Hand-checked anchors (protocols/evince/core/metrics.test.ts derives them): WD .35, KL 1.4632 / 1.4668.
    expect(out.rounds[0].wd).toBeCloseTo(0.35, 12)
    expect(out.rounds[0].klAB).toBeCloseTo(1.4632, 4)
    expect(out.rounds[1].klAB).toBeCloseTo(1.4668, 4)
  })

  it('reads standard input, with aliases and epsilon', () => {
    const input = JSON.stringify({
      epsilon: 0,
      aliases: { HCV: 'Hepatitis C' },
      rounds: [{ A: [{ label: 'HCV', probability: 1 }], B: [{ label: 'Hepatitis C (chronic)', probability: 1 }] }],
    })
    const r = parley(['evince', 'metrics', '-'], input)
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.rounds[0]).toMatchObject({ labels: ['HCV'], wd: 0, jsd: 0, klAB: 0, nmi: 1 })
  })

  it('refuses a bad file with one clear line', () => {
    const bad = parley(
      ['evince', 'metrics', '-'],
      JSON.stringify({ rounds: [{ A: [], B: [{ label: 'x', probability: 1 }] }] }),
    )
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/rounds\.0\.A: A lists no labels/)
    const negative = parley(
      ['evince', 'metrics', '-'],
      JSON.stringify({ rounds: [{ A: [{ label: 'x', probability: -1 }], B: [{ label: 'x', probability: 1 }] }] }),
    )
    expect(negative.status).toBe(1)
    expect(negative.stderr).toMatch(/round 1: A: the probability of "x" is not a non-negative number/)
    const notJson = parley(['evince', 'metrics', '-'], '{rounds')
    expect(notJson.status).toBe(1)
    expect(notJson.stderr).toMatch(/is not JSON/)
  })
})
