/**
 * `npm run bench:mint-sandbox`: MINT's Python sandbox (protocols/mint/server/sandbox.ts), no database.
 *
 *   - Warm latency of `print(1)` in a live sandbox (a cell's round trip: Node → driver → Node), p50
 *     and p95 over --runs cells after a warm-up. Target p50 < 80 ms.
 *   - Warm latency of a sympy solve (sympy already imported in the sandbox), p50 and p95.
 *   - Cold start: a new sandbox (bwrap, namespaces, python3 and the driver) up to its first `print(1)`,
 *     median of --cold runs; and a cold start with `import numpy, sympy` as the first cell.
 *   - 8 concurrent cells (--concurrency): 8 live sandboxes each running a sympy solve at once, the
 *     wall time of the batch (median of several batches), every output checked.
 *
 * Last line: one JSON object with every figure.
 *
 *   npx tsx scripts/bench-mint-sandbox.ts [--runs 200] [--cold 10] [--concurrency 8] [--batches 5]
 */
import os from 'node:os'
import { release, releaseAll, runCell, sandboxStatus } from '../protocols/mint/server/sandbox'
import { benchArgs } from './bench-args'

const values = benchArgs(
  `Usage: npm run bench:mint-sandbox -- [options]

MINT's Python sandbox (bubblewrap + /usr/bin/python3): warm cell latency (print(1), a sympy solve),
cold start, concurrent cells. No database. Last line: JSON.

  --runs N          warm cells timed per measure (default 200)
  --cold N          cold starts timed (default 10)
  --concurrency N   sandboxes running a cell at once (default 8)
  --batches N       concurrent batches timed (default 5)
  -h, --help        this text`,
  {
    runs: { type: 'string', default: '200' },
    cold: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '8' },
    batches: { type: 'string', default: '5' },
  },
)
const RUNS = Number(values.runs)
const COLD = Number(values.cold)
const CONCURRENCY = Number(values.concurrency)
const BATCHES = Number(values.batches)

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN
}
const stats = (xs: number[]) => ({ p50_ms: round(quantile(xs, 0.5)), p95_ms: round(quantile(xs, 0.95)), n: xs.length })

function check(output: string, want: string, what: string) {
  if (output !== want) throw new Error(`${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(output)}`)
}

const status = await sandboxStatus()
if (!status.available) {
  console.log(`The sandbox is unavailable: ${status.reason}`)
  console.log(JSON.stringify({ skipped: true, reason: status.reason }))
  process.exit(0)
}

/** Runs `code` as the next cell of `key`'s episode (the live sandbox when it ran exactly `cells`). */
async function cell(key: string, cells: string[], code: string) {
  const t0 = performance.now()
  const r = await runCell({ sessionKey: key, cells, code })
  const ms = performance.now() - t0
  cells.push(code)
  return { r, ms }
}

// Warm print(1). The episode's cells grow by one per call, as an episode's would; the pool compares
// them with what the sandbox ran (cheap: strings by identity first).
async function warmPrint() {
  const cells: string[] = []
  for (let i = 0; i < 10; i++) await cell('bench-print', cells, 'print(1)')
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const { r, ms } = await cell('bench-print', cells, 'print(1)')
    check(r.output, '1\n', 'print(1)')
    if (r.coldStart) throw new Error('the warm sandbox was replaced')
    times.push(ms)
  }
  release('bench-print')
  return { ...stats(times), target_p50_ms: 80 }
}

// A new equation each time (sympy caches solve's results).
const solve = (i: number) => `sp.solve(x**2 - ${i + 1}**2, x)`
async function warmSympy() {
  const cells: string[] = []
  await cell('bench-sympy', cells, "import sympy as sp\nx = sp.symbols('x')")
  for (let i = 0; i < 5; i++) await cell('bench-sympy', cells, solve(1000 + i))
  const times: number[] = []
  for (let i = 0; i < Math.min(RUNS, 100); i++) {
    const { r, ms } = await cell('bench-sympy', cells, solve(i))
    check(r.output, `Out[${cells.length + 1}]: [${-(i + 1)}, ${i + 1}]\n`, 'sympy solve')
    times.push(ms)
  }
  release('bench-sympy')
  return stats(times)
}

