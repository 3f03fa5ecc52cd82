import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import type { CliTools, ProtocolCli } from '@/lib/server/sdk'
import { deltaFeedback, type EpisodeOutcome, ols, round2, type SrBreakdown, successRates } from '../core/metrics'
import { parseRecord, parseRunPath, type RunPath } from '../core/results'

/** At most this many results files and records per tree (the full release: 586 tasks × 6 runs in 48 files). */
export const MAX_FILES = 2_000
export const MAX_RECORDS = 200_000

const FORMAT = `
<dir> is one model's folder of the authors' released outputs (github.com/xingyaoww/mint-bench
data/outputs/<model>), holding runs as
  F=<feedback>/[PHF=<GT|no_GT>-<textual|binary>/]max<k>_p<p>+tool+cd/<task type>/<dataset>/results.jsonl
with one record per line ({"state": {"success", "agent_action_count", "terminate_reason", "history" …},
"task": {…}}). Prints one JSON object: per run the records, successes and SR (percent, 2 decimals) micro,
by task type and by data set; SR by k over the runs without feedback; the OLS slope, intercept and R² of
SR over k; and Δfeedback (SR of the feedback run − SR without feedback at the same k, in points).`

interface RunAcc {
  path: string
  k: number
  p: number
  feedback: string | null
  phf: RunPath['phf']
  episodes: EpisodeOutcome[]
}

const round = (x: number | null, d: number) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d)

function roundBreakdown(b: SrBreakdown) {
  const one = (r: { records: number; successes: number; sr: number | null }) => ({
    records: r.records,
    successes: r.successes,
    sr: round2(r.sr),
  })
  return {
    records: b.records,
    successes: b.successes,
    sr: round2(b.sr),
    byType: Object.fromEntries(Object.entries(b.byType).map(([k, v]) => [k, one(v)])),
    byTask: Object.fromEntries(Object.entries(b.byTask).map(([k, v]) => [k, one(v)])),
  }
}

/** The results files under `dir`, relative to it (bounded). */
function resultsFiles(dir: string, CliError: CliTools['CliError']): string[] {
  let st: ReturnType<typeof statSync>
  try {
    st = statSync(dir)
  } catch (e) {
    throw new CliError(`Cannot read ${dir}: ${(e as Error).message}`)
  }
  if (!st.isDirectory()) throw new CliError(`${dir} is not a folder.`)
  const files = (readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => path.basename(f) === 'results.jsonl')
    .sort()
  if (files.length === 0) throw new CliError(`No results.jsonl under ${dir}.`)
  if (files.length > MAX_FILES) throw new CliError(`${dir} holds more than ${MAX_FILES} results files.`)
  return files
}

/** `parley mint sr <dir>`: success rates of one model's released runs (no database). */
export async function srSummary(dir: string, t: Pick<CliTools, 'readLines' | 'CliError'>) {
  const model = path.basename(path.resolve(dir))
  const runs = new Map<string, RunAcc>()
  let total = 0
  for (const rel of resultsFiles(dir, t.CliError)) {
    let rp: RunPath
    try {
      rp = parseRunPath(path.join(model, rel))
    } catch (e) {
      throw new t.CliError((e as Error).message)
    }
    const acc = runs.get(rp.run) ?? {
      path: rp.run,
      k: rp.k,
      p: rp.p,
      feedback: rp.feedback,
      phf: rp.phf,
      episodes: [],
    }
    runs.set(rp.run, acc)
    let n = 0
    for await (const line of t.readLines(path.join(dir, rel))) {
      n++
      if (line.trim() === '') continue
      if (++total > MAX_RECORDS) throw new t.CliError(`${dir} holds more than ${MAX_RECORDS} records.`)
      let r: ReturnType<typeof parseRecord>
      try {
        r = parseRecord(line, `${rel}:${n}`)
      } catch (e) {
        throw new t.CliError((e as Error).message)
      }
      acc.episodes.push({ dataset: rp.dataset, success: r.state.success, counts: r.state.agent_action_count })
    }
  }
  const list = [...runs.values()].sort((a, b) =>
    a.feedback === b.feedback ? a.k - b.k || a.path.localeCompare(b.path) : a.feedback === null ? -1 : 1,
  )
  const rates = new Map(list.map((r) => [r.path, successRates(r.episodes)]))
  const noFeedback = list.filter((r) => r.feedback === null)
  const srByK: Record<string, number | null> = {}
  for (const r of noFeedback) {
    if (String(r.k) in srByK) throw new t.CliError(`Two runs without feedback have k = ${r.k}.`)
    srByK[String(r.k)] = (rates.get(r.path) as SrBreakdown).sr
  }
  const points = noFeedback
    .map((r) => ({ x: r.k, y: (rates.get(r.path) as SrBreakdown).sr }))
    .filter((p): p is { x: number; y: number } => p.y !== null)
  const fit = new Set(points.map((p) => p.x)).size >= 2 ? ols(points) : null
  // Δfeedback: the textual feedback run without ground truth (the paper's default), else the only feedback
  // run, against the run without feedback at the same k.
  const fb = list.filter((r) => r.feedback !== null)
  const chosen =
    fb.find((r) => r.phf?.form === 'textual' && !r.phf.groundTruth) ?? (fb.length === 1 ? fb[0] : undefined)
  const base = chosen && noFeedback.find((r) => r.k === chosen.k && r.p === chosen.p)
  let delta: Record<string, number | null> | null = null
  if (chosen && base) {
    const d = deltaFeedback(rates.get(chosen.path) as SrBreakdown, rates.get(base.path) as SrBreakdown)
    delta = Object.fromEntries(Object.entries(d).map(([k, v]) => [k, round2(v ?? null)]))
  }
  return {
    model,
    runs: list.map((r) => {
      const b = roundBreakdown(rates.get(r.path) as SrBreakdown)
      return { path: r.path, k: r.k, p: r.p, feedback: r.feedback, ...b }
    }),
    srByK: Object.fromEntries(Object.entries(srByK).map(([k, v]) => [k, round2(v)])),
    slope: fit ? round(fit.slope, 3) : null,
    intercept: fit ? round(fit.intercept, 3) : null,
    r2: fit ? round(fit.r2, 4) : null,
    deltaFeedback: delta,
    deltaFeedbackRun: chosen && base ? { with: chosen.path, without: base.path } : null,
  }
}

/** `parley mint …`: MINT's figures from the authors' released outputs (no database). */
export const cli: ProtocolCli = {
  description: 'MINT (multi-turn tools and language feedback): success rates of released runs (no database)',
  commands(cmd, t: CliTools) {
    cmd
      .command('sr')
      .description('SR per run (micro, by task type, by data set), SR by k, its OLS slope and Δfeedback, as JSON')
      .argument('<dir>', "one model's folder of released runs")
      .addHelpText('after', FORMAT)
      .action(async (dir: string) => {
        t.out(JSON.stringify(await srSummary(dir, t)))
      })
  },
}
