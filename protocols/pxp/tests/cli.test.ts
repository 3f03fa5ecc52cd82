// The database-free `parley pxp …` commands, run as a user would: `node bin/parley.mjs`.
// Expected numbers are worked out by hand from the fixtures (see the comments), not by the code.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../../..')
const fixture = (name: string) => path.join('protocols/pxp/tests/fixtures', name)
// No DATABASE_URL: these commands must not need one (nor start the embedded PostgreSQL).
const env = { ...process.env, DATABASE_URL: '' }
const parley = (args: string[], input?: string) =>
  spawnSync(process.execPath, ['bin/parley.mjs', ...args], { cwd: root, env, input, encoding: 'utf8', timeout: 60_000 })
const s = (median: number, min = median, max = median) => ({ median, min, max })

describe('parley pxp stats', () => {
  it('reads messages.jsonl: 4 repetitions, lines out of order, any case, defaults and extra fields', () => {
    // Per repetition (hand-derived from Definitions 1–2):
    //   rep 1: 3 sessions; one-way h 2, m 2; two-way 2; strong h 1, m 2; ultra h 0, m 1
    //   rep 2: 4 sessions; one-way h 2, m 2; two-way 2; strong h 1, m 2; ultra h 0, m 1
    //   rep 3: 3 sessions; one-way h 3, m 3; two-way 3; strong h 2, m 3; ultra h 1, m 0
    //   rep 4: 1 session;  all 0
    // Even R = 4: the median is the mean of the two middle values.
    const r = parley(['pxp', 'stats', fixture('messages.jsonl')])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
    const out = JSON.parse(r.stdout)
    expect(Object.keys(out)).toEqual([
      'repetitions',
      'sessions',
      'oneWay',
      'twoWay',
      'strong',
      'ultraStrong',
      'byBound',
    ])
    expect(out.repetitions).toBe(4)
    expect(out.sessions).toBe(3) // 3, 4, 3, 1
    expect(out.oneWay).toEqual({ human: s(2, 0, 3), machine: s(2, 0, 3) })
    expect(out.twoWay).toEqual(s(2, 0, 3))
    expect(out.strong).toEqual({ human: s(1, 0, 2), machine: s(2, 0, 3) })
    expect(out.ultraStrong).toEqual({ human: s(0, 0, 1), machine: s(0.5, 0, 1) })
    // byBound per repetition (h; m): j=2 → 1,2,2,0; 0 · j=3 → 1,2,2,0; 2,2,3,0 · j=4 → 2,1,3,0 (rep 2's
    // s3 rejects at 4); 2,2,3,0 · j=6 → 2,2,3,0 (rep 2's s4 ratifies at 6)
    expect(out.byBound).toEqual([
      { j: 1, oneWayHuman: s(0), oneWayMachine: s(0) },
      { j: 2, oneWayHuman: s(1.5, 0, 2), oneWayMachine: s(0) },
      { j: 3, oneWayHuman: s(1.5, 0, 2), oneWayMachine: s(2, 0, 3) },
      { j: 4, oneWayHuman: s(1.5, 0, 3), oneWayMachine: s(2, 0, 3) },
      { j: 5, oneWayHuman: s(1.5, 0, 3), oneWayMachine: s(2, 0, 3) },
      { j: 6, oneWayHuman: s(2, 0, 3), oneWayMachine: s(2, 0, 3) },
    ])
  })

  it('a bad line: exit 1, the line number on stderr, nothing on stdout', () => {
    const r = parley(['pxp', 'stats', fixture('bad-line.jsonl')])
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^parley: line 3: j: /)
  })

  it('a missing file: exit 1 with the reason', () => {
    const r = parley(['pxp', 'stats', fixture('no-such-file.jsonl')])
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/Cannot read .*no-such-file\.jsonl: ENOENT/)
  })

  it('reads standard input with "-"', () => {
    const lines = [
      { session: 'x', j: 1, sender: 'm', tag: 'INIT' },
      { session: 'x', j: 2, sender: 'h', tag: 'RATIFY' },
      { session: 'x', j: 3, sender: 'm', tag: 'RATIFY' },
    ].map((o) => JSON.stringify(o))
    const r = parley(['pxp', 'stats', '-'], `${lines.join('\n')}\n`)
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout).strong).toEqual({ human: s(1), machine: s(1) })
  })
})

