/**
 * `npm run bench:load`: an annotation study on one small server, over loopback against a real
 * `next start` production build (run `npm run build` first, or pass `--build`).
 *
 * The bench makes its own database (on the server in DATABASE_URL, or the embedded PostgreSQL),
 * seeds it, starts the server on it as production does (scripts/serve.mjs, or `next start` for a
 * checkout without it), signs every account in over HTTP (eight at a time) and then runs:
 *
 *   - capacity: a closed loop (each client sends its next request when the previous one answered,
 *     no think time) of 50 and 100 clients, each signed in as its own expert, against
 *       - page: the expert session page (`GET /sessions/<id>`, a DRUG session awaiting that expert,
 *         with its molecule and turn form; the whole HTML is read);
 *       - submit: the expert's turn (`POST /api/v1/sessions/<id>/turns`, cookie + Origin + JSON, as
 *         the turn form's REST twin), each on a fresh session awaiting the expert. These sessions
 *         belong to a paused run, so no model step is queued: the figure is the web server's.
 *     Requests per second, p50/p95/p99 and errors (any status but 200/201, or a failed request).
 *   - study: 100 other experts (real accounts, 8 sessions each, in a running run whose machine is
 *     an LLM on the fake server, 50 ms per reply, answered by the web server's own job worker): each
 *     asks for their next session (`GET /api/v1/sessions?filter=yours`), loads its page, thinks
 *     4–6 s and submits their turn, until the phase ends. Targets: p95 < 150 ms for page and
 *     submit, 0 errors, peak RSS < 600 MB.
 *
 * The study runs first, on the server fresh from its warm-up, so its peak RSS is its own and not
 * what the capacity phases left behind; then capacity. Peak RSS is the largest sum of the resident
 * memory of the server's process tree, sampled every 250 ms (the targets' figure); peak PSS, beside
 * it, counts a page the processes share once. Everything runs on 127.0.0.1; the bench never reaches another host.
 *
 *   npx tsx scripts/bench-load.ts [--duration 20] [--study-duration 30] [--clients 50,100]
 *                                 [--people 100] [--profile capacity,study] [--port 3401]
 *                                 [--app-dir .] [--build] [--warmup 15] [--think-ms 5000]
 *                                 [--paths page,submit] [--server-node-args="--cpu-prof"]
 *                                 [--web-processes N] [--heap-mb N] [--hold SECONDS] [--dump-page FILE]
 *
 * `--app-dir` serves another checkout's build (its own `.next` and node_modules) with this bench:
 * how before/after figures are taken. Its database is migrated by this checkout's migrations.
 * Last line: one JSON object.
 */
import { benchArgs } from './bench-args'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createWriteStream, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { Agent, request } from 'undici'
import { fakeLlmChild, procStat, quantile, root, round, throwawayDatabase } from './bench-support'

