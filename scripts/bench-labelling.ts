/**
 * `npm run bench:labelling`: the labelling protocol's figures (issue 25), in named sections; each
 * prints its figures with the target beside them (never asserted: a bench reports).
 *
 *   - bootstrapKappa: binarised κ with 1,000 resamples over 3,000 items (lib/metrics/agreement.ts),
 *     median of several runs after a warm-up. Target < 200 ms.
 *   - promptLabTable: the prompt lab's Table 2 (MAE, κ, AUC with 20 bootstrap resamples each, † per
 *     column), Table 3 and split-half stability (1,000 halves) for 32 variants × 3,000 items of
 *     synthetic labels (seeded), without and with 4 TREC runs of 100 documents per query (RBO columns).
 *   - agreementPage: a labelling run of 10,000 items × 3 annotators with gold, made by runs.create
 *     and labelled in bulk SQL as submitted labels are stored (scripts/bench-labelling-seed.ts), then
 *     the agreement page's data function (`agreementPage`, what /studies/…/p/labelling/agreement/…
 *     calls) timed over several runs after a warm-up: p50 and max. Target < 1 s. The project page's
 *     (`projectPage`) beside it.
 *   - annotators: 100 annotators (study members, signed in over HTTP) against the production server
 *     (`npm run build` first; scripts/serve.mjs on 127.0.0.1) over a claimable run of 3 slots per item
 *     with distinct claimants, once the server's worker has stepped every session of the run to its
 *     annotator (readySeconds): each, for 30 s, claims the next slot (`POST /runs/{id}/claim-next`; a
 *     409 is a lost race, counted, not an error), spends about --think-ms on it and submits its label
 *     (`POST …/turns`, the REST twin of the label form). Submit p50/p95 (target p95 < 150 ms), claims, submits, errors (target
 *     0), slots labelled twice and items one person labelled twice, counted in SQL after (target 0),
 *     the server's peak RSS (VmRSS of its process tree, sampled every 250 ms). Loopback only.
 *
 * The database sections make one throwaway database (on the server in DATABASE_URL, or the embedded
 * PostgreSQL) and drop it. Without a build, `annotators` is skipped with a note (an error when named
 * in --only). Last stdout line: one JSON object { bench, sections: { name: figures } }.
 *
 *   npx tsx scripts/bench-labelling.ts [--items 3000] [--runs 5] [--only name,name]
 *        [--agreement-items 10000] [--annotators 100] [--duration 30] [--load-items 3000] [--port 3402]
 */
import path from 'node:path'
import { z } from 'zod'
import { bootstrapKappa, mulberry32 } from '../lib/metrics/agreement'
import { type LabItem, type LabVariant, promptLabTable } from '../protocols/labelling/core/prompt-lab'
import { TABLE2_ORDER } from '../protocols/labelling/core/variants'
import { benchArgs, checkedArgs } from './bench-args'

const SECTIONS = ['bootstrapKappa', 'promptLabTable', 'agreementPage', 'annotators'] as const
const USAGE = `Usage: npm run bench:labelling -- [options]

The labelling protocol's timings, with their targets. Sections: ${SECTIONS.join(', ')}
(annotators needs a production build: npm run build). Last line: JSON.

  --items N            items of the pure sections (default 3000)
  --runs N             timed runs per figure (default 5)
  --only LIST          comma-separated section names (default: all)
  --agreement-items N  items of the agreement page's run, 3 labels each (default 10000)
  --annotators N       concurrent annotators (default 100)
  --duration S         seconds of the annotators' loop (default 30)
  --load-items N       items of the annotators' run, 3 slots each (default 3000)
  --think-ms MS        an annotator's time on an item between claim and submit, about (default 3000;
                       0: a closed loop without people, the server's saturation throughput)
  --port N             the server's port on 127.0.0.1 (default 3402)
  --app-dir DIR        serve another checkout's build (default this one)
  -h, --help           this text`
const raw = benchArgs(USAGE, {
  items: { type: 'string', default: '3000' },
  runs: { type: 'string', default: '5' },
  only: { type: 'string', default: '' },
  'agreement-items': { type: 'string', default: '10000' },
  annotators: { type: 'string', default: '100' },
  duration: { type: 'string', default: '30' },
  'load-items': { type: 'string', default: '3000' },
  'think-ms': { type: 'string', default: '3000' },
  port: { type: 'string', default: '3402' },
  'app-dir': { type: 'string', default: path.resolve(import.meta.dirname, '..') },
})
const count = (max: number) => z.coerce.number().int().min(1).max(max)
const values = checkedArgs(
  USAGE,
  z.object({
    items: count(1_000_000),
    runs: count(1000),
    only: z
      .string()
      .transform((v) => (v ? v.split(',').map((x) => x.trim()) : []))
      .pipe(z.array(z.enum(SECTIONS))),
    'agreement-items': count(1_000_000),
    annotators: count(1000),
    duration: count(3600),
    'load-items': count(1_000_000),
    'think-ms': z.coerce.number().int().min(0).max(600_000),
    port: z.coerce.number().int().min(1024).max(65535),
    'app-dir': z.string().min(1),
  }),
  raw,
)
const ITEMS = values.items
const RUNS = values.runs
const ONLY = new Set<string>(values.only)

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}
const round = (x: number) => Math.round(x * 100) / 100
function timed(fn: () => unknown): number {
  fn() // warm-up
  const times: number[] = []
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now()
    fn()
    times.push(performance.now() - t0)
  }
  return round(median(times))
}

