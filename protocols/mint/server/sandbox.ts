/**
 * MINT's Python tool (issue 26): model-written code runs in a separate OS process, Debian's
 * /usr/bin/python3 inside bubblewrap, never in Node.
 *
 * The sandbox (`bwrapArgs`): every namespace unshared (no network: only a loopback of its own; its own
 * pid, ipc, uts, cgroup and user namespaces; no further user namespace inside), an unprivileged uid/gid
 * 65534 inside, and outside too when Node runs as root (bwrap is started as 65534: a sandbox whose uid
 * maps to the host's root is exempt from RLIMIT_NPROC, the kernel skips the check for it, so a fork bomb
 * would not stop), all capabilities dropped, a new session (no TIOCSTI), killed with its parent; the file system is /usr read-only (with the /bin, /lib, /lib64
 * symlinks), /etc/alternatives and /etc/ld.so.cache read-only (numpy's BLAS is found through them), a
 * fresh /proc of its pid namespace, a minimal /dev, and a private tmpfs as /tmp and working directory.
 * Nothing else: not the project folder, its .env, the data directory, /root, /home, /work, the
 * database socket, the host's /proc. The environment is cleared (bwrap itself is spawned with an empty
 * one, so even its /proc/1/environ is empty) and set to PATH, HOME=/tmp, LANG and the one-thread BLAS
 * variables.
 *
 * The driver (sandbox/driver.py) is a persistent shell like the paper's IPython one: one process per
 * session key, JSON lines on private descriptors, the cell's output captured in a file of the sandbox's
 * /tmp (so what a cell prints cannot corrupt the protocol), resource limits set before any user code
 * (address space, file size, processes, CPU per cell and per sandbox). Node enforces the wall time
 * (the driver raises the paper's `TimeoutError: Timed out after N seconds.` at the limit; Node kills the
 * sandbox 2 s later if the cell ignored it) and bounds what it reads of the child.
 * What a cell forked ends with the cell: before it answers, the driver kills every other process of
 * the sandbox (a fork bomb's spinning children would otherwise outlive the cell until the episode ends).
 *
 * Started by the spawner (sandbox/spawner.py), a small Python process of ours beside Node, not by Node:
 * Node's spawn() forks the whole server on its event loop (8 to 30 ms a sandbox here, every episode
 * stalled meanwhile); the spawner's forks are cheap and off the engine's loop. It relays each sandbox's
 * JSON lines, bounds them, ends 2 s after its last sandbox, and its sandboxes end with it and with Node.
 *
 * State: a pool of live sandboxes (at most `PARLEY_MINT_SANDBOXES`, default 8, least recently used
 * idle one evicted; idle ones stop after `PARLEY_MINT_SANDBOX_IDLE_SECONDS`, default 600). A sandbox
 * remembers the cells it ran; a call whose earlier cells differ (it was killed, evicted, the worker
 * restarted, or a step ran again on another input) gets a new sandbox that replays the earlier cells
 * first (outputs discarded, normal limits, failures ignored), so a cell's result depends only on its
 * episode's cells, as a recorded program should. A cell that killed its sandbox (it ignored its time
 * limit, it wrote garbage to the protocol) is remembered per key and skipped by later replays: its
 * effects were lost with its sandbox, and replaying it would cost its whole time limit again.
 * Cells are numbered by their place in the episode (In[2] first, as in the paper's shell).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { mintFile } from '../core/files'
import { corpusPathOf } from './corpus'
import { z } from 'zod'

export const BWRAP = '/usr/bin/bwrap'
export const PYTHON = '/usr/bin/python3'
/** How long the spawner outlives its last sandbox. */
const SPAWNER_LINGER_MS = 2000
/** util-linux's setpriv: how the spawner, as root, starts bwrap as 65534 (see Spawner.start). */
const SETPRIV = '/usr/bin/setpriv'
export const INSTALL_HINT = 'apt-get install -y bubblewrap python3-numpy python3-sympy'

