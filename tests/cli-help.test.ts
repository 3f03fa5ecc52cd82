import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { type Command, CommanderError } from 'commander'
import { describe, expect, it } from 'vitest'
import { buildProgram } from '@/lib/cli/index'
import { PROTOCOL_IDS } from '@/lib/protocols/registry'

/**
 * Every bench script and every `parley` command answers --help with its usage and exit code 0, and
 * ends by itself; a bench given an option it does not know says so, with its usage, and exits 2
 * (`npm run bench:pxp -- --help` used to end in a stack trace). No database is touched.
 */
const ROOT = path.resolve(import.meta.dirname, '..')
/** Every `bench:<name>` script package.json declares (a new bench cannot be left out). */
const BENCHES = Object.keys(
  (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
)
  .filter((name) => name.startsWith('bench:'))
  .map((name) => name.slice('bench:'.length))

const run = (args: string[]) =>
  spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env } })

describe('bench scripts', () => {
  for (const bench of BENCHES) {
    it(`bench:${bench} --help prints its usage and exits 0; an unknown option exits 2 without a stack trace`, () => {
      const script = path.join(ROOT, `scripts/bench-${bench}.ts`)
      const help = run(['--import', 'tsx', script, '--help'])
      expect(help.status).toBe(0)
      expect(help.stdout).toMatch(new RegExp(`^Usage: npm run bench:${bench} -- \\[options\\]`))
      expect(help.stdout).toContain('-h, --help')
      const wrong = run(['--import', 'tsx', script, '--no-such-option'])
      expect(wrong.status).toBe(2)
      expect(wrong.stderr).toMatch(/Unknown option '--no-such-option'/)
      expect(wrong.stderr).toContain(`Usage: npm run bench:${bench}`)
      expect(wrong.stderr).not.toMatch(/\n\s+at /)
    }, 60_000)
  }
})

/** The CLI as built for a run (protocol commands are found from their folders, asynchronously). */
const built = await buildProgram(() => {})

describe('parley commands', () => {
  /** Every command path of the CLI: ['db', 'migrate'], ['worker'] … */
  const paths = (cmd: Command, prefix: string[] = []): string[][] =>
    cmd.commands.flatMap((c) => {
      const here = [...prefix, c.name()]
      return c.commands.length ? [here, ...paths(c, here)] : [here]
    })
  const all = paths(built)

  it('knows its commands', () => {
    expect(all.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining(['worker', 'config check', 'connection create', 'connection set-limits', 'db migrate']),
    )
  })

  it("finds each protocol's commands in its folder (protocols/<id>/server/cli.ts), with no list to keep", () => {
    const withCli = PROTOCOL_IDS.filter((id) => existsSync(path.join(ROOT, 'protocols', id, 'server', 'cli.ts')))
    expect(withCli).toEqual(['pxp', 'evince', 'scorekeeping', 'rehac', 'mint'])
    for (const id of withCli)
      expect(
        all.map((p) => p.join(' ')),
        id,
      ).toContain(id)
    expect(all.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining([
        'pxp stats',
        'pxp import-tags',
        'pxp export',
        'evince metrics',
        'scorekeeping replay',
        'rehac advantages',
        'rehac eval',
        'mint sr',
      ]),
    )
  })

  for (const command of [[], ...all]) {
    it(`parley ${command.join(' ')} --help prints its usage with exit code 0`, async () => {
      let printed = ''
      const program = await buildProgram((s) => {
        printed += `${s}\n`
      })
      const err = await program.parseAsync(['node', 'parley', ...command, '--help']).then(
        () => null,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(CommanderError)
      expect((err as CommanderError).exitCode).toBe(0)
      expect(printed).toMatch(new RegExp(`^Usage: parley${command.length ? ` ${command.join(' ')}` : ''}`))
    })
  }

  it('and the process ends by itself (a command that would start a worker or reach a database)', () => {
    for (const command of [['--help'], ['worker', '--help'], ['connection', 'create', '--help']]) {
      const r = run([path.join(ROOT, 'bin/parley.mjs'), ...command])
      expect(r.status, command.join(' ')).toBe(0)
      expect(r.stdout).toContain('Usage: parley')
    }
  }, 60_000)
})
