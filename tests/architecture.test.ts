import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PLANNED_PROTOCOLS, PROTOCOL_IDS } from '@/lib/protocols/registry'
import { plugins } from '@/lib/server/protocols/registry'

/**
 * The layering rules of docs/ARCHITECTURE.md, checked on the source:
 * - a protocol is one folder, protocols/<id>/: core/ (pure: protocol, tasks, metrics), server/ (its
 *   plugin), ui/, tests/ and fixture.ts; outside it and the registries, no code under lib/server,
 *   lib/cli, app or components names a protocol id;
 * - the pure code (lib/protocols, lib/tasks, lib/llm, lib/metrics and every protocols/<id>/core/) never imports
 *   lib/server, lib/cli, app, components or a protocol's server or UI;
 * - the engine (lib/server/engine) imports no service, no protocol's plugin and no registry: a process's
 *   entry point binds the plugins (lib/server/protocols/bind.ts);
 * - a plugin (protocols/<id>/server/) imports only the SDK (lib/server/sdk.ts), its own folder and
 *   the pure libraries;
 * - nor a dataset kind a plugin declares (rad, cases, clembench …): the kinds are the plugins';
 * - no import cycles (value imports, a lazy `await import()` among them; `import type` is not an edge);
 *   the CLI and the scripts are in the graph too.
 */
const ROOT = path.resolve(import.meta.dirname, '..')
const SOURCE = /\.(ts|tsx)$/

function files(dir: string): string[] {
  const abs = path.join(ROOT, dir)
  if (!existsSync(abs)) return []
  const out: string[] = []
  for (const name of readdirSync(abs)) {
    const p = path.join(abs, name)
    if (name === 'node_modules' || name === 'generated') continue
    if (statSync(p).isDirectory()) out.push(...files(path.relative(ROOT, p)))
    else if (SOURCE.test(name) && !name.endsWith('.test.ts')) out.push(path.relative(ROOT, p))
  }
  return out
}

const ALL = [
  ...files('lib'),
  ...files('app'),
  ...files('components'),
  ...files('scripts'),
  ...files('protocols'),
  'instrumentation.ts',
  'proxy.ts',
  'prisma/seed.ts',
].filter((f) => existsSync(path.join(ROOT, f)))
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8')
/** Source without comments (a doc comment may mention a protocol). */
const code = (f: string) =>
  read(f)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1')

/** Value imports of a file: `import … from 'x'` and `export … from 'x'`, not `import type`; `lazy: false` leaves out `import('x')`. */
function imports(f: string, { lazy = true } = {}): string[] {
  const out: string[] = []
  for (const m of code(f).matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
    if (m[2]) continue
    out.push(m[3] as string)
  }
  for (const m of code(f).matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) out.push(m[1] as string)
  // A lazy `import('x')` is an edge too: it runs the module all the same, only later.
  if (lazy) for (const m of code(f).matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1] as string)
  return out
}