const values = benchArgs(
  `Usage: npm run bench:load -- [options]

An annotation study on one small server: a production build (npm run build first, or --build)
served as production does, on a database of its own (on the server in DATABASE_URL, or the
embedded PostgreSQL). Profiles: capacity (closed loops on the session page and the submit path)
and study (people working with think time). About 3 minutes. Last line: JSON.

  --profile P            capacity,study (default both)
  --duration S           seconds per capacity phase (default 20)
  --study-duration S     seconds of the study (default 30)
  --warmup S             seconds of page loads before measuring (default 15)
  --clients N,N          closed-loop clients per capacity phase (default 50,100)
  --paths P              capacity paths: page,submit (default both)
  --people N             experts in the study (default 100)
  --think-ms MS          the study's think time, about (default 5000)
  --port N               the server's port (default 3401)
  --app-dir DIR          serve another checkout's build (default this one)
  --build                run next build first
  --web-processes N      PARLEY_WEB_PROCESSES for the server
  --heap-mb N            PARLEY_HEAP_MB for the server
  --server-node-args A   Node flags for the server, e.g. "--cpu-prof"
  --count-queries        also count database transactions per request (~30 s more)
  --hold S               keep the seeded server up S seconds after sign-in
  --dump-page FILE       write one session page's HTML to FILE
  -h, --help             this text`,
  {
    duration: { type: 'string', default: '20' },
    'study-duration': { type: 'string', default: '30' },
    /**
     * Seconds of page loads before anything is measured. Every web process needs its share for V8 to
     * optimise the page's code: with 5 s, two processes served the first capacity phase about 15 %
     * slower than the second (121 against 158 req/s); with 15 s they level off before it.
     */
    warmup: { type: 'string', default: '15' },
    clients: { type: 'string', default: '50,100' },
    people: { type: 'string', default: '100' },
    profile: { type: 'string', default: 'capacity,study' },
    port: { type: 'string', default: '3401' },
    'app-dir': { type: 'string', default: root },
    build: { type: 'boolean', default: false },
    'think-ms': { type: 'string', default: '5000' },
    /** Also count database transactions per page and per submit (adds ~30 s of waiting for PostgreSQL's statistics). */
    'count-queries': { type: 'boolean', default: false },
    /** Which capacity paths to load: page, submit or both. */
    paths: { type: 'string', default: 'page,submit' },
    /** Node flags for the server only (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it). */
    'server-node-args': { type: 'string', default: '' },
    /** PARLEY_WEB_PROCESSES for the server (default: Parley's own, 1). */
    'web-processes': { type: 'string' },
    /** PARLEY_HEAP_MB for the server (default: Parley's own). */
    'heap-mb': { type: 'string' },
    /** Keep the seeded server up this many seconds after sign-in (prints a cookie and a page URL), to probe it by hand. */
    hold: { type: 'string', default: '0' },
    /** Write one capacity session page's HTML to this file (to see what a page sends). */
    'dump-page': { type: 'string' },
  },
)
const DURATION = Number(values.duration) * 1000
const STUDY_DURATION = Number(values['study-duration']) * 1000
const WARMUP = Number(values.warmup) * 1000
const CLIENTS = values.clients.split(',').map(Number)
const PEOPLE = Number(values.people)
const PROFILES = new Set(values.profile.split(','))
const PORT = Number(values.port)
const APP_DIR = path.resolve(values['app-dir'])
const THINK = Number(values['think-ms'])
const ORIGIN = `http://127.0.0.1:${PORT}`
const MAX_CLIENTS = Math.max(...CLIENTS)
/** Fresh sessions per capacity account for the submit phases (each submit uses one up). */
const POOL = Math.ceil((DURATION / 1000) * 16) + 20
const PASSWORD = 'bench-load-password-1'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// ---------------------------------------------------------------------------------------------
// The server and its memory
// ---------------------------------------------------------------------------------------------

/**
 * The server as production runs it: scripts/serve.mjs (a heap limit, PARLEY_WEB_PROCESSES) where the
 * served checkout has it, else plain `next start` (how builds before it ran).
 */
const SERVE = existsSync(path.join(APP_DIR, 'scripts/serve.mjs')) ? path.join(APP_DIR, 'scripts/serve.mjs') : null

function nextBin(dir: string) {
  return path.join(dir, 'node_modules/next/dist/bin/next')
}

async function ensureBuild() {
  if (existsSync(path.join(APP_DIR, '.next', 'BUILD_ID')) && !values.build) return
  if (!values.build) throw new Error(`No production build in ${APP_DIR}: run \`npm run build\` (or pass --build).`)
  await new Promise<void>((resolve, reject) => {
    const p = spawn(process.execPath, [nextBin(APP_DIR), 'build'], {
      cwd: APP_DIR,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    })
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`next build exited with ${code}`))))
  })
}

/** The pids of a process and all its descendants, from /proc. */
function processTree(rootPid: number): number[] {
  const children = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const ppid = Number(procStat(name)[1])
      const list = children.get(ppid) ?? []
      list.push(Number(name))
      children.set(ppid, list)
    } catch {}
  }
  const tree: number[] = []
  const todo = [rootPid]
  while (todo.length) {
    const pid = todo.pop() as number
    tree.push(pid)
    todo.push(...(children.get(pid) ?? []))
  }
  return tree
}

const TICKS_PER_SECOND = 100 // USER_HZ: Linux reports process times in 1/100 s on every architecture Node runs on.

