import { spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { unzipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { clemTable } from '@/protocols/scorekeeping/core/clemscore'
import type { Actor } from '@/lib/server/actor'
import { execute } from '@/lib/server/operation'
import { demoGameFiles } from '@/protocols/scorekeeping/server/demo'
import { exportRunFile } from '@/lib/server/services/run-export'
import { parseInstancesFile } from '@/protocols/scorekeeping/core/clembench'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'
import { type Reply, truthful } from './support'
import { scriptedDataset, scriptedRun } from './support-db'
import { sharedDir } from '../../../tests/support/shared'

/**
 * clembench's own tools on Parley's clembench export: clemcore's `clem score`, `clem transcribe` and
 * `clem eval` (its code, unchanged, through protocols/scorekeeping/tests/clembench/clem.py) read the exported results folder,
 * and clembench's `PrivateShared` game master plays Parley's demo game folder.
 *
 * Needs what this machine cannot download: a clemcore checkout (PARLEY_CLEMCORE_DIR, e.g. release
 * 3.4.2), a clembench checkout (PARLEY_CLEMBENCH_DIR, with `privateshared/`) and a python3 with
 * scikit-learn, pandas, numpy, PyYAML, tqdm, nltk, markdown and retry (Debian: python3-sklearn
 * python3-pandas python3-yaml python3-tqdm python3-nltk python3-markdown python3-retry). Without them
 * the block is skipped with a visible line.
 */
const CLEMCORE = process.env.PARLEY_CLEMCORE_DIR
const CLEMBENCH = process.env.PARLEY_CLEMBENCH_DIR
const PYTHON = process.env.PARLEY_PYTHON ?? 'python3'
const HARNESS = path.resolve(import.meta.dirname, 'clembench/clem.py')

function missing(): string | null {
  if (!CLEMCORE || !existsSync(path.join(CLEMCORE, 'clemcore', 'clemeval.py')))
    return 'PARLEY_CLEMCORE_DIR (a clemcore checkout)'
  if (!CLEMBENCH || !existsSync(path.join(CLEMBENCH, 'privateshared', 'master.py')))
    return 'PARLEY_CLEMBENCH_DIR (a clembench checkout)'
  const py = spawnSync(PYTHON, ['-c', 'import sklearn, pandas, numpy, yaml, tqdm, nltk, markdown, retry'])
  if (py.status !== 0) return `${PYTHON} with scikit-learn, pandas, PyYAML, tqdm, nltk, markdown and retry`
  return null
}

const why = missing()

/** clemcore's release (its pyproject.toml), e.g. [3, 4, 2]. */
function clemcoreVersion(): number[] {
  const toml = readFileSync(path.join(CLEMCORE as string, 'pyproject.toml'), 'utf8')
  return (/^version\s*=\s*"([\d.]+)"/m.exec(toml)?.[1] ?? '0').split('.').map(Number)
}
const describeClem = why ? describe.skip : describe
if (why) console.log(`skipped: clembench's own tools on the export: needs ${why}`)

/** Runs clemcore's command line in `cwd` (its clembench.log lands there); the game from `home`. */
function clem(cwd: string, args: string[], home = CLEMBENCH as string) {
  const r = spawnSync(PYTHON, [HARNESS, ...args], {
    cwd,
    env: { ...process.env, PYTHONPATH: CLEMCORE, CLEMBENCH_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
  const log = existsSync(path.join(cwd, 'clembench.log')) ? readFileSync(path.join(cwd, 'clembench.log'), 'utf8') : ''
  return { status: r.status, out: `${r.stdout}${r.stderr}`, log }
}

/** Python's json (NaN for a missing score) as JSON with null. */
const pyJson = (text: string) => JSON.parse(text.replace(/\bNaN\b/g, 'null'))

function files(dir: string, name: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name === name) out.push(p)
    }
  }
  walk(dir)
  return out.sort()
}

/** One CSV line's fields (quoted fields may hold commas). */
function fields(line: string): string[] {
  const out: string[] = []
  let at = 0
  for (;;) {
    const quoted = line[at] === '"'
    const end = quoted ? line.indexOf('"', at + 1) + 1 : line.indexOf(',', at) < 0 ? line.length : line.indexOf(',', at)
    out.push(quoted ? line.slice(at + 1, end - 1) : line.slice(at, end))
    if (end >= line.length) return out
    at = end + 1
  }
}

/** The CSV clemeval writes: a header (the first column, the model, unnamed) and one row per model. */
function csv(text: string) {
  const [head, ...rows] = text.trim().split('\n')
  const cols = fields(head as string)
  return rows.map((r) => Object.fromEntries(fields(r).map((v, i) => [cols[i] || 'model', v])))
}

const fake = useFakeLlm()

const temps: string[] = []
/** A new folder under the system's temp folder, removed after the file's tests. */
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  temps.push(dir)
  return dir
}
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true })
})

