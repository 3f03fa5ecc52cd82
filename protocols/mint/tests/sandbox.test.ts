/**
 * MINT's Python sandbox (protocols/mint/server/sandbox.ts): the paper's shell behaviour (state across
 * cells, its output rules, tracebacks), replay, limits, and attempts to escape, each refused or cut and
 * asserted on what a cell observes and on the host. Database-free:
 *   npx vitest run protocols/mint/tests/sandbox.test.ts --config vitest.pure.config.ts
 * Needs bubblewrap, /usr/bin/python3, numpy and sympy (`apt-get install -y bubblewrap python3-numpy
 * python3-sympy`); without them the file is skipped with the reason, unless PARLEY_MINT_SANDBOX_REQUIRED=1.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProgramDef } from '@/lib/server/engine/plugin'
import {
  bwrapArgs,
  cellProgram,
  configurePool,
  NO_OUTPUT,
  poolSize,
  probeSandbox,
  release,
  releaseAll,
  runCell,
  runTests,
  sandboxOf,
  sandboxStatus,
  TRUNCATED_SUFFIX,
} from '../server/sandbox'
import { corpusPathOf, writeCorpus } from '../server/corpus'
import { parseCorpusJsonl } from '@/lib/tasks/corpus'

const status = await sandboxStatus()
if (!status.available) {
  if (process.env.PARLEY_MINT_SANDBOX_REQUIRED === '1') throw new Error(`sandbox unavailable: ${status.reason}`)
  console.warn(`MINT sandbox tests skipped: ${status.reason}`)
}

let n = 0
const key = () => `test-${process.pid}-${++n}`

/**
 * Sandbox processes an owner (a Node pid) left on the host: every process whose command line carries
 * its `"owner":pid` (bwrap, its pid 1, the driver, what a cell forked), and our zombie children.
 */
function sandboxProcesses(owner = process.pid): string[] {
  const left: string[] = []
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (cmd.includes(`"owner":${owner}`)) left.push(`${pid} ${cmd.split('\0')[0]}`)
      else if (state === 'Z' && ppid === String(process.pid)) left.push(`${pid} zombie`)
    } catch {
      // gone meanwhile
    }
  }
  return left
}

/** The sandbox spawners of this process (protocols/mint/server/sandbox/spawner.py). */
function spawnerPids(): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8')
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8')
        return cmd.includes('spawner.py') && cmd.includes(`"owner":${process.pid}`) && !stat.includes(') Z ')
      } catch {
        return false
      }
    })
    .map(Number)
}

async function settle(owner?: number): Promise<string[]> {
  for (let i = 0; i < 50; i++) {
    if (sandboxProcesses(owner).length === 0) return []
    await new Promise((r) => setTimeout(r, 100))
  }
  return sandboxProcesses(owner)
}

