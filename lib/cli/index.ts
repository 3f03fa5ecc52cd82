import { Command, CommanderError, InvalidArgumentError } from 'commander'
import { z } from 'zod'
import type { Actor } from '@/lib/server/actor'
import { ROLES } from '@/lib/server/auth/roles'
import { ensureDatabaseUrl } from '@/lib/cli/database'

/** The CLI acts with admin power (it has the database), recorded as "cli" in the audit log. */
export const CLI_ACTOR: Actor = { userId: '', email: 'cli', name: 'parley CLI', role: 'admin', via: 'cli' }

class CliError extends Error {}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}

export function buildProgram(out: (s: string) => void = (s) => process.stdout.write(`${s}\n`)) {
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
  return program
}

/** Runs the CLI; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv)
    return 0
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2
    process.stderr.write(`parley: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  } finally {
    const { db } = await import('@/lib/server/db')
    if (process.env.DATABASE_URL) await db.$disconnect().catch(() => {})
  }
}