/** The paper's cut: the first 2,000 characters, then this. */
export const MAX_OUTPUT_CHARS = 2000
export const TRUNCATED_SUFFIX = '...\n[Output Truncated]'
export const NO_OUTPUT = '[Executed Successfully with No Output]'
/** Seconds Node waits past the cell's wall time (the driver's own TimeoutError) before killing. */
const KILL_GRACE_SECONDS = 2
/** The paper's shell ran one set-up cell first: the episode's first cell is In[2]. */
const FIRST_CELL = 2
/** The largest corpus file a sandbox is given (a task set's pages are at most 4 MB of text). */
export const MAX_CORPUS_FILE_BYTES = 8 * 1024 * 1024
/** The most Node reads of one answer line; past it the sandbox is killed. */
const MAX_REPLY_BYTES = 256 * 1024

export const SandboxLimits = z.object({
  /** Wall time of a cell (the paper: 30 s; code tasks' tests: 10 s). */
  wallSeconds: z.number().positive().max(600).default(30),
  /** CPU time of a cell (default: its wall time). */
  cpuSeconds: z.number().int().positive().max(600).optional(),
  /** Address space of the sandbox's processes (RLIMIT_AS). */
  memoryMb: z.number().int().min(256).max(16384).default(2048),
  /** The largest file a cell may write, its captured output included (RLIMIT_FSIZE). */
  fileSizeMb: z.number().int().min(1).max(1024).default(16),
  /** Processes and threads of the sandbox (RLIMIT_NPROC). */
  processes: z.number().int().min(4).max(4096).default(64),
  /** CPU time of a whole sandbox (RLIMIT_CPU's hard limit: SIGKILL). */
  cpuTotalSeconds: z.number().int().positive().max(86400).default(900),
})
export type SandboxLimitsInput = z.input<typeof SandboxLimits>
type Limits = z.output<typeof SandboxLimits>

export const RunCellInput = z.object({
  /** One sandbox per key (an episode: the session id). */
  sessionKey: z.string().min(1).max(200),
  /** The episode's earlier cells, in order: replayed into a new sandbox when the live one is gone. */
  cells: z.array(z.string().max(100_000)).max(500).default([]),
  code: z.string().max(100_000),
  limits: SandboxLimits.partial().default({}),
  /**
   * An offline corpus (JSONL pages `{title, text}`, at most MAX_CORPUS_FILE_BYTES): defines
   * `wikipedia_search(query) -> str`. Node opens it and hands the sandbox only the open descriptor, which
   * the driver reads whole and closes before any user code: the sandbox never sees its path.
   */
  corpusPath: z.string().max(4096).optional(),
  /** Without a corpus: defines `wikipedia_search` as a function saying the run has none (reasoning tasks). */
  withoutCorpus: z.boolean().default(false),
})
export type RunCellInput = z.input<typeof RunCellInput>

export type LimitHit = 'timeout' | 'cpu' | 'memory' | 'output' | 'killed'

export interface CellResult {
  /** What the paper's shell would hand back: output cut at 2,000 characters, or the no-output text. */
  output: string
  /** 0: the cell ran to its end; 1: it raised (the traceback is in the output); null: the sandbox died. */
  exitStatus: 0 | 1 | null
  limitsHit: LimitHit | null
  /** The exception's type name when the cell raised. */
  exception: string | null
  durationMs: number
  /** Earlier cells replayed into a new sandbox before this one (0 when the live one was used). */
  replayed: number
  /** A new sandbox was started for this call. */
  coldStart: boolean
}

/** The paper's formatting of a cell's captured output. */
export function formatOutput(head: string, truncated: boolean): string {
  if (truncated) return head.slice(0, MAX_OUTPUT_CHARS) + TRUNCATED_SUFFIX
  return head === '' ? NO_OUTPUT : head
}

const ENV: Record<string, string> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/tmp',
  LANG: 'C.UTF-8',
  PYTHONDONTWRITEBYTECODE: '1',
  PYTHONIOENCODING: 'utf-8',
  OPENBLAS_NUM_THREADS: '1',
  OMP_NUM_THREADS: '1',
  MKL_NUM_THREADS: '1',
  NUMEXPR_NUM_THREADS: '1',
  MPLBACKEND: 'Agg',
}

/** bwrap itself starts with no environment (its /proc/1/environ is visible inside). */
const EMPTY_ENV: NodeJS.ProcessEnv = Object.create(null)

/** Run bwrap as 65534 outside too when we are root (see the header). */
const outerIds = (): { uid?: number; gid?: number } => (process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {})