/** The run's clembench export, unzipped into a new folder. */
async function exported(actor: Actor, runId: string): Promise<string> {
  const file = await execute(exportRunFile, actor, { runId, file: 'clembench' })
  if (!file.ok) throw new Error(file.error)
  const dir = tempDir('parley-clem-')
  for (const [name, bytes] of Object.entries(unzipSync(file.data.bytes))) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    writeFileSync(path.join(dir, name), bytes)
  }
  return dir
}

/**
 * clem score, transcribe and eval on one results root of the export, whose episodes are `expected`
 * (paths of scores.json under the root): clemcore's scores equal Parley's, every episode gets its
 * transcripts, and clemcore's clem table equals Parley's for these episodes.
 */
function checkWithClem(dir: string, root: string, model: string, expected: string[]) {
  const rootDir = path.join(dir, root)
  expect(readdirSync(rootDir)).toEqual([model])
  const parley = files(rootDir, 'scores.json')
  expect(parley.map((f) => path.relative(rootDir, f))).toEqual(expected)
  const ours = (f: string) => JSON.parse(readFileSync(f.replace(/scores\.json$/, 'parley-scores.json'), 'utf8'))
  for (const f of parley) renameSync(f, f.replace(/scores\.json$/, 'parley-scores.json'))

  const scored = clem(dir, ['score', '-g', 'privateshared', '-r', rootDir])
  expect(scored.status, scored.out).toBe(0)
  expect(scored.log).not.toMatch(/Cannot score|exceptions occurred/)
  for (const f of parley) expect(pyJson(readFileSync(f, 'utf8')), f).toEqual(ours(f))

  const transcribed = clem(dir, ['transcribe', '-g', 'privateshared', '-r', rootDir])
  expect(transcribed.status, transcribed.out).toBe(0)
  expect(transcribed.log).not.toMatch(/Cannot transcribe|exceptions occurred/)
  for (const f of parley) {
    const html = readFileSync(path.join(path.dirname(f), 'transcript.html'), 'utf8')
    const { meta } = JSON.parse(readFileSync(path.join(path.dirname(f), 'interactions.json'), 'utf8'))
    expect(html).toContain(
      `game 'privateshared', experiment '${meta.experiment_name}', episode ${meta.game_id} with ${model}.`,
    )
    expect(html).toContain('Player 1 (Answerer) to GM (Game Master)')
    expect(existsSync(path.join(path.dirname(f), 'transcript.tex'))).toBe(true)
  }

  const evaluated = clem(dir, ['eval', '-r', rootDir])
  expect(evaluated.status, evaluated.out).toBe(0)
  const rows = csv(readFileSync(path.join(rootDir, 'results.csv'), 'utf8'))
  const table = clemTable(
    parley.map((f) => ({
      game: 'privateshared',
      model,
      aborted: ours(f)['episode scores'].Aborted,
      mainScore: ours(f)['episode scores']['Main Score'],
    })),
  )
  expect(rows).toHaveLength(1)
  expect(rows[0]?.model).toBe(model)
  expect(Number(rows[0]?.['-, clemscore'])).toBe(table[0]?.clemscore)
  expect(Number(rows[0]?.['privateshared, % Played'])).toBe(table[0]?.games[0]?.played)
  expect(Number(rows[0]?.['privateshared, Quality Score'])).toBe(table[0]?.games[0]?.quality)
}