describe.skipIf(!status.available)('MINT Python sandbox', () => {
  beforeAll(async () => {
    // The check below must start clean (nothing of this process yet).
    expect(await settle()).toEqual([])
  })
  afterAll(async () => {
    releaseAll()
    expect(await settle()).toEqual([])
  })

  describe('the paper shell', () => {
    it('keeps state across cells and shows the last expression as Out[n]', async () => {
      const k = key()
      const first = 'x = 40\ndef inc(v):\n    return v + 1'
      const a = await runCell({ sessionKey: k, code: first })
      expect(a).toMatchObject({ output: NO_OUTPUT, exitStatus: 0, limitsHit: null, coldStart: true, replayed: 0 })
      const b = await runCell({ sessionKey: k, cells: [first], code: 'inc(inc(x))' })
      // The paper's shell ran one set-up cell first: the first user cell is In[2], this one In[3].
      expect(b).toMatchObject({ output: 'Out[3]: 42\n', exitStatus: 0, coldStart: false, replayed: 0 })
      // The leftover check sees a live sandbox: the spawner that started it, bwrap, its pid 1 and the driver.
      expect(sandboxProcesses().length).toBe(4)
      release(k)
    })

    it('prints the exact empty-output text and truncates at 2,000 characters with the exact suffix', async () => {
      const k = key()
      expect((await runCell({ sessionKey: k, code: 'y = 1' })).output).toBe('[Executed Successfully with No Output]')
      const long = await runCell({ sessionKey: k, cells: ['y = 1'], code: "print('a' * 1999 + 'bcd')" })
      expect(long.output).toBe(`${'a'.repeat(1999)}b...\n[Output Truncated]`)
      expect(TRUNCATED_SUFFIX).toBe('...\n[Output Truncated]')
      const exact = await runCell({
        sessionKey: k,
        cells: ['y = 1', "print('a' * 1999 + 'bcd')"],
        code: "print('z' * 1999)",
      })
      expect(exact.output).toBe(`${'z'.repeat(1999)}\n`) // 2,000 characters: not cut
      release(k)
    })

    it('shows a traceback with the exception type, message and the cell lines', async () => {
      const k = key()
      const code =
        'def similar(a, b):\n    return tuple(set(a) | set(b))\nres = similar((3, 4), (4, 5))\nassert res == (4,), f"Expected (4,) but got {res}"'
      const r = await runCell({ sessionKey: k, code })
      expect(r.exitStatus).toBe(1)
      expect(r.exception).toBe('AssertionError')
      expect(r.output).toContain('AssertionError                            Traceback (most recent call last)')
      expect(r.output).toContain('Cell In[2], line 4')
      expect(r.output).toContain('----> 4 assert res == (4,), f"Expected (4,) but got {res}"')
      expect(r.output).toContain('AssertionError: Expected (4,) but got (3, 4, 5)')
      expect(r.output).not.toContain('driver')
      const s = await runCell({ sessionKey: k, cells: [code], code: 'x = (1,' })
      expect(s.exception).toBe('SyntaxError')
      expect(s.output).toMatch(/^ {2}Cell In\[3\], line 1\n {4}x = \(1,\n/)
      release(k)
    })

    it('imports numpy and sympy and solves an equation', async () => {
      const r = await runCell({
        sessionKey: key(),
        code: 'import numpy as np, sympy as sp\nx = sp.symbols("x")\nprint(sp.solve(x**2 - 5*x + 6, x), int(np.arange(5).sum()))',
      })
      expect(r).toMatchObject({ output: '[2, 3] 10\n', exitStatus: 0 })
    })

    it('displays a long value as IPython does: one item a line, after the prompt', async () => {
      const k = key()
      const r = await runCell({ sessionKey: k, code: 'list(range(30))' })
      expect(r.output).toBe(`Out[2]: \n[${Array.from({ length: 30 }, (_, i) => i).join(',\n ')}]\n`)
      const d = await runCell({ sessionKey: k, cells: ['list(range(30))'], code: "{'b': 1, 'a': 2}" })
      expect(d.output).toBe("Out[3]: {'b': 1, 'a': 2}\n")
      release(k)
    })

    it('disables sys.setrecursionlimit as the paper does', async () => {
      const r = await runCell({ sessionKey: key(), code: 'import sys\nsys.setrecursionlimit(10**6)' })
      expect(r.output).toBe('Setting recursion limit is disabled\n')
    })

    it('runs as a program of the plugin: the session id is the key, the input is checked', async () => {
      const program: ProgramDef = cellProgram // the type the plugin's `programs` takes
      expect(program.run).toBe(cellProgram.run)
      const sessionId = key()
      const ctx = { signal: new AbortController().signal, sessionId, seq: 1, limits: {} }
      const a = await cellProgram.run({ code: 'z = 6' }, ctx)
      const b = await cellProgram.run({ cells: ['z = 6'], code: 'z * 7' }, { ...ctx, seq: 2 })
      expect(b).toMatchObject({ output: 'Out[3]: 42\n', coldStart: false })
      expect(a.coldStart).toBe(true)
      await expect(cellProgram.run({ cells: 'z = 6' }, ctx)).rejects.toThrow()
      release(sessionId)
    })

    it('replays the earlier cells into a new sandbox when the live one is gone', async () => {
      const k = key()
      const cells = ['a = 2', 'b = a * 21', 'print("replayed output is discarded")', '1 / 0']
      let done: string[] = []
      for (const c of cells) {
        await runCell({ sessionKey: k, cells: done, code: c })
        done = [...done, c]
      }
      const pid = sandboxOf(k)?.pid
      release(k)
      expect(sandboxOf(k)).toBeUndefined()
      const r = await runCell({ sessionKey: k, cells: done, code: 'b' })
      expect(r).toMatchObject({ output: 'Out[6]: 42\n', exitStatus: 0, coldStart: true, replayed: 4 })
      expect(sandboxOf(k)?.pid).not.toBe(pid)
      // Other earlier cells than the live sandbox ran (a step ran again on another input): a new sandbox.
      const other = await runCell({ sessionKey: k, cells: ['a = 5', 'b = a'], code: 'b' })
      expect(other).toMatchObject({ output: 'Out[4]: 5\n', coldStart: true, replayed: 2 })
      release(k)
    })

    it('defines wikipedia_search over an offline corpus only when one is given', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'mint-corpus-'))
      const corpus = path.join(dir, 'wiki.jsonl')
      const pages = [
        {
          title: 'Ada Lovelace',
          text: 'Ada Lovelace was an English mathematician.\n\nShe wrote about the Analytical Engine.',
        },
        { title: 'Analytical Engine', text: 'The Analytical Engine was a proposed mechanical computer.' },
        { title: 'Paris', text: 'Paris is the capital of France.' },
      ]
      writeFileSync(corpus, pages.map((p) => JSON.stringify(p)).join('\n'))
      const k = key()
      const first = "print(wikipedia_search('Analytical Engine'))"
      const a = await runCell({ sessionKey: k, corpusPath: corpus, code: first })
      // The title first, then the page whose text has the words; the first paragraph as the summary.
      expect(a.output).toBe(
        'Page: Analytical Engine\nSummary: The Analytical Engine was a proposed mechanical computer.\n\n' +
          'Page: Ada Lovelace\nSummary: Ada Lovelace was an English mathematician.\n',
      )
      const b = await runCell({
        sessionKey: k,
        corpusPath: corpus,
        cells: [first],
        code: "print(wikipedia_search('capital of France'))\nprint(wikipedia_search('zzzz qqqq'))",
      })
      expect(b.output).toBe(
        'Page: Paris\nSummary: Paris is the capital of France.\nWikipedia Search Result was found\n',
      )
      release(k)
      // A code task: no tool but the interpreter, as in the paper.
      const code = await runCell({ sessionKey: key(), code: "wikipedia_search('Paris')" })
      expect(code.exception).toBe('NameError')
      // A reasoning task of a run without a corpus: the function says so (no NameError the model cannot read).
      const none = await runCell({ sessionKey: key(), withoutCorpus: true, code: "print(wikipedia_search('Paris'))" })
      expect(none).toMatchObject({ exitStatus: 0, exception: null })
      expect(none.output).toBe(
        'wikipedia_search is not available in this run: it has no offline corpus, so there is nothing to search. Answer from what you know, or compute it.\n',
      )
      rmSync(dir, { recursive: true })
    })

    it('writes corpus files only into a private directory of its user (a planted shared one is refused)', () => {
      const tmp = mkdtempSync(path.join(os.tmpdir(), 'mint-tmpdir-'))
      const before = process.env.TMPDIR
      process.env.TMPDIR = tmp
      try {
        const pages = [{ title: 'A', paragraphs: ['a'] }]
        const id = writeCorpus(pages)
        expect(statSync(path.dirname(corpusPathOf(id))).mode & 0o777).toBe(0o700)
        expect(statSync(corpusPathOf(id)).mode & 0o777).toBe(0o400)
        chmodSync(path.dirname(corpusPathOf(id)), 0o777)
        expect(() => writeCorpus(pages)).toThrow(/is not a private directory of this user/)
      } finally {
        process.env.TMPDIR = before
        if (before === undefined) delete process.env.TMPDIR
        rmSync(tmp, { recursive: true })
      }
    })

    it('searches a corpus imported in the shared pages format through the program input (the corpus id), cut at 1,000 characters', async () => {
      const pages = parseCorpusJsonl(readFileSync(path.join(import.meta.dirname, '../demo/corpus.jsonl'), 'utf8'))
      const id = writeCorpus(pages)
      expect(writeCorpus(pages)).toBe(id) // content-addressed: written once
      const run = (code: string) =>
        (cellProgram as ProgramDef).run({ code, corpus: id }, {
          signal: new AbortController().signal,
          sessionId: key(),
        } as never) as Promise<{ output: string }>
      const r = await run("print(wikipedia_search('Ansgar Dralle'))")
      // The exact title first, then the page whose title shares the words; each summary its first paragraph.
      expect(r.output).toBe(
        'Page: Ansgar Dralle\nSummary: Ansgar Dralle (1871–1948) was a lighthouse keeper on Vellmar and the founder of the Vellmar Tide Museum.\n\n' +
          'Page: Vellmar Tide Museum\nSummary: The Vellmar Tide Museum is a small maritime museum on the island of Vellmar. It was founded in 1912 by the lighthouse keeper Ansgar Dralle.\n',
      )
      expect((await run("print(wikipedia_search('Atlantis'))")).output).toBe('Wikipedia Search Result was found\n')
      // The authors' wrapper cuts its joined answer at 1,000 characters.
      const long = writeCorpus([
        { title: 'Long A', paragraphs: ['a '.repeat(700)] },
        { title: 'Long B', paragraphs: ['b '.repeat(700)] },
      ])
      const cut = await (cellProgram as ProgramDef).run({ code: "len(wikipedia_search('Long'))", corpus: long }, {
        signal: new AbortController().signal,
        sessionId: key(),
      } as never)
      expect((cut as { output: string }).output).toBe('Out[2]: 1000\n')
      await expect(
        (cellProgram as ProgramDef).run({ code: '1', corpus: '../../etc/passwd' }, {
          signal: new AbortController().signal,
          sessionId: key(),
        } as never),
      ).rejects.toThrow()
    })
  })

  describe('escapes, each refused or cut', () => {
    it('with a corpus: no descriptor or path of the corpus file, no network, no project view', async () => {
      const pages = parseCorpusJsonl(readFileSync(path.join(import.meta.dirname, '../demo/corpus.jsonl'), 'utf8'))
      const file = corpusPathOf(writeCorpus(pages))
      const before = readFileSync(file, 'utf8')
      const k = key()
      const r = await runCell({
        sessionKey: k,
        corpusPath: file,
        code: [
          'import os, socket',
          'links = []',
          "for f in os.listdir('/proc/self/fd'):",
          '    try:',
          "        links.append(os.readlink('/proc/self/fd/' + f))",
          '    except OSError:',
          '        pass',
          "print([l for l in links if 'corpora' in l or l.endswith('.jsonl')])",
          `print(os.path.exists(${JSON.stringify(file)}), os.path.exists(${JSON.stringify(path.dirname(file))}))`,
          `print([os.path.exists(p) for p in ('/work', ${JSON.stringify(process.cwd())}, '/var/run/postgresql')])`,
          's = socket.socket()',
          's.settimeout(2)',
          'try:',
          "    s.connect(('127.0.0.1', 5432))",
          "    print('connected')",
          'except OSError as e:',
          "    print('refused')",
          "print(wikipedia_search('Kessin').splitlines()[0])",
        ].join('\n'),
      })
      const lines = r.output.trim().split('\n')
      // No descriptor on the corpus file: the driver read it and closed it before the cell.
      expect(lines[0]).toBe('[]')
      expect(lines.slice(1)).toEqual(['False False', '[False, False, False]', 'refused', 'Page: Kessin'])
      expect(readFileSync(file, 'utf8')).toBe(before)
      release(k)
    })

    it('runs as uid 65534 with only the system and its own tmpfs in view', async () => {
      const r = await runCell({
        sessionKey: key(),
        code: 'import os\nprint(os.getuid(), os.getgid(), sorted(os.listdir("/")), sorted(os.listdir("/etc")))\nprint(sorted(os.environ))',
      })
      expect(r.output).toBe(
        "65534 65534 ['bin', 'dev', 'etc', 'lib', 'lib64', 'proc', 'sbin', 'tmp', 'usr'] ['alternatives', 'ld.so.cache']\n" +
          "['HOME', 'LANG', 'MKL_NUM_THREADS', 'MPLBACKEND', 'NUMEXPR_NUM_THREADS', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'PATH', 'PWD', 'PYTHONDONTWRITEBYTECODE', 'PYTHONIOENCODING']\n",
      )
    })

    it('has no network: the database port, a public address and DNS all fail', async () => {
      const r = await runCell({
        sessionKey: key(),
        code: [
          'import socket',
          "for host, port in [('127.0.0.1', 5432), ('1.1.1.1', 53), ('93.184.216.34', 80)]:",
          '    try:',
          '        socket.create_connection((host, port), timeout=2)',
          "        print(host, 'CONNECTED')",
          '    except OSError as e:',
          "        print(host, 'refused', e.errno)",
          'try:',
          "    socket.getaddrinfo('example.com', 80)",
          "    print('dns RESOLVED')",
          'except OSError as e:',
          "    print('dns failed', type(e).__name__)",
          'print([i[1] for i in socket.if_nameindex()])',
        ].join('\n'),
      })
      expect(r.output).not.toContain('CONNECTED')
      expect(r.output).not.toContain('RESOLVED')
      expect(r.output).toBe(
        "127.0.0.1 refused 111\n1.1.1.1 refused 101\n93.184.216.34 refused 101\ndns failed gaierror\n['lo']\n",
      )
    })

    it('does not see the project folder, its .env, the data directory, /work, /root, /home or the database socket', async () => {
      const project = mkdtempSync(path.join(os.tmpdir(), 'parley-project-'))
      const secret = `SECRET-${process.pid}-${Date.now()}`
      writeFileSync(path.join(project, '.env'), `DATABASE_URL=postgresql://u:${secret}@db/x\n`)
      const paths = [
        path.join(project, '.env'),
        project,
        path.join(process.cwd(), '.env'),
        process.cwd(),
        path.join(process.cwd(), '.data'),
        '/work/main',
        '/work',
        '/root',
        '/home',
        '/var/run/postgresql',
        '/run/postgresql',
        '/tmp/.s.PGSQL.5432',
      ]
      const r = await runCell({
        sessionKey: key(),
        code: `import os\nfor p in ${JSON.stringify(paths)}:\n    print(os.path.exists(p))\nprint(any(${JSON.stringify(secret)} in open(os.path.join(d, f), errors="ignore").read() for d, _, fs in os.walk("/tmp") for f in fs))`,
      })
      expect(r.output).toBe(`${'False\n'.repeat(paths.length)}False\n`)
      expect(r.output).not.toContain(secret)
      rmSync(project, { recursive: true })
    })

    it("cannot read the host's processes: /proc is its own pid namespace and pid 1's environment is empty", async () => {
      process.env.PARLEY_SANDBOX_TEST_SECRET = 'host-secret-value'
      const k = key()
      const r = await runCell({
        sessionKey: k,
        code: "import os\npids = [p for p in os.listdir('/proc') if p.isdigit()]\nprint(len(pids) < 10)\nenv = open('/proc/1/environ', 'rb').read()\nprint(len(env), b'SECRET' in env, b'DATABASE' in env)",
      })
      delete process.env.PARLEY_SANDBOX_TEST_SECRET
      expect(r.output).toBe('True\n0 False False\n')
      release(k)
    })

    it('cannot write outside its tmpfs, and nothing it writes appears on the host', async () => {
      const token = `parley-sandbox-${process.pid}-${Date.now()}`
      const r = await runCell({
        sessionKey: key(),
        code: [
          'import os',
          `for p in ['/usr/${token}', '/etc/alternatives/${token}', '/proc/${token}', '/${token}', '/tmp/${token}']:`,
          '    try:',
          "        open(p, 'w').write('x')",
          "        print(p.split('/')[1], 'written')",
          '    except OSError as e:',
          "        print(p.split('/')[1], 'refused', e.errno)",
        ].join('\n'),
      })
      // Read-only system (EROFS 30), /proc refuses (ENOENT 2); the root and /tmp are the sandbox's own.
      expect(r.output).toBe(`usr refused 30\netc refused 30\nproc refused 2\n${token} written\ntmp written\n`)
      for (const p of [`/usr/${token}`, `/etc/alternatives/${token}`, `/${token}`, `/tmp/${token}`])
        expect(existsSync(p)).toBe(false)
    })

    it('runs os.system as the unprivileged user inside the same walls', async () => {
      const r = await runCell({
        sessionKey: key(),
        code: "import os\nos.system('id; ls /work 2>&1; cat /root/.bashrc 2>&1; unshare -U -r id 2>&1; echo done')",
      })
      // No nested user namespace (bwrap --disable-userns): no root of its own to gain capabilities with.
      expect(r.output).toContain('unshare: unshare failed: No space left on device')
      expect(r.output).not.toContain('uid=0')
      expect(r.output).toMatch(/^uid=65534 gid=65534 groups=65534\n/)
      expect(r.output).toContain("ls: cannot access '/work': No such file or directory")
      expect(r.output).toContain('cat: /root/.bashrc: No such file or directory')
      expect(r.output).toContain('done\nOut[2]: 0\n')
    })

    it('stops a fork bomb at the process limit; the sandbox stays usable', async () => {
      const k = key()
      const bomb =
        'import os\nkids = 0\nwhile True:\n    if os.fork() == 0:\n        import time; time.sleep(5); os._exit(0)\n    kids += 1'
      const r = await runCell({ sessionKey: k, code: bomb, limits: { processes: 32 } })
      expect(r.exception).toBe('BlockingIOError')
      expect(r.output).toContain('BlockingIOError: [Errno 11] Resource temporarily unavailable')
      const after = await runCell({
        sessionKey: k,
        cells: [bomb],
        code: 'print(0 < kids < 32)',
        limits: { processes: 32 },
      })
      expect(after).toMatchObject({ output: 'True\n', coldStart: false })
      release(k)
    })

    it("ends a cell's processes with the cell: a fork bomb whose children never stop is gone before the next cell", async () => {
      const k = key()
      const procs = "import os\nprint('processes:', sum(p.isdigit() for p in os.listdir('/proc')))"
      // The children swallow every refused fork and keep spinning; the cell itself returns.
      const bomb = `import os, time\ndef bomb():\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\nif os.fork() == 0:\n    bomb()\ntime.sleep(1)\n${procs}`
      const r = await runCell({ sessionKey: k, code: bomb, limits: { processes: 32 } })
      expect(r).toMatchObject({ exitStatus: 0 })
      expect(Number(r.output.match(/processes: (\d+)/)?.[1])).toBeGreaterThanOrEqual(16)
      // Only bwrap's pid 1 and the driver are left (they were ~32 spinning before this was fixed).
      const after = await runCell({ sessionKey: k, cells: [bomb], code: procs, limits: { processes: 32 } })
      expect(after).toMatchObject({ output: 'processes: 2\n', coldStart: false })
      release(k)
    })

    it("times out an infinite loop: the paper's TimeoutError, state kept", async () => {
      const k = key()
      await runCell({ sessionKey: k, code: 'kept = 7' })
      const pid = sandboxOf(k)?.pid
      const t0 = performance.now()
      const loop = 'while True:\n    pass'
      const r = await runCell({ sessionKey: k, cells: ['kept = 7'], code: loop, limits: { wallSeconds: 1 } })
      expect(performance.now() - t0).toBeLessThan(2500)
      expect(r).toMatchObject({ exitStatus: 1, limitsHit: 'timeout', exception: 'TimeoutError' })
      expect(r.output).toContain('TimeoutError: Timed out after 1 seconds.')
      const next = await runCell({ sessionKey: k, cells: ['kept = 7', loop], code: 'kept' })
      expect(next).toMatchObject({ output: 'Out[4]: 7\n', coldStart: false })
      expect(sandboxOf(k)?.pid).toBe(pid)
      release(k)
    })

    it('kills a cell that ignores the time limit; the next cell runs in a new sandbox with the state replayed', async () => {
      const k = key()
      const stuck = 'import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\ntime.sleep(60)'
      await runCell({ sessionKey: k, code: 'kept = 7' })
      const t0 = performance.now()
      const r = await runCell({ sessionKey: k, cells: ['kept = 7'], code: stuck, limits: { wallSeconds: 1 } })
      expect(performance.now() - t0).toBeLessThan(4500)
      expect(r).toMatchObject({ exitStatus: null, limitsHit: 'timeout' })
      expect(r.output).toContain('Timed out after 1 seconds.')
      expect(sandboxOf(k)).toBeUndefined()
      const t1 = performance.now()
      const next = await runCell({
        sessionKey: k,
        cells: ['kept = 7', stuck],
        code: 'kept * 6',
        limits: { wallSeconds: 1 },
      })
      // The cell that killed its sandbox is not replayed (its effects were lost with it).
      expect(performance.now() - t1).toBeLessThan(1500)
      expect(next).toMatchObject({ output: 'Out[4]: 42\n', exitStatus: 0, coldStart: true, replayed: 1 })
      release(k)
    })

    it('cuts huge output at the file-size limit; Node reads a bounded answer', async () => {
      const k = key()
      const rss0 = process.memoryUsage().rss
      const r = await runCell({ sessionKey: k, code: "while True:\n    print('x' * 10000)", limits: { fileSizeMb: 8 } })
      expect(r.exception).toBe('OSError')
      expect(r.limitsHit).toBe('output')
      expect(r.output).toBe(`${'x'.repeat(2000)}${TRUNCATED_SUFFIX}`)
      expect(process.memoryUsage().rss - rss0).toBeLessThan(64 * 1024 * 1024)
      // Garbage written to every descriptor, the protocol's included: Node stops at its cap and kills.
      const t0 = performance.now()
      const spam = await runCell({
        sessionKey: k,
        cells: [],
        code: "import os\nfor fd in range(3, 300):\n    try:\n        os.write(fd, b'{' * 400000)\n    except OSError:\n        pass",
        limits: { fileSizeMb: 8 },
      })
      expect(spam).toMatchObject({ exitStatus: null, limitsHit: 'killed' })
      expect(spam.output).toContain('the sandbox wrote more than the protocol allows')
      expect(performance.now() - t0).toBeLessThan(3000)
      expect(process.memoryUsage().rss - rss0).toBeLessThan(64 * 1024 * 1024)
      release(k)
    })

    it('refuses memory exhaustion with a MemoryError', async () => {
      const k = key()
      const big = 'x = bytearray(8 * 1024**3)'
      const r = await runCell({ sessionKey: k, code: big, limits: { memoryMb: 1024 } })
      expect(r).toMatchObject({ exitStatus: 1, exception: 'MemoryError', limitsHit: 'memory' })
      const grow = await runCell({
        sessionKey: k,
        cells: [big],
        code: 'chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024**2))',
        limits: { memoryMb: 1024 },
      })
      expect(grow).toMatchObject({ exitStatus: 1, exception: 'MemoryError', limitsHit: 'memory', coldStart: false })
      release(k)
    })

    it('stops a cell at its CPU limit', async () => {
      const r = await runCell({
        sessionKey: key(),
        code: 'import threading\ndef spin():\n    while True: pass\nfor _ in range(3): threading.Thread(target=spin, daemon=True).start()\nwhile True: pass',
        limits: { wallSeconds: 20, cpuSeconds: 1 },
      })
      expect(r).toMatchObject({ exitStatus: 1, exception: 'CpuLimit', limitsHit: 'cpu' })
      expect(r.durationMs).toBeLessThan(5000)
    })

    it('kills a cell at once when its signal aborts', async () => {
      const k = key()
      const ac = new AbortController()
      const t0 = performance.now()
      setTimeout(() => ac.abort(new Error('paused')), 300)
      const r = await runCell({ sessionKey: k, code: 'import time\ntime.sleep(60)' }, { signal: ac.signal })
      expect(performance.now() - t0).toBeLessThan(1500)
      expect(r).toMatchObject({ exitStatus: null, limitsHit: 'killed', output: 'The cell was stopped.' })
      expect(sandboxOf(k)).toBeUndefined()
    })
  })

  describe('code tasks and load', () => {
    it('runTests: a fresh sandbox per program, pass or fail with the output', async () => {
      const ok = await runTests({ program: 'def add(a, b):\n    return a + b\nassert add(2, 3) == 5\nprint("passed")' })
      expect(ok).toMatchObject({ passed: true, output: 'passed\n', exitStatus: 0 })
      const bad = await runTests({ program: 'def add(a, b):\n    return a - b\nassert add(2, 3) == 5' })
      expect(bad).toMatchObject({ passed: false, exitStatus: 1, exception: 'AssertionError' })
      expect(bad.output).toContain('----> 3 assert add(2, 3) == 5')
      const slow = await runTests({ program: 'while True:\n    pass', timeoutSeconds: 1 })
      expect(slow).toMatchObject({ passed: false, limitsHit: 'timeout' })
      // No state between programs; a script does not echo its last expression.
      const fresh = await runTests({ program: 'print("add" in dir())\n1 + 1' })
      expect(fresh).toMatchObject({ passed: true, output: 'False\n' })
    })

    it('runs 8 cells at once without failures', async () => {
      const keys = Array.from({ length: 8 }, key)
      const code = (j: number) => `import sympy as sp\nx = sp.symbols('x')\nprint(sp.solve(x - ${j}, x))`
      const rs = await Promise.all(keys.map((k, j) => runCell({ sessionKey: k, code: code(j) })))
      expect(rs.map((r) => r.output)).toEqual(keys.map((_, j) => `[${j}]\n`))
      expect(poolSize()).toBe(8)
      const again = await Promise.all(
        keys.map((k, j) => runCell({ sessionKey: k, cells: [code(j)], code: `x + ${j}` })),
      )
      expect(again.map((r) => r.output)).toEqual(keys.map((_, j) => (j === 0 ? 'Out[3]: x\n' : `Out[3]: x + ${j}\n`)))
      expect(again.every((r) => !r.coldStart)).toBe(true)
      for (const k of keys) release(k)
    })

    it("is started by the spawner, not by Node's own fork, as 65534 on the host; the spawner ends after the last sandbox", async () => {
      const k = key()
      await runCell({ sessionKey: k, code: 'x = 1' })
      const [spawnerPid, ...more] = spawnerPids()
      expect(more).toEqual([])
      const pid = sandboxOf(k)?.pid as number
      const ppidOf = (p: number) => {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8')
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      }
      expect(ppidOf(pid)).toBe(spawnerPid)
      expect(ppidOf(spawnerPid as number)).toBe(process.pid)
      // bwrap itself runs unprivileged on the host when Node is root: real, effective, saved and file
      // system uid and gid 65534, no supplementary group, no capability.
      if (process.getuid?.() === 0) {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8')
        expect(status).toMatch(/^Uid:\t65534\t65534\t65534\t65534$/m)
        expect(status).toMatch(/^Gid:\t65534\t65534\t65534\t65534$/m)
        expect(status).toMatch(/^Groups:\s*$/m)
        expect(status).toMatch(/^CapEff:\t0{16}$/m)
      }
      // A second sandbox goes through the same spawner.
      const k2 = key()
      await runCell({ sessionKey: k2, code: 'y = 2' })
      expect(ppidOf(sandboxOf(k2)?.pid as number)).toBe(spawnerPid)
      release(k)
      expect(spawnerPids()).toEqual([spawnerPid])
      release(k2)
      // A sandbox asked for soon after the last one went is started by the same spawner.
      const k3 = key()
      await runCell({ sessionKey: k3, code: 'z = 3' })
      expect(ppidOf(sandboxOf(k3)?.pid as number)).toBe(spawnerPid)
      release(k3)
      expect(await settle()).toEqual([])
    })

    it('a spawner killed mid-cell: the cell says its sandbox died, the next one replays in a new spawner', async () => {
      const k = key()
      await runCell({ sessionKey: k, code: 'kept = 5' })
      const [first] = spawnerPids()
      const cell = runCell({ sessionKey: k, cells: ['kept = 5'], code: 'import time\ntime.sleep(30)' })
      await new Promise((r) => setTimeout(r, 300))
      process.kill(first as number, 'SIGKILL')
      const r = await cell
      expect(r).toMatchObject({ exitStatus: null, limitsHit: 'killed' })
      expect(r.output).toMatch(/^The sandbox died \(the sandbox spawner exited \(SIGKILL\)\)/)
      const next = await runCell({ sessionKey: k, cells: ['kept = 5'], code: 'kept' })
      expect(next).toMatchObject({ output: 'Out[3]: 5\n', coldStart: true, replayed: 1 })
      expect(spawnerPids()).not.toContain(first)
      expect(spawnerPids()).toHaveLength(1)
      release(k)
      expect(await settle()).toEqual([])
    })

    it.each(['exit', 'SIGKILL'] as const)('leaves no sandbox behind when Node ends (%s) mid-cell', async (how) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'mint-exit-'))
      const script = path.join(dir, 'main.mts')
      const module = path.resolve(import.meta.dirname, '../server/sandbox.ts')
      writeFileSync(
        script,
        `import { runCell, sandboxOf } from ${JSON.stringify(module)}
void runCell({ sessionKey: 'k', code: 'import os, time\\nfor _ in range(4):\\n    os.fork()\\ntime.sleep(60)' })
while (!sandboxOf('k')) await new Promise((r) => setTimeout(r, 20))
await new Promise((r) => setTimeout(r, 500))
console.log('running', sandboxOf('k').pid)
${how === 'exit' ? 'process.exit(0)' : "process.kill(process.pid, 'SIGKILL')"}
`,
      )
      const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', cwd: process.cwd() })
      expect(child.stdout).toMatch(/^running \d+\n$/)
      expect(child.signal).toBe(how === 'exit' ? null : 'SIGKILL')
      // Its sandbox (bwrap, the driver and the 16 processes the cell forked) is gone.
      expect(child.pid).toBeGreaterThan(0)
      expect(await settle(child.pid)).toEqual([])
      rmSync(dir, { recursive: true })
    })

    it('a script that ran cells ends by itself after releaseAll, the spawner quietly (nothing on stderr)', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'mint-quiet-'))
      const script = path.join(dir, 'main.mts')
      const module = path.resolve(import.meta.dirname, '../server/sandbox.ts')
      // Three rounds of 8 sandboxes released together (a new spawner each round), and at the end one
      // sandbox still in a long cell.
      writeFileSync(
        script,
        `import { releaseAll, runCell, sandboxOf } from ${JSON.stringify(module)}
for (let round = 0; round < 3; round++) {
  const rs = await Promise.all(
    Array.from({ length: 8 }, (_, i) => runCell({ sessionKey: 'k' + i, code: 'import sympy\\nprint(6 * 7)' })),
  )
  console.log(rs.map((r) => r.output.trim()).join(','))
  releaseAll()
}
void runCell({ sessionKey: 'b', code: 'import time\\ntime.sleep(60)' })
while (!sandboxOf('b')) await new Promise((r) => setTimeout(r, 20))
await new Promise((r) => setTimeout(r, 300))
releaseAll()
`,
      )
      const child = spawnSync(process.execPath, ['--import', 'tsx', script], {
        encoding: 'utf8',
        cwd: process.cwd(),
        timeout: 60_000,
      })
      expect(child.stdout, child.stderr).toBe(`${Array(8).fill('42').join(',')}\n`.repeat(3))
      expect(child.status).toBe(0)
      // A spawner whose stdin ended with sandboxes still being killed let asyncio's teardown print
      // "RuntimeError: Event loop is closed" for each (seen at the end of bench:mint's sandbox part).
      expect(child.stderr).toBe('')
      expect(await settle(child.pid)).toEqual([])
      rmSync(dir, { recursive: true })
    }, 90_000)

    it('says why the tool is unavailable', async () => {
      expect(await probeSandbox({ bwrap: '/nonexistent/bwrap' })).toEqual({
        available: false,
        reason: 'bubblewrap (bwrap) is not installed: apt-get install -y bubblewrap',
      })
      expect(await probeSandbox({ python: '/nonexistent/python3' })).toEqual({
        available: false,
        reason:
          'python3 is not installed at /nonexistent/python3: apt-get install -y python3 python3-numpy python3-sympy',
      })
      expect(await probeSandbox({ python: '/usr/bin/true' })).toEqual({
        available: false,
        reason: 'the sandbox probe failed (status 0): /usr/bin/true printed nothing',
      })
      expect(await probeSandbox()).toEqual({ available: true })
    })

    it('evicts the least recently used idle sandbox past the pool size, and idle ones after their time', async () => {
      releaseAll() // the earlier tests' sandboxes would take places
      configurePool({ maxLive: 2 })
      try {
        const [a, b, c] = [key(), key(), key()]
        await runCell({ sessionKey: a, code: 'v = "a"' })
        await runCell({ sessionKey: b, code: 'v = "b"' })
        await runCell({ sessionKey: a, cells: ['v = "a"'], code: 'w = 1' }) // a is now the most recent
        await runCell({ sessionKey: c, code: 'v = "c"' })
        expect([!!sandboxOf(a), !!sandboxOf(b), !!sandboxOf(c)]).toEqual([true, false, true])
        const back = await runCell({ sessionKey: b, cells: ['v = "b"'], code: 'v' })
        expect(back).toMatchObject({ output: "Out[3]: 'b'\n", coldStart: true, replayed: 1 })
        releaseAll()
        configurePool({ idleSeconds: 0.3 })
        await runCell({ sessionKey: a, code: 'pass' })
        expect(sandboxOf(a)).toBeDefined()
        await new Promise((r) => setTimeout(r, 800))
        expect(sandboxOf(a)).toBeUndefined()
      } finally {
        configurePool({ maxLive: 8, idleSeconds: 600 })
        releaseAll()
      }
    })

    it('documents the command line: no host path but the system is bound', () => {
      const args = bwrapArgs()
      const binds = args.flatMap((a, i) => (a === '--ro-bind' || a === '--bind' ? [args[i + 1]] : []))
      expect(binds).toEqual(['/usr', '/etc/alternatives', '/etc/ld.so.cache'])
      for (const flag of ['--unshare-all', '--unshare-user', '--die-with-parent', '--new-session', '--clearenv'])
        expect(args).toContain(flag)
    })
  })
})