/** The bubblewrap command line (without the program). */
export function bwrapArgs(): string[] {
  const args = [
    '--unshare-all',
    '--unshare-user',
    // No user namespace inside (a cell cannot get a new set of capabilities to poke the kernel with).
    '--disable-userns',
    '--uid',
    '65534',
    '--gid',
    '65534',
    '--hostname',
    'sandbox',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--clearenv',
  ]
  for (const [k, v] of Object.entries(ENV)) args.push('--setenv', k, v)
  args.push('--ro-bind', '/usr', '/usr')
  for (const l of ['bin', 'sbin', 'lib', 'lib64', 'lib32', 'libx32'])
    if (existsSync(`/${l}`)) args.push('--symlink', `usr/${l}`, `/${l}`)
  for (const f of ['/etc/alternatives', '/etc/ld.so.cache']) if (existsSync(f)) args.push('--ro-bind', f, f)
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--chdir', '/tmp')
  return args
}

let driverSource: string | undefined
function driver(): string {
  driverSource ??= readFileSync(mintFile('server', 'sandbox', 'driver.py'), 'utf8')
  return driverSource
}

const Reply = z.object({
  id: z.number(),
  head: z.string(),
  truncated: z.boolean(),
  ok: z.boolean(),
  exc: z.string().nullable(),
  limit: z.enum(['timeout', 'cpu', 'memory', 'output']).nullable(),
})
type Reply = z.output<typeof Reply>
const Ready = z.object({ ready: z.literal(true), pid: z.number(), uid: z.number() })

class SandboxGone extends Error {}

// ---------------------------------------------------------------------------------------------------
// The spawner: the sandboxes are started by a small process of our own (sandbox/spawner.py), not by
// Node. Node's spawn() forks the whole server on its event loop (8 to 30 ms a sandbox, every episode
// stalled meanwhile); the spawner is small and forks beside the engine. It relays each sandbox's lines,
// is started when the first sandbox is asked for and ends 2 s after the last one has gone (closing its
// stdin), and its sandboxes die with it (bwrap --die-with-parent) and when Node ends (end of its stdin).

type SpawnEvent =
  | { ev: 'spawned'; id: number; pid: number }
  | { ev: 'line'; id: number; line: string }
  | { ev: 'overflow'; id: number }
  | { ev: 'err'; id: number; data: string }
  | { ev: 'exit'; id: number; code: number | null; signal: number | null; error: string | null }

/** One sandbox process as the spawner runs it. */
interface SandboxProcess {
  pid?: number
  onLine(line: string): void
  onOverflow(): void
  onStderr(text: string): void
  onExit(why: string): void
}

class Spawner {
  readonly child: ChildProcess
  private readonly procs = new Map<number, SandboxProcess>()
  private seq = 0
  private holds = 0
  private buf = ''
  dead = false