describe('parley pxp import-tags', () => {
  it("turns the authors' tags.txt into JSONL messages", () => {
    const r = parley(['pxp', 'import-tags', fixture('tags-drug.txt'), '--repetition', '2'])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { repetition: 2, session: '77aa', j: 1, sender: 'm', tag: 'INIT', mol: 'CC(=O)Oc1ccccc1C(=O)O.O' },
      { repetition: 2, session: '77aa', j: 2, sender: 'h', tag: 'RATIFY', mol: 'CC(=O)Oc1ccccc1C(=O)O.O' },
      { repetition: 2, session: '77aa', j: 3, sender: 'm', tag: 'RATIFY', mol: 'CC(=O)Oc1ccccc1C(=O)O.O' },
      { repetition: 2, session: '88bb', j: 1, sender: 'm', tag: 'INIT', mol: 'CCN(CC)CC.O=C(Cl)c1ccccc1' },
      { repetition: 2, session: '88bb', j: 2, sender: 'h', tag: 'REVISE', mol: 'CCN(CC)CC.O=C(Cl)c1ccccc1' },
      { repetition: 2, session: '88bb', j: 3, sender: 'm', tag: 'REVISE', mol: 'CCN(CC)CC.O=C(Cl)c1ccccc1' },
      { repetition: 2, session: '88bb', j: 4, sender: 'h', tag: 'RATIFY', mol: 'CCN(CC)CC.O=C(Cl)c1ccccc1' },
      { repetition: 2, session: '88bb', j: 5, sender: 'm', tag: 'RATIFY', mol: 'CCN(CC)CC.O=C(Cl)c1ccccc1' },
    ])
  })

  it('pipes into stats: `parley pxp import-tags tags.txt | parley pxp stats /dev/stdin`', () => {
    const r = spawnSync(
      'sh',
      ['-c', `node bin/parley.mjs pxp import-tags ${fixture('tags.txt')} | node bin/parley.mjs pxp stats /dev/stdin`],
      { cwd: root, env, encoding: 'utf8', timeout: 60_000 },
    )
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    // a1b2 ⟨INIT, RATIFY, RATIFY⟩: strong both · c3d4 ⟨INIT, REFUTE, REVISE, RATIFY, RATIFY⟩: one-way both,
    // strong and ultra-strong m · e5f6 (human REJECT) and 0a9f (a machine REJECT, then on): nothing
    const out = JSON.parse(r.stdout)
    expect(out.repetitions).toBe(1)
    expect(out.sessions).toBe(4)
    expect(out.oneWay).toEqual({ human: s(2), machine: s(2) })
    expect(out.twoWay).toEqual(s(2))
    expect(out.strong).toEqual({ human: s(1), machine: s(2) })
    expect(out.ultraStrong).toEqual({ human: s(0), machine: s(1) })
    expect(
      out.byBound.map((b: { j: number; oneWayHuman: { median: number }; oneWayMachine: { median: number } }) => [
        b.j,
        b.oneWayHuman.median,
        b.oneWayMachine.median,
      ]),
    ).toEqual([
      [1, 0, 0],
      [2, 1, 0],
      [3, 1, 2],
      [4, 2, 2],
      [5, 2, 2],
      [6, 2, 2],
      [7, 2, 2],
    ])
  })

  it('a malformed line: exit 1 with its number, nothing on stdout', () => {
    const r = parley(['pxp', 'import-tags', fixture('tags-bad.txt')])
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^parley: line 2: expected `sessionID-/)
  })

  it('refuses a repetition that is not a whole number', () => {
    const r = parley(['pxp', 'import-tags', fixture('tags.txt'), '--repetition', 'two'])
    expect(r.status).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/must be a whole number/)
  })
})
