import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { type Command, InvalidArgumentError } from 'commander'

/** A failure the CLI reports as `parley: <message>` with exit code 1 (no stack trace). */
export class CliError extends Error {}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}

/** The lines of a file ("-" for standard input), streamed. */
export async function* readLines(file: string): AsyncGenerator<string> {
  const input = file === '-' ? process.stdin : createReadStream(file, { encoding: 'utf8' })
  try {
    yield* createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
  } catch (e) {
    // only the stream's own errors land here (ENOENT, EISDIR, EACCES …), not the consumer's
    throw new CliError(`Cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** A whole JSON file ("-" reads standard input); a parse error names the file. */
export async function readJsonFile(file: string): Promise<unknown> {
  let text = ''
  for await (const l of readLines(file)) text += `${l}\n`
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new CliError(`${file} is not JSON: ${(e as Error).message}`)
  }
}

/** Commander's parser of a whole-number option (repetitions, concurrency …). */
export function wholeNumber(v: string): number {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a whole number ≥ 0')
  return Number(v)
}

/**
 * What the host gives a protocol's commands (`parley <protocol> …`): output, file reading, errors,
 * and the generic run tasks they may offer under their own name. A protocol's commands live in its
 * folder (`protocols/<id>/server/cli.ts`) and are found from its id; they never import the CLI.
 */
export interface CliTools {
  out(line: string): void
  readLines(file: string): AsyncGenerator<string>
  readJsonFile(file: string): Promise<unknown>
  wholeNumber(v: string): number
  CliError: typeof CliError
  /** Runs a run's sessions in this process (no queue), printing the progress (`parley run <id>`). */
  runHeadless(runId: string, concurrency: number): Promise<void>
  /** Streams a generic table of a run (D, M or C) as JSON Lines, one line per row (uses the database). */
  exportTable(runId: string, table: 'd' | 'm' | 'c'): Promise<void>
}

/** A protocol's CLI module: a description of `parley <id>` and the commands it adds under it. */
export interface ProtocolCli {
  description: string
  commands(cmd: Command, tools: CliTools): void
}
