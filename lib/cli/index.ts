import { existsSync } from 'node:fs'
import path from 'node:path'
import { Command, CommanderError, InvalidArgumentError } from 'commander'
import { z } from 'zod'
import type { Actor } from '@/lib/server/actor'
import { ROLES } from '@/lib/server/auth/roles'
import { agreementCommands } from '@/lib/cli/agreement'
import { ensureDatabaseUrl, ensureSecret } from '@/lib/cli/database'
import {
  CliError,
  type CliTools,
  type ProtocolCli,
  readJsonFile,
  readLines,
  readStdin,
  wholeNumber,
} from '@/lib/cli/tools'
import { PROTOCOL_IDS } from '@/lib/protocols/registry'
// The composition root of `parley` (the worker among its commands): the protocol plugins are bound here.
import '@/lib/server/protocols/bind'

/** The CLI acts with admin power (it has the database), recorded as "cli" in the audit log. */
export const CLI_ACTOR: Actor = { userId: '', email: 'cli', name: 'parley CLI', role: 'admin', via: 'cli' }

/**
 * The protocols' command modules, found from their ids (lib/protocols/registry.ts): a protocol with
 * commands has `protocols/<id>/server/cli.ts` exporting `cli` (a ProtocolCli). Loaded once; they
 * import their heavy parts only when a command of theirs runs.
 */
async function loadProtocolClis(): Promise<Array<{ id: string; cli: ProtocolCli }>> {
  const found: Array<{ id: string; cli: ProtocolCli }> = []
  for (const id of PROTOCOL_IDS) {
    if (!existsSync(path.join(import.meta.dirname, '../../protocols', id, 'server', 'cli.ts'))) continue
    const m = (await import(`../../protocols/${id}/server/cli.ts`)) as { cli?: ProtocolCli }
    if (!m.cli) throw new Error(`protocols/${id}/server/cli.ts exports no \`cli\``)
    found.push({ id, cli: m.cli })
  }
  return found
}