describeClem("clembench's own tools read the scorekeeping export", () => {
  it('clem score reproduces every scores.json, clem transcribe writes every transcript, clem eval gives the clem table', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const ds = await scriptedDataset(study.id)
    const { runId } = await scriptedRun(researcher, {
      studyId: study.id,
      datasetId: ds.id,
      answerer: { kind: 'llm', connectionId: conn.id, model: 'gen', temperature: 0 },
      repetitions: 2,
    })
    const dir = await exported(researcher, runId)
    // clemcore's folders: the model with its temperature, the game, the experiment, instance_<game_id>;
    // the second play of each game in a root of its own
    expect(readdirSync(dir).sort()).toEqual(['results', 'results-2'])
    const episodes = [0, 1, 2, 3, 4, 5].map((id) => `gen-t0.0/privateshared/test-trip/instance_0000${id}/scores.json`)
    for (const root of ['results', 'results-2']) checkWithClem(dir, root, 'gen-t0.0', episodes)
  }, 240_000)

  it('the same on the released games (all five experiments, 5, 10 and 15 slots)', async (t) => {
    const data = sharedDir('datasets', 'clembench-privateshared')
    if (!existsSync(data)) {
      console.log('skipped: the released games: needs ../shared/datasets/clembench-privateshared (released data)')
      t.skip()
    }
    const resources: Record<string, string> = {}
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name)
        if (e.isDirectory()) walk(p)
        else resources[path.relative(data, p)] = readFileSync(p, 'utf8')
      }
    }
    walk(path.join(data, 'resources'))
    const parsed = parseInstancesFile(readFileSync(path.join(data, 'in', 'instances.json'), 'utf8'), resources)
    // each game played its own way: truthful, "no" to every probe, anticipating, a wrong value, retries
    const styles: Reply[] = [
      truthful,
      (ask, state) => (ask.kind === 'answer' ? truthful(ask, state) : 'ASIDE: no'),
      (ask, state) => {
        if (ask.kind !== 'answer') return truthful(ask, state)
        const next = state.instance.requestOrder[ask.round]
        const extra = state.instance.slots.find((s) => s.name === next)?.value
        return `${truthful(ask, state).replace(/\.$/, '')}${extra ? `, and ${extra}` : ''}.`
      },
      (ask, state) => (ask.kind === 'answer' && ask.round === 2 ? 'ANSWER: I am not sure.' : truthful(ask, state)),
      (ask, state) => (ask.kind === 'probe-answer' && ask.try < 3 ? 'Hmm.' : truthful(ask, state)),
    ]
    const games = parsed.experiments.flatMap((e) =>
      e.instances.map((instance, i) => ({
        what: `${e.name} ${i}`,
        instance,
        reply: styles[i % styles.length] as Reply,
      })),
    )
    expect(games).toHaveLength(50)
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const ds = await scriptedDataset(study.id, games)
    const { runId } = await scriptedRun(
      researcher,
      { studyId: study.id, datasetId: ds.id, answerer: { kind: 'llm', connectionId: conn.id, temperature: 0 } },
      games,
    )
    const dir = await exported(researcher, runId)
    expect(readdirSync(dir)).toEqual(['results'])
    const episodes = parsed.experiments
      .flatMap((e) =>
        e.instances.map(
          (i) => `gen-t0.0/privateshared/${e.name}/instance_${String(i.gameId).padStart(5, '0')}/scores.json`,
        ),
      )
      .sort()
    checkWithClem(dir, 'results', 'gen-t0.0', episodes)
  }, 600_000)

  it("clembench's PrivateShared game master plays the demo game folder", (t) => {
    // From clemcore 3.5 the legacy master starts at round −1 and clembench's game fails on its own
    // instances (KeyError '-1' in probes): the game runs on clemcore up to 3.4.
    const [major = 0, minor = 0] = clemcoreVersion()
    if (major > 3 || (major === 3 && minor > 4)) {
      console.log(`skipped: clembench's game master needs clemcore ≤ 3.4 (this is ${clemcoreVersion().join('.')})`)
      t.skip()
    }
    // clembench's game code with the demo game's instances and resources in place of its own
    const game = path.join(tempDir('parley-demo-game-'), 'privateshared')
    mkdirSync(game)
    for (const f of ['master.py', 'constants.py', 'clemgame.json'])
      cpSync(path.join(CLEMBENCH as string, 'privateshared', f), path.join(game, f))
    for (const [name, text] of Object.entries(demoGameFiles(3))) {
      mkdirSync(path.dirname(path.join(game, name)), { recursive: true })
      writeFileSync(path.join(game, name), text)
    }
    const out = path.join(path.dirname(game), 'out')
    mkdirSync(out)
    const played = clem(out, ['play', 'privateshared', path.join(out, 'results')], path.dirname(game))
    expect(played.status, played.out).toBe(0)
    const interactions = files(path.join(out, 'results'), 'interactions.json')
    expect(interactions).toHaveLength(3)
    for (const f of interactions) {
      const i = JSON.parse(readFileSync(f, 'utf8'))
      expect(i.meta.experiment_name).toBe('clinic-visit')
      // the master asked its programmatic questioner with the demo game's DUMMY_PROMPT
      expect(i.turns[0]).toContainEqual(
        expect.objectContaining({
          to: 'Player 2',
          action: expect.objectContaining({ content: 'What is the next request?' }),
        }),
      )
    }
  }, 120_000)

  it("beside clembench's own run of the same model, clem eval shows one row", async (t) => {
    const [major = 0, minor = 0] = clemcoreVersion()
    if (major > 3 || (major === 3 && minor > 4)) {
      console.log(`skipped: clembench's game master needs clemcore ≤ 3.4 (this is ${clemcoreVersion().join('.')})`)
      t.skip()
    }
    // clembench's game played by clemcore's "mock" model at temperature 0 (clem run -m mock) …
    const dir = tempDir('parley-clem-mixed-')
    const played = clem(dir, ['play', 'privateshared', path.join(dir, 'results')])
    expect(played.status, played.out).toBe(0)
    expect(readdirSync(path.join(dir, 'results'))).toEqual(['mock-t0.0'])
    // … and a Parley run of a model called "mock" at temperature 0, in the same results folder
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const ds = await scriptedDataset(study.id)
    const { runId } = await scriptedRun(researcher, {
      studyId: study.id,
      datasetId: ds.id,
      answerer: { kind: 'llm', connectionId: conn.id, model: 'mock', temperature: 0 },
    })
    cpSync(path.join(await exported(researcher, runId), 'results'), path.join(dir, 'results'), { recursive: true })
    expect(readdirSync(path.join(dir, 'results'))).toEqual(['mock-t0.0'])
    const scored = clem(dir, ['score', '-g', 'privateshared', '-r', path.join(dir, 'results')])
    expect(scored.status, scored.out).toBe(0)
    const evaluated = clem(dir, ['eval', '-r', path.join(dir, 'results')])
    expect(evaluated.status, evaluated.out).toBe(0)
    const rows = csv(readFileSync(path.join(dir, 'results', 'results.csv'), 'utf8'))
    expect(rows.map((r) => r.model)).toEqual(['mock-t0.0'])
    // 50 of clembench's episodes and Parley's 6 in the one row
    const raw = readFileSync(path.join(dir, 'results', 'raw.csv'), 'utf8')
    expect(raw.split('\n').filter((l) => l.includes(',Main Score,')).length).toBe(56)
  }, 240_000)
})