  constructor() {
    this.child = spawn(
      PYTHON,
      [
        '-I',
        '-B',
        mintFile('server', 'sandbox', 'spawner.py'),
        JSON.stringify({ owner: process.pid, maxLineBytes: MAX_REPLY_BYTES }),
      ],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: EMPTY_ENV,
        cwd: '/',
      },
    )
    this.child.stdout!.setEncoding('utf8')
    this.child.stdout!.on('data', (d: string) => this.onData(d))
    this.child.stdin!.on('error', () => {})
    this.child.on('error', (e) => this.gone(`could not start the sandbox spawner (${PYTHON}): ${e.message}`))
    this.child.on('exit', (code, sig) => this.gone(`the sandbox spawner exited (${sig ?? `status ${code}`})`))
    this.ref(false)
  }

  private onData(d: string) {
    this.buf += d
    let nl = this.buf.indexOf('\n')
    while (nl >= 0) {
      const line = this.buf.slice(0, nl)
      this.buf = this.buf.slice(nl + 1)
      nl = this.buf.indexOf('\n')
      const e = JSON.parse(line) as SpawnEvent
      const p = this.procs.get(e.id)
      if (!p) continue
      if (e.ev === 'spawned') p.pid = e.pid
      else if (e.ev === 'line') p.onLine(e.line)
      else if (e.ev === 'overflow') p.onOverflow()
      else if (e.ev === 'err') p.onStderr(e.data)
      else {
        this.drop(e.id)
        p.onExit(
          e.error
            ? `could not start bubblewrap: ${e.error}`
            : `the sandbox exited (${e.signal ? `signal ${e.signal}` : `status ${e.code}`})`,
        )
      }
    }
  }

  private send(msg: object) {
    if (!this.dead) this.child.stdin!.write(`${JSON.stringify(msg)}\n`)
  }

  start(p: SandboxProcess, argv: string[], config: object, corpus: string | undefined): number {
    clearTimeout(this.linger)
    const id = ++this.seq
    this.procs.set(id, p)
    const ids = outerIds()
    // As root, bwrap starts as 65534 (see the header): through setpriv (util-linux) when it is there, so
    // the spawner's Python forks with vfork (its own setuid would need a whole fork: ~20 ms each here).
    const drop = ids.uid !== undefined && existsSync(SETPRIV)
    this.send({
      op: 'spawn',
      id,
      argv: drop ? [SETPRIV, `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--', ...argv] : argv,
      config,
      corpus: corpus ?? null,
      ids: ids.uid === undefined || drop ? null : [ids.uid, ids.gid],
    })
    return id
  }

  write(id: number, data: string) {
    this.send({ op: 'write', id, data })
  }

  /** Kills the sandbox; it is forgotten at once (whatever it still sends is dropped). */
  kill(id: number) {
    this.send({ op: 'kill', id })
    this.drop(id)
  }

  private drop(id: number) {
    this.procs.delete(id)
    if (this.procs.size === 0 && !this.dead) {
      // The last sandbox has gone: the spawner ends a moment later unless another is asked for (episodes
      // one after another keep one spawner; the timer does not keep Node running).
      clearTimeout(this.linger)
      this.linger = setTimeout(() => this.end(), SPAWNER_LINGER_MS).unref()
    }
  }

  private linger: NodeJS.Timeout | undefined

  /** Ends the spawner now if it has no sandbox (the next sandbox starts a new one). */
  end() {
    clearTimeout(this.linger)
    if (this.procs.size > 0 || this.dead) return
    this.dead = true
    if (spawner === this) spawner = undefined
    this.child.stdin!.end()
  }

  /** While a cell runs, the spawner keeps Node running; an idle sandbox does not (a script ends). */
  hold(on: boolean) {
    this.holds += on ? 1 : -1
    this.ref(this.holds > 0)
  }

  private ref(on: boolean) {
    for (const h of [this.child, this.child.stdin, this.child.stdout] as const) {
      const handle = h as { ref?(): void; unref?(): void } | null
      if (on) handle?.ref?.()
      else handle?.unref?.()
    }
  }

  private gone(why: string) {
    const wasDead = this.dead
    this.dead = true
    if (spawner === this) spawner = undefined
    const procs = [...this.procs.values()]
    this.procs.clear()
    for (const p of procs) p.onExit(wasDead ? 'the sandbox spawner ended' : why)
  }
}

let spawner: Spawner | undefined
let exitHook = false
function theSpawner(): Spawner {
  if (!exitHook) {
    exitHook = true
    process.once('exit', () => spawner?.child.kill('SIGKILL'))
  }
  spawner ??= new Spawner()
  return spawner
}

/** One sandboxed driver process. */
export class Sandbox {
  readonly ran: string[] = []
  readonly ready: Promise<{ pid: number; uid: number }>
  dead = false
  deadReason = ''
  /** performance.now() of its last cell (sub-millisecond: warm cells take less than one). */
  lastUsed = performance.now()
  busy = false
  private readonly spawner: Spawner
  private readonly id: number
  private readonly proc: SandboxProcess
  private waiter: { resolve(line: string): void; reject(e: Error): void } | undefined
  private stderr = ''
  private holding = false

  constructor(
    readonly limits: Limits,
    readonly corpusPath: string | undefined,
    readonly withoutCorpus = false,
  ) {
    if (corpusPath) {
      const size = statSync(corpusPath).size
      if (size > MAX_CORPUS_FILE_BYTES)
        throw new Error(`the corpus file is larger than ${MAX_CORPUS_FILE_BYTES / 1024 / 1024} MB`)
    }
    // `owner` names the Node process on the command line (ps tells whose sandboxes are left). The
    // spawner opens the corpus and sets corpusFd to the descriptor it passes on.
    const config = {
      ...limits,
      corpusFd: null,
      corpusMaxBytes: MAX_CORPUS_FILE_BYTES,
      search: !corpusPath && withoutCorpus ? 'none' : null,
      owner: process.pid,
    }
    this.proc = {
      onLine: (line) => {
        const w = this.waiter
        this.waiter = undefined
        if (w) w.resolve(line)
        else this.kill('the sandbox answered unasked')
      },
      onOverflow: () => this.kill('the sandbox wrote more than the protocol allows'),
      onStderr: (text) => {
        if (this.stderr.length < 4000) this.stderr += text.slice(0, 4000 - this.stderr.length)
      },
      onExit: (why) => this.die(why),
    }
    this.spawner = theSpawner()
    this.id = this.spawner.start(
      this.proc,
      [BWRAP, ...bwrapArgs(), PYTHON, '-I', '-B', '-c', driver()],
      config,
      corpusPath,
    )
    this.ready = this.next().then((line) => Ready.parse(JSON.parse(line)))
    this.ready.catch(() => {})
  }

  /** bwrap's pid on the host (known once the spawner has started it). */
  get pid(): number | undefined {
    return this.proc.pid
  }

  private next(): Promise<string> {
    if (this.dead) return Promise.reject(new SandboxGone(this.deadReason))
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject }
    })
  }

  private die(reason: string) {
    if (this.dead) return
    this.dead = true
    this.deadReason = this.stderr.trim() ? `${reason}: ${this.stderr.trim()}` : reason
    this.hold(false)
    const w = this.waiter
    this.waiter = undefined
    w?.reject(new SandboxGone(this.deadReason))
  }

  /** Kills the sandbox (bwrap's process group; the pid namespace takes every process in it along). */
  kill(reason = 'killed') {
    if (!this.dead) this.spawner.kill(this.id)
    this.die(reason)
  }

  /** An idle sandbox does not keep Node running (a script ends without `releaseAll`); a running cell does. */
  private hold(on: boolean) {
    if (on === this.holding) return
    this.holding = on
    this.spawner.hold(on)
  }

  private seq = 0
  /** Runs one cell; resolves with the driver's answer, or null when the sandbox died or was killed. */
  async run(
    code: string,
    o: {
      wallSeconds: number
      cpuSeconds: number
      /** The cell's number, In[n] (default: the previous one's + 1). */
      n?: number
      replay?: boolean
      script?: boolean
      signal?: AbortSignal
    },
  ): Promise<{ reply: Reply | null; timedOut: boolean; aborted: boolean; reason: string }> {
    const id = ++this.seq
    this.hold(true)
    let timedOut = false
    let aborted = false
    const timer = setTimeout(
      () => {
        timedOut = true
        this.kill(`the cell took longer than ${o.wallSeconds} s`)
      },
      (o.wallSeconds + KILL_GRACE_SECONDS) * 1000,
    )
    const onAbort = () => {
      aborted = true
      this.kill('aborted')
    }
    if (o.signal?.aborted) onAbort()
    o.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      await this.ready
      const answer = this.next()
      this.spawner.write(
        this.id,
        `${JSON.stringify({ id, n: o.n, code, wall: o.wallSeconds, cpu: o.cpuSeconds, replay: !!o.replay, script: !!o.script })}\n`,
      )
      const reply = Reply.parse(JSON.parse(await answer))
      if (reply.id !== id) throw new Error('the sandbox answered another request')
      this.ran.push(code)
      return { reply, timedOut, aborted, reason: '' }
    } catch (e) {
      if (!(e instanceof SandboxGone)) this.kill(e instanceof Error ? e.message : String(e))
      return { reply: null, timedOut, aborted, reason: this.deadReason }
    } finally {
      clearTimeout(timer)
      o.signal?.removeEventListener('abort', onAbort)
      this.lastUsed = performance.now()
      this.hold(false)
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The pool

const settings = {
  maxLive: Number(process.env.PARLEY_MINT_SANDBOXES ?? 8),
  idleMs: Number(process.env.PARLEY_MINT_SANDBOX_IDLE_SECONDS ?? 600) * 1000,
}

/** The pool's size and idle time (defaults: PARLEY_MINT_SANDBOXES, 8; PARLEY_MINT_SANDBOX_IDLE_SECONDS, 600). */
export function configurePool(o: { maxLive?: number; idleSeconds?: number }): void {
  if (o.maxLive !== undefined) settings.maxLive = z.number().int().min(1).max(1000).parse(o.maxLive)
  if (o.idleSeconds !== undefined) settings.idleMs = z.number().positive().max(86400).parse(o.idleSeconds) * 1000
  if (sweeper) {
    clearInterval(sweeper)
    sweeper = undefined
  }
}

interface Entry {
  box?: Sandbox
  /** Calls of this key run one after the other. */
  queue: Promise<unknown>
}
const pool = new Map<string, Entry>()
let sweeper: NodeJS.Timeout | undefined

function sweep() {
  const now = performance.now()
  for (const [key, { box }] of pool)
    if (box && !box.busy && (box.dead || now - box.lastUsed > settings.idleMs)) evict(key, 'idle')
  if (pool.size === 0 && sweeper) {
    clearInterval(sweeper)
    sweeper = undefined
  }
}

function makeRoom() {
  while (pool.size >= settings.maxLive) {
    let lru: [string, Sandbox] | undefined
    for (const [key, { box }] of pool)
      if (box && !box.busy && (!lru || box.lastUsed < lru[1].lastUsed)) lru = [key, box]
    if (!lru) return // every sandbox is running a cell: the cap is exceeded until one is idle
    evict(lru[0], 'evicted')
  }
}

/** Stops a key's sandbox; its next cell replays the episode into a new one. */
function evict(key: string, why: string) {
  const e = pool.get(key)
  pool.delete(key)
  e?.box?.kill(why)
}

/** Cells that killed their sandbox, by session key (the most recent keys): replay skips them. */
const killers = new Map<string, Set<string>>()
function rememberKiller(key: string, code: string) {
  const set = killers.get(key) ?? new Set<string>()
  killers.delete(key)
  killers.set(key, set.add(code))
  while (killers.size > 1000) killers.delete(killers.keys().next().value as string)
}

const sameLimits = (a: Limits, b: Limits) =>
  a.memoryMb === b.memoryMb &&
  a.fileSizeMb === b.fileSizeMb &&
  a.processes === b.processes &&
  a.cpuTotalSeconds === b.cpuTotalSeconds
const sameCells = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((c, i) => c === b[i])

function result(
  r: Awaited<ReturnType<Sandbox['run']>>,
  t0: number,
  replayed: number,
  coldStart: boolean,
  wallSeconds: number,
): CellResult {
  const durationMs = Math.round(performance.now() - t0)
  if (r.reply) {
    return {
      output: formatOutput(r.reply.head, r.reply.truncated),
      exitStatus: r.reply.ok ? 0 : 1,
      limitsHit: r.reply.limit,
      exception: r.reply.exc,
      durationMs,
      replayed,
      coldStart,
    }
  }
  const output = r.timedOut
    ? `TimeoutError: Timed out after ${wallSeconds} seconds. (The cell ignored the time limit; its sandbox was killed and its state is lost.)`
    : r.aborted
      ? 'The cell was stopped.'
      : `The sandbox died (${r.reason}); its state is lost.`
  return {
    output,
    exitStatus: null,
    limitsHit: r.timedOut ? 'timeout' : 'killed',
    exception: null,
    durationMs,
    replayed,
    coldStart,
  }
}

/**
 * Runs `code` in the session's sandbox, after the episode's earlier `cells` (replayed into a new
 * sandbox when the live one is gone or ran other cells). Never throws for what the code does; throws
 * when the input is invalid, the sandbox is unavailable (see `sandboxStatus`), or `signal` aborted
 * before it started. On abort the sandbox is killed and the result says `exitStatus: null`.
 */
export async function runCell(input: RunCellInput, opts: { signal?: AbortSignal } = {}): Promise<CellResult> {
  const i = RunCellInput.parse(input)
  const limits = SandboxLimits.parse(i.limits)
  const status = await sandboxStatus()
  if (!status.available) throw new Error(`The Python sandbox is unavailable: ${status.reason}`)
  opts.signal?.throwIfAborted()
  const e: Entry = pool.get(i.sessionKey) ?? { queue: Promise.resolve() }
  const run = e.queue.then(async () => {
    const t0 = performance.now()
    const wall = limits.wallSeconds
    const cell = { wallSeconds: wall, cpuSeconds: limits.cpuSeconds ?? Math.ceil(wall), signal: opts.signal }
    let box = e.box
    const reusable =
      box &&
      !box.dead &&
      sameLimits(box.limits, limits) &&
      box.corpusPath === i.corpusPath &&
      box.withoutCorpus === i.withoutCorpus &&
      sameCells(box.ran, i.cells)
    let replayed = 0
    let coldStart = false
    if (!reusable) {
      box?.kill('replaced')
      pool.delete(i.sessionKey)
      coldStart = true
      sweeper ??= setInterval(sweep, Math.min(10_000, settings.idleMs / 2)).unref()
      const known = killers.get(i.sessionKey)
      // Replay; a cell that kills the sandbox again (it ignored its time limit, it blew a hard limit)
      // is skipped from then on, in a new sandbox, as its first run's effects were lost with its sandbox.
      for (;;) {
        makeRoom()
        box = new Sandbox(limits, i.corpusPath, i.withoutCorpus)
        e.box = box
        pool.set(i.sessionKey, e)
        replayed = 0
        let killedBy: string | undefined
        for (const [j, c] of i.cells.entries()) {
          if (known?.has(c)) continue
          box.busy = true
          const r = await box.run(c, { ...cell, n: j + FIRST_CELL, replay: true }).finally(() => {
            if (box) box.busy = false
          })
          if (!r.reply) {
            if (r.aborted) return result(r, t0, replayed, coldStart, wall)
            killedBy = c
            break
          }
          replayed++
        }
        if (killedBy === undefined) break
        rememberKiller(i.sessionKey, killedBy)
      }
      box.ran.splice(0, box.ran.length, ...i.cells)
    } else pool.set(i.sessionKey, e) // most recently used
    const b = box as Sandbox
    b.busy = true
    try {
      const r = await b.run(i.code, { ...cell, n: i.cells.length + FIRST_CELL })
      if (!r.reply && !r.aborted) rememberKiller(i.sessionKey, i.code)
      return result(r, t0, replayed, coldStart, wall)
    } finally {
      b.busy = false
    }
  })
  e.queue = run.catch(() => {})
  if (!pool.has(i.sessionKey)) pool.set(i.sessionKey, e)
  return run
}

/**
 * A program's input: a cell of the session's episode (the session id is the sandbox's key); the corpus
 * by its id (server/corpus.ts), so the recorded input names no path of the machine.
 */
export const CellProgramInput = RunCellInput.omit({ sessionKey: true, corpusPath: true }).extend({
  corpus: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
})

/**
 * The cell as a program of the plugin (`programs: { python: cellProgram }`, run with `ctx.exec`): its
 * result is the `CellResult` (exit status 0 for the program whatever the cell did; the cell's own
 * status, limit and output are in it, for the model to read). The per-cell limits are the sandbox's
 * (`limits.wallSeconds`, 30 s); the exec's own time limit, which drops the result, should leave room
 * for a replay of the earlier cells, or be left unset.
 */
export const cellProgram = {
  async run(input: unknown, ctx: { signal: AbortSignal; sessionId: string; seq?: number }): Promise<CellResult> {
    const { corpus, ...cell } = CellProgramInput.parse(input)
    return runCell(
      { ...cell, ...(corpus ? { corpusPath: corpusPathOf(corpus) } : {}), sessionKey: ctx.sessionId },
      { signal: ctx.signal },
    )
  },
}

/** Stops the session's sandbox (the plugin's onSessionEnd). */
export function release(sessionKey: string): void {
  killers.delete(sessionKey)
  evict(sessionKey, 'released')
}

/** Stops every sandbox of the pool. */
export function releaseAll(): void {
  for (const key of [...pool.keys()]) release(key)
  spawner?.end()
}

/** The pool's live sandboxes (for tests and the bench). */
export function poolSize(): number {
  let n = 0
  for (const e of pool.values()) if (e.box && !e.box.dead) n++
  return n
}

/** The live sandbox of a key (tests: its pid). */
export function sandboxOf(sessionKey: string): Sandbox | undefined {
  const b = pool.get(sessionKey)?.box
  return b && !b.dead ? b : undefined
}

export const RunTestsInput = z.object({
  /** The solution and its tests, run as one script (`__name__ == '__main__'`). */
  program: z.string().max(200_000),
  timeoutSeconds: z.number().positive().max(120).default(10),
  limits: SandboxLimits.partial().default({}),
})

export interface TestsResult {
  passed: boolean
  output: string
  exitStatus: 0 | 1 | null
  limitsHit: LimitHit | null
  exception: string | null
  durationMs: number
}

/** HumanEval/MBPP success checks: the program in a fresh sandbox (no state, no corpus), pass or fail. */
export async function runTests(
  input: z.input<typeof RunTestsInput>,
  opts: { signal?: AbortSignal } = {},
): Promise<TestsResult> {
  const i = RunTestsInput.parse(input)
  const status = await sandboxStatus()
  if (!status.available) throw new Error(`The Python sandbox is unavailable: ${status.reason}`)
  const limits = SandboxLimits.parse({ ...i.limits, wallSeconds: i.timeoutSeconds })
  const t0 = performance.now()
  const box = new Sandbox(limits, undefined)
  try {
    const r = await box.run(i.program, {
      wallSeconds: i.timeoutSeconds,
      cpuSeconds: limits.cpuSeconds ?? Math.ceil(i.timeoutSeconds),
      script: true,
      signal: opts.signal,
    })
    const c = result(r, t0, 0, true, i.timeoutSeconds)
    return {
      passed: c.exitStatus === 0,
      output: c.output,
      exitStatus: c.exitStatus,
      limitsHit: c.limitsHit,
      exception: c.exception,
      durationMs: c.durationMs,
    }
  } finally {
    box.kill('done')
  }
}

// ---------------------------------------------------------------------------------------------------
// Availability

export type SandboxStatus = { available: true } | { available: false; reason: string }

const PROBE = `
import sys
missing = []
for m in ("numpy", "sympy"):
    try:
        __import__(m)
    except Exception as e:
        missing.append(m + ": " + type(e).__name__ + ": " + (str(e).splitlines() or [""])[0])
print("PROBE " + ("ok" if not missing else "; ".join(missing)))
`

let cached: Promise<SandboxStatus> | undefined

/** Whether the tool can run here, and if not why (checked once by a tiny probe in a real sandbox). */
export function sandboxStatus(): Promise<SandboxStatus> {
  cached ??= probeSandbox()
  return cached
}

/** The probe itself (uncached; the paths are the tests'). */
export function probeSandbox(paths: { bwrap?: string; python?: string } = {}): Promise<SandboxStatus> {
  const bwrap = paths.bwrap ?? BWRAP
  const python = paths.python ?? PYTHON
  if (process.platform !== 'linux')
    return Promise.resolve({ available: false, reason: 'the Python sandbox needs Linux (bubblewrap)' })
  if (!existsSync(bwrap))
    return Promise.resolve({
      available: false,
      reason: 'bubblewrap (bwrap) is not installed: apt-get install -y bubblewrap',
    })
  if (!existsSync(python))
    return Promise.resolve({
      available: false,
      reason: `python3 is not installed at ${python}: apt-get install -y python3 python3-numpy python3-sympy`,
    })
  return new Promise((resolve) => {
    const child = spawn(bwrap, [...bwrapArgs(), python, '-I', '-B', '-c', PROBE], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: EMPTY_ENV,
      cwd: '/',
      ...outerIds(),
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      if (out.length < 4000) out += d
    })
    child.stderr.on('data', (d) => {
      if (err.length < 4000) err += d
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.on('error', (e) => {
      clearTimeout(timer)
      resolve({ available: false, reason: `bubblewrap could not start: ${e.message}` })
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      const line = out.split('\n').find((l) => l.startsWith('PROBE '))
      if (line === 'PROBE ok') return resolve({ available: true })
      if (line) {
        const what = line.slice(6)
        const names = ['numpy', 'sympy'].filter((m) => what.includes(`${m}:`))
        return resolve({
          available: false,
          reason: `${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'} missing from ${python} (${what}): apt-get install -y ${names.map((m) => `python3-${m}`).join(' ')}`,
        })
      }
      resolve({
        available: false,
        reason: err.includes('bwrap:')
          ? `bubblewrap could not create the sandbox (status ${code}): ${err.trim()} (unprivileged user namespaces must be allowed, e.g. sysctl kernel.unprivileged_userns_clone=1 and kernel.apparmor_restrict_unprivileged_userns=0)`
          : `the sandbox probe failed (status ${code}): ${err.trim() || `${python} printed nothing`}`,
      })
    })
  })
}