/** Seeded synthetic data: graded gold, each variant agreeing with gold with its own probability. */
function synthetic(nItems: number, nVariants: number) {
  const rng = mulberry32(42)
  const topics = 50
  const items: LabItem[] = Array.from({ length: nItems }, (_, i) => ({
    id: `i${i}`,
    topic: `q${i % topics}`,
    docid: `d${i}`,
    gold: Math.floor(rng() * 3),
  }))
  const variants: LabVariant[] = TABLE2_ORDER.slice(0, nVariants).map((name, v) => {
    const p = 0.55 + (0.4 * v) / nVariants
    const labels = new Map<string, number | null>()
    for (const it of items) {
      const r = rng()
      labels.set(it.id, r < 0.01 ? null : r < p ? it.gold : Math.floor(rng() * 3))
    }
    return { name, labels }
  })
  // 4 runs: per topic, its documents in a run-specific shuffled order (≤ 100 per topic).
  const runs: Record<string, Record<string, string[]>> = {}
  for (let r = 0; r < 4; r++) {
    const run: Record<string, string[]> = {}
    for (const it of items) {
      const list = run[it.topic] ?? []
      list.push(it.docid!)
      run[it.topic] = list
    }
    for (const q of Object.keys(run)) run[q] = run[q]!.sort(() => rng() - 0.5).slice(0, 100)
    runs[`run${r}`] = run
  }
  return { items, variants, runs }
}

const sections: Record<string, Record<string, unknown>> = {}
const want = (name: string) => ONLY.size === 0 || ONLY.has(name)

if (want('bootstrapKappa')) {
  const rng = mulberry32(1)
  const gold = Array.from({ length: ITEMS }, () => Math.floor(rng() * 3))
  const model = gold.map((g) => (rng() < 0.7 ? g : Math.floor(rng() * 3)))
  const ms = timed(() => bootstrapKappa(gold, model, { resamples: 1000, seed: 1 }))
  sections.bootstrapKappa = { items: ITEMS, resamples: 1000, ms, targetMs: 200, pass: ms < 200 }
  console.log(`bootstrapKappa: ${ITEMS} items × 1,000 resamples: ${ms} ms (target < 200)`)
}

if (want('promptLabTable')) {
  const { items, variants, runs } = synthetic(ITEMS, 32)
  const plain = timed(() => promptLabTable(items, variants, { resamples: 20, seed: 1, splitHalfIterations: 1000 }))
  const withRuns = timed(() =>
    promptLabTable(items, variants, { resamples: 20, seed: 1, splitHalfIterations: 1000, runs, queryRun: 'run0' }),
  )
  const splitOnly = timed(() => promptLabTable(items, variants, { resamples: 1, seed: 1, splitHalfIterations: 1000 }))
  sections.promptLabTable = {
    variants: 32,
    items: ITEMS,
    resamples: 20,
    splitHalfIterations: 1000,
    ms: plain,
    msWithRuns: withRuns,
    trecRuns: 4,
    msSplitHalfMostly: splitOnly,
  }
  console.log(`promptLabTable: 32 variants × ${ITEMS} items: ${plain} ms; with 4 TREC runs (RBO): ${withRuns} ms`)
}

if (want('agreementPage') || want('annotators')) {
  const { agreementSection, annotatorsSection } = await import('./bench-labelling-db')
  const { hasProductionBuild, throwawayDatabase } = await import('./bench-support')
  const appDir = path.resolve(values['app-dir'])
  const load = want('annotators') && hasProductionBuild(appDir)
  if (want('annotators') && !load) {
    const note = `no production build in ${appDir} (.next/BUILD_ID): run \`npm run build\`, then this bench`
    if (ONLY.has('annotators')) {
      console.error(`annotators: ${note}.`)
      console.log(JSON.stringify({ bench: 'labelling', sections, error: note }))
      process.exit(1)
    }
    sections.annotators = { skipped: note }
    console.log(`annotators: skipped, ${note}`)
  }
  if (want('agreementPage') || load) {
    const database = await throwawayDatabase({ prefix: 'parley_labbench' })
    let failure: unknown
    try {
      // The load first, on a quiet database; its server is stopped before the agreement page is timed.
      if (load)
        sections.annotators = await annotatorsSection({
          appDir,
          port: values.port,
          annotators: values.annotators,
          items: values['load-items'],
          durationMs: values.duration * 1000,
          thinkMs: values['think-ms'],
        })
      if (want('agreementPage'))
        sections.agreementPage = await agreementSection({ items: values['agreement-items'], runs: RUNS })
    } catch (err) {
      failure = err
    } finally {
      await database.drop()
    }
    if (failure) {
      console.error(failure)
      console.log(
        JSON.stringify({ bench: 'labelling', sections, error: String((failure as Error).message ?? failure) }),
      )
      process.exit(1)
    }
  }
}

console.log(JSON.stringify({ bench: 'labelling', sections }))
process.exit(0)