async function cold() {
  const plain: number[] = []
  const withImports: number[] = []
  for (let i = 0; i < COLD; i++) {
    const a = await cell(`bench-cold-${i}`, [], 'print(1)')
    check(a.r.output, '1\n', 'cold print(1)')
    if (!a.r.coldStart) throw new Error('not a cold start')
    plain.push(a.ms)
    release(`bench-cold-${i}`)
    const b = await cell(`bench-cold-imports-${i}`, [], 'import numpy, sympy\nprint(1)')
    check(b.r.output, '1\n', 'cold imports')
    withImports.push(b.ms)
    release(`bench-cold-imports-${i}`)
  }
  return { print_1: stats(plain), numpy_sympy_import: stats(withImports) }
}

async function concurrent() {
  const keys = Array.from({ length: CONCURRENCY }, (_, j) => `bench-conc-${j}`)
  const cells = keys.map(() => [] as string[])
  await Promise.all(keys.map((k, j) => cell(k, cells[j] as string[], "import sympy as sp\nx = sp.symbols('x')")))
  const walls: number[] = []
  const each: number[] = []
  for (let b = 0; b < BATCHES; b++) {
    const t0 = performance.now()
    const v = (j: number) => b * CONCURRENCY + j
    const rs = await Promise.all(keys.map((k, j) => cell(k, cells[j] as string[], `sp.solve(x - ${v(j)}, x)`)))
    walls.push(performance.now() - t0)
    rs.forEach(({ r, ms }, j) => {
      check(r.output, `Out[${(cells[j] as string[]).length + 1}]: [${v(j)}]\n`, `concurrent cell ${j}`)
      if (r.exitStatus !== 0) throw new Error(`concurrent cell ${j} failed`)
      each.push(ms)
    })
  }
  // Cold: CONCURRENCY new sandboxes at once, each importing sympy and solving.
  for (const k of keys) release(k)
  const t0 = performance.now()
  const rs = await Promise.all(
    keys.map((k, j) =>
      runCell({ sessionKey: `${k}-cold`, code: `import sympy as sp\nx = sp.symbols('x')\nsp.solve(x - ${j}, x)` }),
    ),
  )
  const coldWall = performance.now() - t0
  for (const [j, r] of rs.entries()) check(r.output, `Out[2]: [${j}]\n`, `concurrent cold cell ${j}`)
  return {
    concurrency: CONCURRENCY,
    warm_batch_wall: stats(walls),
    warm_cell: stats(each),
    cold_batch_wall_ms: round(coldWall),
    failures: 0,
  }
}

try {
  const print1 = await warmPrint()
  console.log(`warm print(1): p50 ${print1.p50_ms} ms, p95 ${print1.p95_ms} ms (target p50 < 80 ms)`)
  const sympy = await warmSympy()
  console.log(`warm sympy solve: p50 ${sympy.p50_ms} ms, p95 ${sympy.p95_ms} ms`)
  const coldStart = await cold()
  console.log(
    `cold start to print(1): p50 ${coldStart.print_1.p50_ms} ms; with import numpy, sympy: p50 ${coldStart.numpy_sympy_import.p50_ms} ms`,
  )
  const conc = await concurrent()
  console.log(
    `${CONCURRENCY} concurrent sympy cells: warm batch p50 ${conc.warm_batch_wall.p50_ms} ms, cold batch ${conc.cold_batch_wall_ms} ms, no failures`,
  )
  releaseAll()
  console.log(
    JSON.stringify({
      warm_print_1: print1,
      warm_sympy_solve: sympy,
      cold_start: coldStart,
      concurrent: conc,
      cpus: os.cpus().length,
      load_avg_1m: round(os.loadavg()[0] ?? 0, 2),
    }),
  )
} finally {
  releaseAll()
}
