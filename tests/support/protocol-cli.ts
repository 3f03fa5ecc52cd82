import { Command, CommanderError } from 'commander'
import { CliError, type CliTools, type ProtocolCli, readJsonFile, readLines, wholeNumber } from '@/lib/cli/tools'

/**
 * Runs a protocol's CLI module in this process, as `parley <id> …` would (commander with the module's
 * commands; no database tools): its output, and the exit status bin/parley.mjs would give (usage error
 * 2, a refusal 1 as "parley: <message>").
 */
export async function runProtocolCli(
  id: string,
  cli: ProtocolCli,
  args: string[],
): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const program = new Command()
    .name('parley')
    .exitOverride()
    .configureOutput({ writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) })
  const tools: CliTools = {
    out: (s) => (stdout += `${s}\n`),
    readLines,
    readJsonFile,
    wholeNumber,
    CliError,
    runHeadless: () => Promise.reject(new Error(`not used by ${id}`)),
    exportTable: () => Promise.reject(new Error(`not used by ${id}`)),
  }
  cli.commands(program.command(id).description(cli.description), tools)
  try {
    await program.parseAsync(args, { from: 'user' })
    return { status: 0, stdout, stderr }
  } catch (err) {
    if (err instanceof CommanderError) return { status: err.exitCode === 0 ? 0 : 2, stdout, stderr }
    return { status: 1, stdout, stderr: `${stderr}parley: ${err instanceof Error ? err.message : String(err)}\n` }
  }
}