function resolve(from: string, spec: string): string | null {
  let base: string
  if (spec.startsWith('@/')) base = path.join(ROOT, spec.slice(2))
  else if (spec.startsWith('.')) base = path.resolve(path.dirname(path.join(ROOT, from)), spec)
  else return null
  for (const c of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')])
    if (existsSync(c) && statSync(c).isFile()) return path.relative(ROOT, c)
  return null
}

const IDS = [...PROTOCOL_IDS, ...Object.keys(PLANNED_PROTOCOLS)]
const REGISTRIES = [
  'lib/protocols/registry.ts',
  'lib/server/protocols/registry.ts',
  'components/protocols/registry.tsx',
]
const perProtocol = (f: string) => /^protocols\/[^/]+\//.test(f)
/** The pure code: no I/O, no server, no pages. */
const pure = (f: string) => /^lib\/(protocols|tasks|llm|metrics)\//.test(f) || /^protocols\/[^/]+\/core\//.test(f)

describe('the layering rules', () => {
  it('no code under lib/server, lib/cli, app or components names a protocol id outside its folder and the registries', () => {
    const offenders: string[] = []
    const literal = new RegExp(`(['"\`])(${IDS.join('|')})\\1`)
    const moduleOf = new RegExp(`protocols/(${IDS.join('|')})(/|['"])`)
    for (const f of ALL) {
      if (!/^(lib\/server|lib\/cli|app|components)\//.test(f) && f !== 'instrumentation.ts') continue
      if (perProtocol(f) || REGISTRIES.includes(f)) continue
      const src = code(f)
      const hit = src.match(literal) ?? src.match(moduleOf)
      if (hit) offenders.push(`${f}: ${hit[0]}`)
    }
    expect(offenders).toEqual([])
  })

  it('no code under lib/server, app or components names a dataset kind outside the protocol folders', async () => {
    // The kinds are the plugins' (`datasets`): generic services and pages ask the plugins, so a
    // kind's name in them would be a branch on one protocol's data (as `kind === 'rad'` was).
    const ops = await Promise.all(Object.values(plugins).map((p) => p.ops?.()))
    const kinds = ops.flatMap((o) => Object.keys(o?.datasets ?? {}))
    expect(kinds.length).toBeGreaterThan(0)
    const literal = new RegExp(`(['"\`])(${kinds.join('|')})\\1`)
    const offenders: string[] = []
    for (const f of ALL) {
      if (!/^(lib\/server|app|components)\//.test(f) || perProtocol(f) || REGISTRIES.includes(f)) continue
      const hit = code(f).match(literal)
      if (hit) offenders.push(`${f}: ${hit[0]}`)
    }
    expect(offenders).toEqual([])
  })

  it("pure code (the protocols' cores, tasks, the LLM client) never imports the server, pages, components or a protocol's server or UI", () => {
    const offenders: string[] = []
    const pures = ALL.filter(pure)
    expect(pures.filter((f) => f.startsWith('protocols/')).length).toBeGreaterThan(0)
    for (const f of pures)
      for (const t of imports(f).map((s) => resolve(f, s)))
        if (t && /^(lib\/server|lib\/cli|app|components)\/|^protocols\/[^/]+\/(server|ui|tests)\//.test(t))
          offenders.push(`${f} → ${t}`)
    expect(offenders).toEqual([])
  })

  it('what the browser bundles through the protocol registry (every pure protocol) imports no Node built-in', () => {
    // lib/protocols/registry.ts reaches client components (forms, session views): a Node module there
    // fails `next build` ("does not support external modules"), which a unit test would not see.
    const seen = new Set<string>()
    const offenders: string[] = []
    const walk = (f: string) => {
      if (seen.has(f)) return
      seen.add(f)
      for (const spec of imports(f, { lazy: false })) {
        if (/^node:|^(fs|path|stream|child_process|crypto|os|net|http|https|zlib|worker_threads)(\/|$)/.test(spec))
          offenders.push(`${f} → ${spec}`)
        const t = resolve(f, spec)
        if (t) walk(t)
      }
    }
    walk('lib/protocols/registry.ts')
    expect(seen.size).toBeGreaterThan(10)
    expect(offenders).toEqual([])
  })

  it('components never touch the database: pages load their data through the operations', () => {
    const offenders = ALL.filter((f) => /^components\/|^protocols\/[^/]+\/ui\//.test(f)).flatMap((f) =>
      imports(f)
        .map((s) => resolve(f, s))
        .filter((t): t is string => !!t && /^lib\/(server\/db|generated\/prisma)/.test(t))
        .map((t) => `${f} → ${t}`),
    )
    expect(offenders).toEqual([])
  })

  it('the engine imports no service, no plugin and no registry (the entry points bind the plugins)', () => {
    const offenders: string[] = []
    for (const f of ALL.filter((x) => x.startsWith('lib/server/engine/'))) {
      for (const spec of imports(f)) {
        const to = resolve(f, spec) ?? ''
        if (/^lib\/server\/(services|protocols)\/|^lib\/protocols\/registry|^components\/|^app\/|^protocols\//.test(to))
          offenders.push(`${f} -> ${to}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('a plugin imports only the SDK, its own folder and the pure libraries (types included)', () => {
    const offenders: string[] = []
    for (const f of ALL) {
      const own = /^protocols\/([^/]+)\/server\//.exec(f)?.[1]
      if (!own) continue
      const specs = [...code(f).matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map(
        (m) => m[1] as string,
      )
      for (const spec of [...specs, ...imports(f)]) {
        const to = resolve(f, spec)
        if (!to) continue // a package or node: built-in
        const allowed =
          to === 'lib/server/sdk.ts' ||
          to.startsWith(`protocols/${own}/server/`) ||
          to.startsWith(`protocols/${own}/core/`) ||
          (to.startsWith('lib/') && !/^lib\/(server|cli|generated)\//.test(to))
        if (!allowed) offenders.push(`${f} -> ${to}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it("a plugin's entry loads only its runtime: a worker never loads its set-up, pages, exports, seed or operations", () => {
    // What a worker steps a session with is the plugin's entry and what it imports eagerly; every other
    // capability is a module the entry loads with import() on first use. None of those may be reachable
    // from the entry without it (it would then load in every worker).
    const entries = ALL.filter((f) => /^protocols\/[^/]+\/server\/plugin\.ts$/.test(f))
    expect(entries.length).toBeGreaterThan(0)
    for (const entry of entries) {
      const eager = new Set<string>()
      const walk = (f: string) => {
        if (eager.has(f)) return
        eager.add(f)
        for (const s of imports(f, { lazy: false })) {
          const t = resolve(f, s)
          if (t) walk(t)
        }
      }
      walk(entry)
      const lazy = [...code(entry).matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) =>
        resolve(entry, m[1] as string),
      )
      // Set-up, views, exports, seed and operations at least (modules may serve more than one).
      expect(new Set(lazy).size, entry).toBeGreaterThanOrEqual(4)
      expect(
        lazy.filter((l) => l && eager.has(l)),
        `${entry}: a lazily loaded capability reachable without import()`,
      ).toEqual([])
    }
  })

  it('an error class the SDK hands to plugins is cross-copy safe (a plugin throws it from its own bundle, the engine catches it)', () => {
    const sdk = readFileSync(path.join(ROOT, 'lib/server/sdk.ts'), 'utf8')
    const exported = new Set(sdk.match(/\b[A-Z]\w*\b/g) ?? [])
    const unsafe: string[] = []
    let checked = 0
    for (const f of files('lib')) {
      const text = readFileSync(path.join(ROOT, f), 'utf8')
      for (const m of text.matchAll(/export class (\w+) extends \w*Error\b/g)) {
        const name = m[1] as string
        if (!exported.has(name)) continue
        checked++
        if (!text.includes(`crossCopy(${name},`)) unsafe.push(`${f}: ${name}`)
      }
    }
    expect(checked).toBeGreaterThan(0)
    expect(unsafe).toEqual([])
  })

  it('has no import cycles', () => {
    const graph = new Map<string, string[]>()
    for (const f of ALL)
      graph.set(
        f,
        imports(f)
          .map((s) => resolve(f, s))
          .filter((x): x is string => !!x && x !== f),
      )
    // Tarjan's strongly connected components.
    let index = 0
    const idx = new Map<string, number>()
    const low = new Map<string, number>()
    const stack: string[] = []
    const on = new Set<string>()
    const cycles: string[][] = []
    const visit = (v: string) => {
      idx.set(v, index)
      low.set(v, index++)
      stack.push(v)
      on.add(v)
      for (const w of graph.get(v) ?? []) {
        if (!idx.has(w)) {
          visit(w)
          low.set(v, Math.min(low.get(v) as number, low.get(w) as number))
        } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number))
      }
      if (low.get(v) === idx.get(v)) {
        const scc: string[] = []
        for (;;) {
          const w = stack.pop() as string
          on.delete(w)
          scc.push(w)
          if (w === v) break
        }
        if (scc.length > 1) cycles.push(scc.sort())
      }
    }
    for (const v of graph.keys()) if (!idx.has(v)) visit(v)
    expect(cycles).toEqual([])
  })
})

describe('the repository', () => {
  it('tracks nothing that is installed or built (node_modules, .next, .data), not even as a link', () => {
    const git = spawnSync('git', ['ls-files', '-z'], { encoding: 'utf8' })
    // A copy without git (an unpacked archive) has nothing tracked to check.
    if (git.status !== 0) return
    const tracked = git.stdout.split('\0').filter(Boolean)
    expect(tracked.length).toBeGreaterThan(0)
    expect(tracked.filter((f) => /^(node_modules|\.next|\.data)(\/|$)/.test(f))).toEqual([])
  })
})