export async function buildProgram(out: (s: string) => void = (s) => process.stdout.write(`${s}\n`)) {
  const protocolClis = await loadProtocolClis()
  const program = new Command()
  program
    .name('parley')
    .description('Parley from the command line. Uses DATABASE_URL, or the embedded PostgreSQL when it is not set.')
    .exitOverride()
    .configureOutput({ writeOut: (s) => out(s.trimEnd()), writeErr: (s) => process.stderr.write(s) })

  const dbCmd = program.command('db').description('Database tasks')
  dbCmd
    .command('migrate')
    .description('Apply pending migrations (prisma/migrations) with the WebAssembly schema engine')
    .action(async () => {
      await ensureDatabaseUrl(async () => {
        const { deploy } = await import('../../scripts/migrate.mjs')
        const applied: string[] = await deploy([], { quiet: true })
        out(applied.length ? `Applied ${applied.join(', ')}` : 'Already up to date.')
      })
    })
  dbCmd
    .command('seed')
    .description('Create the demo study and one demo user per role (idempotent)')
    .action(async () => {
      await ensureDatabaseUrl(async () => {
        const { seedDemo } = await import('@/lib/server/seed')
        const { created } = await seedDemo()
        out(created.length ? `Seeded: ${created.join(', ')}` : 'Demo data already present; nothing changed.')
      })
    })
  dbCmd
    .command('export')
    .argument('<file>', 'where to write it (.gz to compress; - for stdout)')
    .description(
      "Export Parley's data (every study, run, message, call and image) as SQL without pg_dump, e.g. from the embedded database",
    )
    .action(async (file: string) => {
      await ensureDatabaseUrl(async () => {
        const { exportDatabase } = await import('@/lib/server/backup')
        const counts = await exportDatabase(process.env.DATABASE_URL as string, file)
        const rows = Object.values(counts).reduce((a, b) => a + b, 0)
        process.stderr.write(`Exported ${rows} rows of ${Object.keys(counts).length} tables to ${file}\n`)
      })
    })
  dbCmd
    .command('import')
    .argument('<file>', 'a file written by `parley db export` (.gz is decompressed; - for stdin)')
    .description('Load an export into a fresh database (run `parley db migrate` on it first); running runs continue')
    .action(async (file: string) => {
      await ensureDatabaseUrl(async () => {
        const { importDatabase } = await import('@/lib/server/backup')
        const counts = await importDatabase(process.env.DATABASE_URL as string, file)
        // The job queue is not in the export: the running runs' waiting sessions are queued again.
        const { db } = await import('@/lib/server/db')
        const { admitSessions } = await import('@/lib/server/engine/step-queue')
        const { stopBoss } = await import('@/lib/server/jobs/queue')
        const running = await db.run.findMany({ where: { status: 'running' }, select: { id: true } })
        let queued = 0
        for (const r of running) {
          queued += await admitSessions(r.id)
        }
        if (running.length) await stopBoss()
        const rows = Object.values(counts).reduce((a, b) => a + b, 0)
        out(
          `Imported ${rows} rows of ${Object.keys(counts).length} tables; queued ${queued} sessions of ${running.length} running runs.`,
        )
      })
    })

  program
    .command('config')
    .description('Configuration')
    .command('check')
    .description(
      'Check the settings in the environment (and .env) as every Parley process does when it starts; exits 1 naming each bad variable',
    )
    .action(async () => {
      try {
        process.loadEnvFile()
      } catch {}
      const { parseConfig } = await import('@/lib/server/config')
      parseConfig()
      out('The configuration is valid.')
    })

  const user = program.command('user').description('Manage accounts')
  user
    .command('create')
    .description('Create an account')
    .requiredOption('--email <email>', 'email address (the sign-in name)')
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`, (v) => {
      if (!(ROLES as readonly string[]).includes(v))
        throw new InvalidArgumentError(`must be one of ${ROLES.join(', ')}`)
      return v
    })
    .option('--name <name>', 'display name (defaults to the part of the email before @)')
    .option('--password <password>', 'initial password (or use --password-stdin)')
    .option('--password-stdin', 'read the password from standard input')
    .action(
      async (opts: { email: string; role: string; name?: string; password?: string; passwordStdin?: boolean }) => {
        const password = opts.passwordStdin ? await readStdin() : opts.password
        if (!password) throw new CliError('Give a password with --password or --password-stdin.')
        await ensureDatabaseUrl(async () => {
          const { execute } = await import('@/lib/server/operation')
          const { createUser } = await import('@/lib/server/services/users')
          const r = await execute(createUser, CLI_ACTOR, {
            email: opts.email,
            role: opts.role,
            name: opts.name ?? opts.email.split('@')[0],
            password,
          })
          if (!r.ok) throw new CliError(r.error)
          out(`Created ${r.data.email} (${r.data.role}).`)
        })
      },
    )
  user
    .command('list')
    .description('List accounts')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await ensureDatabaseUrl(async () => {
        const { db } = await import('@/lib/server/db')
        const users = await db.user.findMany({
          select: { email: true, name: true, role: true, disabled: true },
          orderBy: { email: 'asc' },
        })
        if (opts.json) out(JSON.stringify(users))
        else
          for (const u of users)
            out(`${u.email.padEnd(32)} ${u.role.padEnd(11)} ${u.disabled ? 'disabled ' : ''}${u.name}`)
      })
    })
  user
    .command('set-role')
    .description("Change an account's role")
    .argument('<email>')
    .argument('<role>')
    .action(async (emailArg: string, role: string) => {
      await ensureDatabaseUrl(async () => {
        const { db } = await import('@/lib/server/db')
        const { execute } = await import('@/lib/server/operation')
        const { updateUserRole } = await import('@/lib/server/services/users')
        const email = z.string().trim().toLowerCase().parse(emailArg)
        const target = await db.user.findUnique({ where: { email } })
        if (!target) throw new CliError(`No account has the email ${email}.`)
        const r = await execute(updateUserRole, CLI_ACTOR, { userId: target.id, role })
        if (!r.ok) throw new CliError(r.error)
        out(`${r.data.email} is now ${r.data.role}.`)
      })
    })
  user
    .command('reset-password')
    .description(
      "Reset someone's password: set a new one (--password-stdin) or print a one-time reset link (valid 24 hours). Either way they are signed out everywhere and their API keys revoked.",
    )
    .argument('<email>')
    .option('--password <password>', 'the new password (or use --password-stdin)')
    .option('--password-stdin', 'read the new password from standard input')
    .option('--link', 'print a one-time reset link instead (BETTER_AUTH_URL, else http://127.0.0.1:PORT)')
    .action(async (emailArg: string, opts: { password?: string; passwordStdin?: boolean; link?: boolean }) => {
      const password = opts.passwordStdin ? await readStdin() : opts.password
      if (!password && !opts.link) throw new CliError('Give --password, --password-stdin or --link.')
      if (password && opts.link) throw new CliError('Give either a password or --link, not both.')
      await ensureDatabaseUrl(async () => {
        const { db } = await import('@/lib/server/db')
        const { execute } = await import('@/lib/server/operation')
        const { issueResetLink, setUserPassword } = await import('@/lib/server/services/users')
        const email = z.string().trim().toLowerCase().parse(emailArg)
        const target = await db.user.findUnique({ where: { email } })
        if (!target) throw new CliError(`No account has the email ${email}.`)
        if (password) {
          const r = await execute(setUserPassword, CLI_ACTOR, { userId: target.id, password })
          if (!r.ok) throw new CliError(r.error)
          out(
            `New password set for ${r.data.email}; signed out of ${r.data.signedOutSessions} session(s), ${r.data.revokedApiKeys} API key(s) revoked.`,
          )
        } else {
          const r = await execute(issueResetLink, CLI_ACTOR, { userId: target.id })
          if (!r.ok) throw new CliError(r.error)
          const origin = (process.env.BETTER_AUTH_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`).replace(
            /\/+$/,
            '',
          )
          out(`${origin}${r.data.path}`)
        }
      })
    })
  const connection = program
    .command('connection')
    .description('LLM connections and their limits (the same operations as the Models page; the CLI acts as an admin)')
  /** A connection as the CLI prints it: the key masked, never the key. */
  const connectionLine = (c: {
    id: string
    name: string
    provider: string
    baseUrl: string
    defaultModel: string
    apiKeyMasked: string
    maxConcurrency: number
    requestsPerMinute: number | null
    tokensPerMinute: number | null
    timeoutMs: number
    study: { name: string } | null
  }) =>
    [
      c.id,
      c.name,
      `${c.provider} ${c.baseUrl} (${c.defaultModel})`,
      `key ${c.apiKeyMasked}`,
      `${c.maxConcurrency} at once, ${c.requestsPerMinute ?? 'unlimited'} req/min, ${c.tokensPerMinute ?? 'unlimited'} tokens/min, timeout ${c.timeoutMs} ms`,
      c.study ? `study ${c.study.name}` : 'global',
    ].join('  ')
  /** A limit from the command line: a whole number, or "none" to remove it. */
  const limitArg = (v: string) => (/^(none|off|unlimited)$/i.test(v) ? null : v)
  /** The API key from standard input or an environment variable: never from the command line (ps, history). */
  const apiKeyFrom = async (opts: { apiKeyStdin?: boolean; apiKeyEnv?: string }) => {
    if (opts.apiKeyStdin && opts.apiKeyEnv) throw new CliError('Give --api-key-stdin or --api-key-env, not both.')
    if (opts.apiKeyStdin) return (await readStdin()).trim() || undefined
    if (opts.apiKeyEnv) {
      const key = process.env[opts.apiKeyEnv]
      if (!key) throw new CliError(`The environment variable ${opts.apiKeyEnv} (--api-key-env) is not set.`)
      return key
    }
    return undefined
  }
  connection
    .command('list')
    .description('List the connections (global and of every study), keys masked')
    .option('--study <studyId>', "only this study's connections and the global ones")
    .option('--json', 'print JSON')
    .action(async (opts: { study?: string; json?: boolean }) => {
      await ensureDatabaseUrl(async () => {
        const { execute } = await import('@/lib/server/operation')
        const { listConnections } = await import('@/lib/server/services/connections')
        const r = await execute(listConnections, CLI_ACTOR, { studyId: opts.study })
        if (!r.ok) throw new CliError(r.error)
        if (opts.json) out(JSON.stringify(r.data))
        else for (const c of r.data) out(connectionLine(c))
      })
    })
  connection
    .command('create')
    .description('Add a connection to an OpenAI-compatible endpoint, with its limits; prints it with the key masked')
    .requiredOption('--name <name>', 'what people see')
    .requiredOption('--provider <provider>', 'openai, azure, openai-compatible or demo')
    .requiredOption('--model <model>', 'the default model')
    .option('--base-url <url>', 'e.g. http://vllm.lab.internal:8000/v1 (OpenAI: https://api.openai.com/v1 by default)')
    .option('--study <studyId>', 'the study it belongs to (default: global, for every study)')
    .option('--api-key-stdin', 'read the API key from standard input')
    .option('--api-key-env <name>', 'read the API key from this environment variable')
    .option('--api-version <version>', 'Azure: the API version')
    .option(
      '--headers <json>',
      'extra headers as a JSON object, e.g. \'{"X-Team": "radiology"}\' (values stored encrypted)',
    )
    .option('--timeout-ms <ms>', 'request timeout (default 60000)')
    .option('--max-concurrency <n>', 'calls at once across every process (default 4)')
    .option('--rpm <n>', 'requests per minute (default: no limit)')
    .option('--tpm <n>', 'tokens per minute (default: no limit)')
    .option('--json', 'print JSON')
    .action(
      async (opts: {
        name: string
        provider: string
        model: string
        baseUrl?: string
        study?: string
        apiKeyStdin?: boolean
        apiKeyEnv?: string
        apiVersion?: string
        headers?: string
        timeoutMs?: string
        maxConcurrency?: string
        rpm?: string
        tpm?: string
        json?: boolean
      }) => {
        const apiKey = await apiKeyFrom(opts)
        await ensureSecret()
        await ensureDatabaseUrl(async () => {
          const { execute } = await import('@/lib/server/operation')
          const { createConnection } = await import('@/lib/server/services/connections')
          const r = await execute(createConnection, CLI_ACTOR, {
            name: opts.name,
            provider: opts.provider,
            defaultModel: opts.model,
            baseUrl: opts.baseUrl,
            studyId: opts.study,
            apiKey,
            apiVersion: opts.apiVersion,
            extraHeaders: opts.headers,
            timeoutMs: opts.timeoutMs,
            maxConcurrency: opts.maxConcurrency,
            requestsPerMinute: opts.rpm,
            tokensPerMinute: opts.tpm,
          })
          if (!r.ok) throw new CliError(r.error)
          out(opts.json ? JSON.stringify(r.data) : `Created ${connectionLine(r.data)}`)
        })
      },
    )
  connection
    .command('set-limits')
    .description('Set a connection\'s limits (they hold across every process); "none" removes a per-minute limit')
    .argument('<connectionId>')
    .option('--max-concurrency <n>', 'calls at once')
    .option('--rpm <n|none>', 'requests per minute', limitArg)
    .option('--tpm <n|none>', 'tokens per minute', limitArg)
    .option('--timeout-ms <ms>', 'request timeout')
    .option('--json', 'print JSON')
    .action(
      async (
        connectionId: string,
        opts: { maxConcurrency?: string; rpm?: string | null; tpm?: string | null; timeoutMs?: string; json?: boolean },
      ) => {
        if ([opts.maxConcurrency, opts.rpm, opts.tpm, opts.timeoutMs].every((v) => v === undefined))
          throw new CliError('Give at least one of --max-concurrency, --rpm, --tpm, --timeout-ms.')
        await ensureDatabaseUrl(async () => {
          const { execute } = await import('@/lib/server/operation')
          const { updateConnection } = await import('@/lib/server/services/connections')
          const r = await execute(updateConnection, CLI_ACTOR, {
            connectionId,
            maxConcurrency: opts.maxConcurrency,
            requestsPerMinute: opts.rpm,
            tokensPerMinute: opts.tpm,
            timeoutMs: opts.timeoutMs,
          })
          if (!r.ok) throw new CliError(r.error)
          out(opts.json ? JSON.stringify(r.data) : `Updated ${connectionLine(r.data)}`)
        })
      },
    )
  /** Runs a run's sessions in this process (no queue) and prints the progress, for any protocol. */
  const runHeadlessCommand = async (id: string, concurrency: number) => {
    await ensureSecret()
    await ensureDatabaseUrl(async () => {
      const { db } = await import('@/lib/server/db')
      const { runHeadless } = await import('@/lib/server/engine/headless')
      if (!(await db.run.findUnique({ where: { id } }))) throw new CliError(`No run has the id ${id}.`)
      const tty = process.stderr.isTTY
      const p = await runHeadless(id, {
        concurrency,
        onProgress: (x) => {
          const width = 30
          const filled = Math.round((x.done / Math.max(1, x.total)) * width)
          const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${x.done}/${x.total} done, ${x.stalled} stalled, ${x.awaiting} awaiting`
          process.stderr.write(tty ? `\r${line}` : `${line}\n`)
        },
      })
      if (tty) process.stderr.write('\n')
      out(JSON.stringify(p))
      if (p.stalled) throw new CliError(`${p.stalled} session(s) stalled; fix the cause and run again to resume them.`)
    })
  }
  const runsCmd = program.command('runs').description('Runs of every protocol')
  runsCmd
    .command('create')
    .description('Create a run of any protocol from the one create-run body (the same JSON as POST /api/v1/runs)')
    .argument('<run.json>', 'the body ("-" reads standard input)')
    .option('--start', 'start it at once (default: a draft)')
    .option('--json', 'print the created run as JSON')
    .addHelpText(
      'after',
      `
The body: {"studyId", "protocol", "name", "datasetId", "seats": {<seat>: <fill> | [<fill>, …]},
"config"?: {…}, "options"?: {…}, "repetitions"?, "sample"?, "instanceIds"?, "shuffle"?, "maxInFlight"?,
"distinctClaimants"?, "fillFirst"?}. A fill is {"kind": "llm", "model": {"connectionId", "model"?,
"temperature"?}, "helpers"?: {<helper>: {"connectionId", …}}}, {"kind": "human", "userId"} or
{"kind": "human", "claimable": true}, {"kind": "proxy", "helpers"?}, {"kind": "program", "program",
"params"?}; a list of fills is taken round robin by the sessions. A seat only one program fills may be
left out. Every problem is printed with the field it concerns (seats.<seat>, config.<key> …), exit 1.`,
    )
    .action(async (file: string, opts: { start?: boolean; json?: boolean }) => {
      const body = await readJsonFile(file)
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new CliError(`${file} is not a JSON object.`)
      await ensureDatabaseUrl(async () => {
        const { execute } = await import('@/lib/server/operation')
        const { createRun } = await import('@/lib/server/services/runs')
        const r = await execute(createRun, CLI_ACTOR, { ...body, ...(opts.start ? { start: true } : {}) })
        if (!r.ok) {
          const fields = Object.entries(r.fieldErrors ?? {}).map(([k, msgs]) => `  ${k}: ${msgs.join(' ')}`)
          throw new CliError([r.error, ...fields].join('\n'))
        }
        if (opts.json) out(JSON.stringify(r.data))
        else
          out(
            `Created run ${r.data.id} (${r.data.protocol}) with ${r.data.sessions} session${r.data.sessions === 1 ? '' : 's'}${r.data.started ? ', started' : ''}.`,
          )
      })
    })
  runsCmd
    .command('import')
    .description(
      'Import a file of finished sessions as a run (status done, marked imported) of a kind a protocol declares; every message is checked by the protocol, a refused line fails the whole import and nothing is stored',
    )
    .argument('<file>', 'the file of sessions')
    .requiredOption('--study <studyId>', 'the study to import into')
    .requiredOption('--kind <kind>', 'the kind of file (the protocols declare them; an unknown one lists them)')
    .option('--name <name>', 'the run’s name (default: the file name)')
    .option('--option <key=value...>', 'the kind’s own options, e.g. --option questions=qa')
    .option('--json', 'print the result as JSON')
    .action(
      async (file: string, opts: { study: string; kind: string; name?: string; option?: string[]; json?: boolean }) => {
        const { readFile } = await import('node:fs/promises')
        const path = await import('node:path')
        const options: Record<string, string> = {}
        for (const o of opts.option ?? []) {
          const at = o.indexOf('=')
          if (at < 1) throw new CliError(`--option ${o}: write key=value.`)
          options[o.slice(0, at)] = o.slice(at + 1)
        }
        const name = path.basename(file)
        const bytes = await readFile(file).catch(() => {
          throw new CliError(`Cannot read ${file}.`)
        })
        await ensureDatabaseUrl(async () => {
          const { execute } = await import('@/lib/server/operation')
          const { importRun } = await import('@/lib/server/services/session-import')
          const r = await execute(importRun, CLI_ACTOR, {
            ...options,
            studyId: opts.study,
            kind: opts.kind,
            name: opts.name ?? name,
            file: new File([bytes], name),
          })
          if (!r.ok) {
            const fields = Object.entries(r.fieldErrors ?? {}).map(([k, msgs]) => `  ${k}: ${msgs.join(' ')}`)
            throw new CliError([r.error, ...fields].join('\n'))
          }
          if (opts.json) out(JSON.stringify(r.data))
          else out(`Imported run ${r.data.runId}: ${r.data.sessions} sessions, ${r.data.messages} messages.`)
        })
      },
    )
  program
    .command('run')
    .description("Run a run's sessions (any protocol) headless until each is done, stalled or waiting for a person")
    .argument('<runId>', 'the run id')
    .option('--concurrency <n>', 'sessions (or chains of carried-over sessions) at once', wholeNumber, 4)
    .action((runId: string, opts: { concurrency: number }) => runHeadlessCommand(runId, opts.concurrency))
  // Each protocol's own commands (statistics from files …), from its folder: protocols/<id>/server/cli.ts.
  const tools: CliTools = {
    out,
    readLines,
    readJsonFile,
    wholeNumber,
    CliError,
    runHeadless: runHeadlessCommand,
    exportTable: (runId, table) =>
      ensureDatabaseUrl(async () => {
        const { runTableLines } = await import('@/lib/server/services/run-export')
        for await (const line of runTableLines(runId, table, 'jsonl')) out(line)
      }),
  }
  // Agreement statistics of label files (gold vs model, many raters, rankings); no database.
  agreementCommands(
    program
      .command('agreement')
      .description(
        "Agreement of labels and rankings from files: Cohen's and Fleiss' κ, Krippendorff's α, RBO, τ (no database)",
      ),
    tools,
  )
  for (const { id, cli } of protocolClis) cli.commands(program.command(id).description(cli.description), tools)
  program
    .command('worker')
    .description(
      'Work the job queues (experiment steps, dataset imports, session creation) until stopped with Ctrl+C or SIGTERM; run several anywhere',
    )
    .option('--concurrency <n>', 'steps at once in this process', wholeNumber)
    .action(async (opts: { concurrency?: number }) => {
      process.env.PARLEY_PROCESS = 'worker'
      // A bad setting refuses to start, naming the variable (the message is the error's).
      const { config } = await import('@/lib/server/config')
      config()
      await ensureSecret()
      await ensureDatabaseUrl(async () => {
        const { startWorkers } = await import('@/lib/server/engine/jobs')
        const { jobSettings } = await import('@/lib/server/jobs/queue')
        const { log } = await import('@/lib/server/log')
        const { installShutdown, onShutdown, startHeartbeat, shutdown, surviveDatabaseOutages } = await import(
          '@/lib/server/processes'
        )
        surviveDatabaseOutages()
        const { sealLegacyHeaders } = await import('@/lib/server/llm/header-secrets')
        const { installMetrics } = await import('@/lib/server/metrics')
        const { startWorkerHealth } = await import('@/lib/server/worker-health')
        installMetrics()
        const sealed = await sealLegacyHeaders()
        if (sealed) log().info({ connections: sealed }, 'encrypted the stored extra headers')
        const count = opts.concurrency ?? jobSettings().workers
        const { startBulkWorkers } = await import('@/lib/server/jobs/bulk')
        const stopped = new Promise<void>((resolve) => onShutdown('signal', resolve))
        installShutdown({ graceMs: 0, exitCode: 0 })
        const workers = await startWorkers(count)
        const bulk = await startBulkWorkers()
        onShutdown('job workers', async () => {
          await Promise.all([workers.stop(), bulk.stop()])
        })
        await startHeartbeat('worker')
        const health = await startWorkerHealth(config().PARLEY_WORKER_HEALTH_PORT)
        log().info({ workers: count, healthPort: health?.port }, 'parley worker started; stop with Ctrl+C or SIGTERM')
        await stopped
        // /health answers 503 ("draining") until the steps in flight are handed back, then closes.
        await shutdown()
        await health?.close()
      })
    })
  return program
}

/** Runs the CLI; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function main(argv: string[]): Promise<number> {
  try {
    await (await buildProgram()).parseAsync(argv)
    return 0
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2
    process.stderr.write(`parley: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  } finally {
    // Only a command that used the database created a client (see lib/server/db.ts); the file
    // commands (statistics, metrics, replays) never do, so they do not load Prisma at all. A command that queued jobs or played the
    // demo model (the demo seed does both) started the queue and the demo server: stop them, or they
    // keep the process alive after the command is done.
    const { releaseProcessResources } = await import('@/lib/server/release')
    await releaseProcessResources()
  }
}