/** The sum of one figure over these processes (one that has exited counts 0). */
function sumOver(pids: number[], read: (pid: number) => number): number {
  let sum = 0
  for (const pid of pids) {
    try {
      sum += read(pid)
    } catch {}
  }
  return sum
}

/**
 * The resident memory (bytes) of these processes, summed: RSS, what the targets use (pages the
 * processes share, such as Node's own code, count once per process). VmRSS of /proc/<pid>/status,
 * in kB whatever the machine's page size: the kernel's counters, which cost nothing to read.
 */
const treeRss = (pids: number[]) =>
  sumOver(pids, (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024)

/**
 * Their proportional sets (PSS, bytes): a page shared between the processes is split between them,
 * so the sum is closer to what the machine gives the server. The kernel walks every page table to
 * answer (/proc/<pid>/smaps_rollup): on a 2-core machine, reading it every 250 ms took ~4 % of the
 * CPU the server competes for, so it is sampled less often than RSS.
 */
const treePss = (pids: number[]) =>
  sumOver(
    pids,
    (pid) => Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024,
  )

/** CPU time (ms, user + system, all threads) these processes have used. */
const treeCpuMs = (pids: number[]) =>
  sumOver(pids, (pid) => {
    const f = procStat(pid)
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND // utime, stime
  })

/**
 * Samples the server's memory: RSS every 250 ms, PSS every 2 s (and at every read-out). The process
 * tree is looked up again every 2 s (the web processes are forked once, at start).
 */
class RssMeter {
  peak = 0
  peakPss = 0
  private timer: NodeJS.Timeout
  private pids: number[]
  private ticks = 0
  constructor(private pid: number) {
    this.pids = processTree(pid)
    this.timer = setInterval(() => this.sample(this.ticks++ % 8 === 0), 250)
  }
  sample(withPss: boolean) {
    if (withPss) this.pids = processTree(this.pid)
    this.peak = Math.max(this.peak, treeRss(this.pids))
    if (withPss) this.peakPss = Math.max(this.peakPss, treePss(this.pids))
  }
  reset() {
    this.peak = 0
    this.peakPss = 0
  }
  /** The peak RSS since the last reset, in MB. */
  take(): number {
    return this.peaks().peakRssMb
  }
  /** The peak RSS and PSS since the last reset, in MB. */
  peaks(): { peakRssMb: number; peakPssMb: number } {
    this.sample(true)
    return { peakRssMb: round(this.peak / 2 ** 20, 0), peakPssMb: round(this.peakPss / 2 ** 20, 0) }
  }
  /** CPU time (ms) the server's processes have used so far. */
  cpuMs(): number {
    return treeCpuMs(processTree(this.pid))
  }
  stop() {
    clearInterval(this.timer)
  }
}

async function startServer(databaseUrl: string): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const log = path.join(os.tmpdir(), `parley-bench-load-${process.pid}.log`)
  const out = createWriteStream(log)
  const nodeArgs = values['server-node-args'].split(' ').filter(Boolean)
  const entry = SERVE ? [SERVE] : [nextBin(APP_DIR), 'start']
  const child = spawn(process.execPath, [...nodeArgs, ...entry, '-p', String(PORT), '-H', '127.0.0.1'], {
    cwd: APP_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      BETTER_AUTH_URL: ORIGIN,
      PORT: String(PORT),
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      PARLEY_DEMO: '0',
      // 200 accounts sign in from one address within a second.
      PARLEY_SIGNIN_PER_MINUTE: '100000',
      PARLEY_AUTH_RATE_LIMIT: 'off',
      // The fake model server listens on loopback.
      PARLEY_ALLOWED_LLM_HOSTS: '127.0.0.1',
      ...(values['web-processes'] ? { PARLEY_WEB_PROCESSES: values['web-processes'] } : {}),
      ...(values['heap-mb'] ? { PARLEY_HEAP_MB: values['heap-mb'] } : {}),
    },
  })
  child.stdout?.pipe(out)
  child.stderr?.pipe(out)
  const deadline = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited with ${child.exitCode}; see ${log}`)
    try {
      const r = await request(`${ORIGIN}/api/v1/health`)
      await r.body.dump()
      if (r.statusCode === 200) break
    } catch {}
    if (Date.now() > deadline) throw new Error(`next start did not answer in 90 s; see ${log}`)
    await sleep(250)
  }
  return {
    child,
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(10_000)])
      if (child.exitCode === null) child.kill('SIGKILL')
    },
  }
}

// ---------------------------------------------------------------------------------------------
// The study, seeded in SQL (as the e2e tests do): accounts, a DRUG dataset, runs and sessions that
// await their expert after the machine's first message.
// ---------------------------------------------------------------------------------------------

const ACYL = ['C', 'CC', 'CCC', 'CC(C)C', 'c1ccccc1', 'c1ccc(O)cc1', 'c1ccccc1OC(C)=O', 'C=C', 'CC(C)(C)C', 'c1ccncc1']
const ALKYL = ['C', 'CC', 'CCC', 'CC(C)', 'CCCC', 'c1ccccc1C']

/** 60 esters: the product an expert reads, its reactants (ground truth) and an explanation. */
function instances() {
  return ALKYL.flatMap((alk, a) =>
    ACYL.map((acyl, b) => ({
      index: a * ACYL.length + b,
      input: { smiles: `${alk}OC(=O)${acyl}` },
      prediction: `${alk}O.OC(=O)${acyl}`,
      explanation: `Fischer esterification of the acid with the alcohol (ester ${a}.${b}).`,
    })),
  )
}

interface Person {
  id: string
  email: string
  cookie: string
}

async function seed(databaseUrl: string, fakeUrl: string) {
  const { hashPassword } = await import('better-auth/crypto')
  const hash = await hashPassword(PASSWORD)
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const q = (text: string, params: unknown[] = []) => client.query(text, params)
  const owner = randomUUID()
  const account = (i: number, kind: string) => ({ id: randomUUID(), email: `${kind}-${i}@bench.local` })
  const cap = Array.from({ length: MAX_CLIENTS }, (_, i) => account(i, 'capacity'))
  const people = Array.from({ length: PEOPLE }, (_, i) => account(i, 'person'))
  const users = [{ id: owner, email: 'owner@bench.local', role: 'researcher' }]
  for (const u of [...cap, ...people]) users.push({ ...u, role: 'expert' })
  await q(
    `INSERT INTO "user" (id, email, name, role, "emailVerified", "createdAt", "updatedAt")
     SELECT id, email, email, role, true, now(), now() FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, email, role)`,
    [users.map((u) => u.id), users.map((u) => u.email), users.map((u) => u.role)],
  )
  await q(
    `INSERT INTO account (id, "accountId", "providerId", "userId", password, "createdAt", "updatedAt")
     SELECT gen_random_uuid()::text, id, 'credential', id, $2, now(), now() FROM unnest($1::text[]) AS u(id)`,
    [users.map((u) => u.id), hash],
  )
  const studyId = 'bench-load-study'
  await q(
    `INSERT INTO "Study" (id, name, guidelines, "createdById", "createdAt", "updatedAt")
     VALUES ($1, 'Load bench', 'Judge the prediction first, then the explanation.', $2, now(), now())`,
    [studyId, owner],
  )
  await q(
    `INSERT INTO "StudyMember" ("studyId", "userId", role) SELECT $1, id, role FROM unnest($2::text[], $3::text[]) AS u(id, role)`,
    [studyId, users.map((u) => u.id), users.map((u) => (u.role === 'researcher' ? 'admin' : 'expert'))],
  )
  const connId = 'bench-load-fake'
  await q(
    `INSERT INTO "LlmConnection" (id, "studyId", name, provider, "baseUrl", "defaultModel", "timeoutMs", "maxConcurrency", "createdById", "createdAt", "updatedAt")
     VALUES ($1, $2, 'fake', 'openai-compatible', $3, 'gen', 30000, 32, $4, now(), now())`,
    [connId, studyId, fakeUrl, owner],
  )
  const datasetId = 'bench-load-drug'
  await q(
    `INSERT INTO "Dataset" (id, "studyId", name, kind, source, status, "createdById", "createdAt")
     VALUES ($1, $2, 'esters', 'drug', 'generated', 'ready', $3, now())`,
    [datasetId, studyId, owner],
  )
  const rows = instances()
  const instanceIds = rows.map(() => randomUUID())
  await q(
    `INSERT INTO "Instance" (id, "datasetId", index, input, prediction, explanation)
     SELECT id, $2, ix, inp, y, e FROM unnest($1::text[], $3::int[], $4::jsonb[], $5::text[], $6::text[]) AS r(id, ix, inp, y, e)`,
    [
      instanceIds,
      datasetId,
      rows.map((r) => r.index),
      rows.map((r) => JSON.stringify(r.input)),
      rows.map((r) => r.prediction),
      rows.map((r) => r.explanation),
    ],
  )
  const machine = {
    kind: 'llm',
    model: { connectionId: connId, model: 'gen', vision: true },
    helpers: { checker: { connectionId: connId, model: 'judge' } },
  }
  const config = { n: 10, k: 3 }
  async function experiment(id: string, status: string) {
    await q(
      `INSERT INTO "Run" (id, "studyId", name, protocol, task, "datasetId", config, seats, repetitions, status, "createdById", "createdAt", "updatedAt")
       VALUES ($1, $2, $1, 'pxp', 'drug', $3, $4, $5, 1, $6, $7, now(), now())`,
      [
        id,
        studyId,
        datasetId,
        config,
        { m: machine, h: { kind: 'human', userId: null, claimable: false } },
        status,
        owner,
      ],
    )
  }
  await experiment('bench-load-capacity', 'paused')
  await experiment('bench-load-study', 'running')
  let position = 0
  /** Sessions awaiting `userId` after the machine's INIT; returns their ids. */
  async function sessions(runId: string, userIds: string[]) {
    const ids: string[] = []
    const chunk = 4000
    for (let at = 0; at < userIds.length; at += chunk) {
      const part = userIds.slice(at, at + chunk)
      const sids = part.map(() => randomUUID())
      const inst = part.map((_, i) => (position + at + i) % rows.length)
      await q(
        `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, "instanceId",
                                        instance, seats, repetition, position, status, "awaitingSeat", "createdAt", "updatedAt")
         SELECT sid, $1, $2, 'pxp', '1', $3, 'drug', iid, inst, seats, 1, pos, 'awaiting', 'h', now(), now() + make_interval(secs => pos / 1000.0)
         FROM unnest($4::text[], $5::text[], $6::jsonb[], $7::jsonb[], $8::int[]) AS r(sid, iid, inst, seats, pos)`,
        [
          studyId,
          runId,
          config,
          sids,
          inst.map((k) => instanceIds[k]),
          inst.map((k) => {
            const r = rows[k] as (typeof rows)[number]
            return JSON.stringify({ input: r.input, prediction: r.prediction, explanation: r.explanation, datasetId })
          }),
          part.map((userId) => JSON.stringify({ m: machine, h: { kind: 'human', userId, claimable: false } })),
          part.map((_, i) => position + at + i),
        ],
      )
      await q(
        `INSERT INTO "SessionSeat" ("sessionId", seat, "userId") SELECT sid, 'h', uid FROM unnest($1::text[], $2::text[]) AS r(sid, uid)`,
        [sids, part],
      )
      const first = inst.map((k) => {
        const r = rows[k] as (typeof rows)[number]
        const y = r.prediction.split('.').reverse().join('.')
        return {
          seq: 1,
          sender: 'm',
          tag: 'INIT',
          prediction: y,
          explanation: 'An ester: hydrolysis gives the acid and the alcohol.',
        }
      })
      await q(
        `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
         SELECT gen_random_uuid()::text, sid, 1, 'm', 'h', 'INIT', b->>'prediction', b->>'explanation', b
         FROM unnest($1::text[], $2::jsonb[]) AS r(sid, b)`,
        [sids, first.map((b) => JSON.stringify(b))],
      )
      ids.push(...sids)
    }
    position += userIds.length
    return ids
  }
  // Capacity: one session per account for the page phases, POOL fresh ones each for the submits.
  const pageSessions = await sessions(
    'bench-load-capacity',
    cap.map((u) => u.id),
  )
  const poolIds = await sessions(
    'bench-load-capacity',
    cap.flatMap((u) => Array.from({ length: POOL }, () => u.id)),
  )
  const pools = cap.map((_, i) => poolIds.slice(i * POOL, (i + 1) * POOL))
  await sessions(
    'bench-load-study',
    people.flatMap((u) => Array.from({ length: 8 }, () => u.id)),
  )
  await q('ANALYZE')
  await client.end()
  return { cap, people, pageSessions, pools }
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

const agent = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 30_000 })

async function signIn(email: string): Promise<string> {
  const r = await request(`${ORIGIN}/api/auth/sign-in/email`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', origin: ORIGIN },
    body: JSON.stringify({ email, password: PASSWORD }),
  })
  await r.body.dump()
  if (r.statusCode !== 200) throw new Error(`sign-in of ${email} answered ${r.statusCode}`)
  const set = r.headers['set-cookie']
  const list = Array.isArray(set) ? set : set ? [set] : []
  return list.map((c) => c.split(';')[0]).join('; ')
}

class Stats {
  lat: number[] = []
  bytes = 0
  errors = 0
  statuses: Record<string, number> = {}
  first = 0
  last = 0
  record(ms: number, ok: boolean, status: number | string) {
    this.lat.push(ms)
    if (!ok) {
      this.errors++
      this.statuses[status] = (this.statuses[status] ?? 0) + 1
    }
  }
  summary(seconds: number) {
    return {
      requests: this.lat.length,
      rps: round(this.lat.length / seconds, 1),
      p50: round(quantile(this.lat, 0.5), 1),
      p95: round(quantile(this.lat, 0.95), 1),
      p99: round(quantile(this.lat, 0.99), 1),
      max: round(Math.max(0, ...this.lat), 1),
      errors: this.errors,
      kbPerResponse: round(this.bytes / 1024 / Math.max(1, this.lat.length), 1),
      ...(this.errors ? { errorStatuses: this.statuses } : {}),
    }
  }
}

/** `fn` over `items`, at most `limit` at a time, results in order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i] as T)
      }
    }),
  )
  return out
}

/** One timed request; the whole body is read. Returns the status and body text (or null). */
async function timed(
  stats: Stats | null,
  url: string,
  opts: { cookie: string; method?: 'GET' | 'POST'; json?: unknown; expect: number },
): Promise<{ status: number; text: string | null }> {
  const t0 = performance.now()
  try {
    const r = await request(url, {
      method: opts.method ?? 'GET',
      dispatcher: agent,
      headers: {
        cookie: opts.cookie,
        ...(opts.json === undefined ? {} : { 'content-type': 'application/json', origin: ORIGIN }),
      },
      body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
    })
    const text = await r.body.text()
    if (stats) stats.bytes += Buffer.byteLength(text)
    stats?.record(performance.now() - t0, r.statusCode === opts.expect, r.statusCode)
    return { status: r.statusCode, text }
  } catch (err) {
    stats?.record(performance.now() - t0, false, (err as { code?: string }).code ?? 'network')
    return { status: 0, text: null }
  }
}

const turn = (seq: number) => ({
  seq,
  matchPrev: false,
  agreePrev: true,
  prediction: 'CCO.CC(=O)O',
  explanation: 'The ester comes from ethanol and acetic acid; the proposed pathway is not the usual one.',
})

/** A closed loop: `clients` loops, each sending its next request as soon as the previous answered. */
async function closedLoop(clients: number, ms: number, one: (client: number, stats: Stats) => Promise<boolean>) {
  const stats = new Stats()
  const end = performance.now() + ms
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (performance.now() < end) if (!(await one(c, stats))) break
    }),
  )
  return { stats, seconds: (performance.now() - t0) / 1000 }
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

await ensureBuild()
const database = await throwawayDatabase({ prefix: 'parley_load' })
const databaseUrl = process.env.DATABASE_URL as string
// The machine of the study: a generator that keeps its answer and a checker that never agrees, so
// the dialogue runs to the bound (n = 10, five turns for the expert).
const fake = await fakeLlmChild({
  latencyMs: 50,
  script: [
    { match: { model: 'gen' }, replies: [{ text: 'Prediction: CCO.CC(=O)O\nPathway: Hydrolysis of the ester.' }] },
    { match: { model: 'judge' }, replies: [{ text: 'No' }] },
  ],
})
let server: Awaited<ReturnType<typeof startServer>> | undefined
let meter: RssMeter | undefined
const result: Record<string, unknown> = {}
let failure: unknown
try {
  const t = performance.now()
  const world = await seed(databaseUrl, fake.url)
  const seedSeconds = (performance.now() - t) / 1000
  server = await startServer(databaseUrl)
  meter = new RssMeter(server.child.pid as number)
  const rssBeforeSignInMb = meter.take()
  // People sign in a few at a time, as a study's people arrive (not 200 password hashes at once,
  // whose transient memory no study's phase should be charged with).
  const capCookies = await mapLimit(world.cap, 8, (u) => signIn(u.email))
  const people: Person[] = await mapLimit(world.people, 8, async (u) => ({ ...u, cookie: await signIn(u.email) }))
  const pointer = world.cap.map(() => 0)
  const pageUrl = (c: number) => `${ORIGIN}/sessions/${world.pageSessions[c]}`
  const page = async (c: number, stats: Stats) => {
    const r = await timed(stats, pageUrl(c), { cookie: capCookies[c] as string, expect: 200 })
    if (r.status === 200 && !r.text?.includes('Your prediction')) throw new Error('the session page has no turn form')
    return true
  }
  const submit = async (c: number, stats: Stats) => {
    const sid = world.pools[c]?.[pointer[c] as number]
    if (!sid) return false
    pointer[c] = (pointer[c] as number) + 1
    await timed(stats, `${ORIGIN}/api/v1/sessions/${sid}/turns`, {
      cookie: capCookies[c] as string,
      method: 'POST',
      json: turn(2),
      expect: 201,
    })
    return true
  }
  result.meta = {
    appDir: APP_DIR,
    commit: await gitHead(APP_DIR),
    cpus: os.cpus().length,
    loadavg: os.loadavg().map((x) => round(x, 2)),
    durationSeconds: DURATION / 1000,
    studySeconds: STUDY_DURATION / 1000,
    seedSeconds: round(seedSeconds, 1),
    server: SERVE ? 'scripts/serve.mjs' : 'next start',
    rssBeforeSignInMb,
    rssAfterStartMb: meter.take(),
  }
  if (values['dump-page']) {
    const { text } = await timed(null, pageUrl(0), { cookie: capCookies[0] as string, expect: 200 })
    writeFileSync(values['dump-page'], text ?? '')
  }
  if (Number(values.hold) > 0) {
    console.error(JSON.stringify({ hold: Number(values.hold), page: pageUrl(0), cookie: capCookies[0] }))
    await sleep(Number(values.hold) * 1000)
  }
  // Warm-up (not measured): first renders, RDKit's WebAssembly, JIT.
  await closedLoop(10, WARMUP, page)
  await closedLoop(10, Math.min(WARMUP, 2000), submit)
  await closedLoop(5, Math.min(WARMUP, 1000), async (c, stats) => {
    await timed(stats, `${ORIGIN}/api/v1/sessions?filter=yours&pageSize=1`, {
      cookie: capCookies[c] as string,
      expect: 200,
    })
    return true
  })
  if (values['count-queries']) {
    // PostgreSQL counts a backend's transactions when it has been idle a while: wait for the flush.
    const admin = new pg.Client({ connectionString: databaseUrl })
    await admin.connect()
    const xacts = async () => {
      await sleep(12_000)
      const { rows } = await admin.query(
        `SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`,
      )
      return Number(rows[0].n) - 1
    }
    const n = 50
    const before = await xacts()
    for (let i = 0; i < n; i++) await page(i % world.cap.length, new Stats())
    const afterPages = await xacts()
    for (let i = 0; i < n; i++) await submit(i % world.cap.length, new Stats())
    const afterSubmits = await xacts()
    await admin.end()
    result.transactions = {
      perPage: round((afterPages - before - 1) / n, 1),
      perSubmit: round((afterSubmits - afterPages - 1) / n, 1),
    }
  }
  if (PROFILES.has('study')) {
    meter.reset()
    const studyCpuBefore = meter.cpuMs()
    const pageStats = new Stats()
    const submitStats = new Stats()
    const queueStats = new Stats()
    let idle = 0
    const end = performance.now() + STUDY_DURATION
    const think = () => THINK * (0.8 + 0.4 * Math.random())
    await Promise.all(
      people.map(async (p) => {
        await sleep(Math.random() * THINK)
        while (performance.now() < end) {
          const q = await timed(queueStats, `${ORIGIN}/api/v1/sessions?filter=yours&pageSize=1`, {
            cookie: p.cookie,
            expect: 200,
          })
          const item =
            q.status === 200 ? (JSON.parse(q.text ?? '{}').items?.[0] as { id: string; messages: number }) : null
          if (!item) {
            idle++
            await sleep(1000)
            continue
          }
          await timed(pageStats, `${ORIGIN}/sessions/${item.id}`, { cookie: p.cookie, expect: 200 })
          await sleep(Math.min(think(), Math.max(0, end - performance.now())))
          if (performance.now() >= end) break
          await timed(submitStats, `${ORIGIN}/api/v1/sessions/${item.id}/turns`, {
            cookie: p.cookie,
            method: 'POST',
            json: turn(item.messages + 1),
            expect: 201,
          })
        }
      }),
    )
    const seconds = STUDY_DURATION / 1000
    const study = {
      people: PEOPLE,
      page: pageStats.summary(seconds),
      submit: submitStats.summary(seconds),
      queue: queueStats.summary(seconds),
      idleWaits: idle,
      errors: pageStats.errors + submitStats.errors + queueStats.errors,
      // How busy the server was: its processes' CPU time over the phase, in cores (2 = both cores).
      serverCpuCores: round((meter.cpuMs() - studyCpuBefore) / (seconds * 1000), 2),
      ...meter.peaks(),
    }
    result.study = {
      ...study,
      targetsMet: study.page.p95 < 150 && study.submit.p95 < 150 && study.errors === 0 && study.peakRssMb < 600,
    }
  }
  if (PROFILES.has('capacity')) {
    const capacity: Record<string, unknown> = {}
    for (const kind of (['page', 'submit'] as const).filter((k) => values.paths.split(',').includes(k))) {
      const byClients: Record<string, unknown> = {}
      for (const clients of CLIENTS) {
        meter.reset()
        const cpuBefore = meter.cpuMs()
        const { stats, seconds } = await closedLoop(clients, DURATION, kind === 'page' ? page : submit)
        const serverCpuMs = meter.cpuMs() - cpuBefore
        byClients[clients] = {
          ...stats.summary(seconds),
          // The server's CPU time per answered request: unlike req/s, it does not move with what
          // else the machine's cores run meanwhile (the bench's own client, PostgreSQL, neighbours).
          serverCpuMsPerRequest: round(serverCpuMs / Math.max(1, stats.lat.length), 2),
          ...meter.peaks(),
        }
        if (kind === 'submit' && world.pools.some((p, i) => i < clients && (pointer[i] as number) >= p.length))
          (byClients[clients] as Record<string, unknown>).poolExhausted = true
      }
      capacity[kind] = byClients
    }
    result.capacity = capacity
  }
} catch (err) {
  failure = err
} finally {
  meter?.stop()
  await server?.stop()
  fake.stop()
  await agent.close()
  await database.drop()
}

async function gitHead(dir: string): Promise<string | null> {
  return new Promise((resolve) => {
    const p = spawn('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    p.stdout.on('data', (d) => {
      out += d
    })
    p.on('exit', (code) => resolve(code === 0 ? out.trim() : null))
  })
}

if (failure) {
  console.error(failure)
  console.log(JSON.stringify({ bench: 'load', error: String((failure as Error).message ?? failure) }))
  process.exit(1)
}
console.log(JSON.stringify({ bench: 'load', ...result }))
process.exit(0)
