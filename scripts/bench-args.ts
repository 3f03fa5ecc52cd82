import { type ParseArgsConfig, parseArgs } from 'node:util'

/**
 * The command line of a bench: node's parseArgs (strict) with `--help` / `-h` added. `--help` prints
 * the usage and exits 0; an unknown or malformed option prints what is wrong and the usage and exits
 * 2, without a stack trace. Call it before anything that starts a database or a server.
 */
export function benchArgs<const O extends NonNullable<ParseArgsConfig['options']>>(usage: string, options: O) {
  let values: Record<string, unknown>
  try {
    values = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true }).values
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${usage.trim()}\n`)
    process.exit(2)
  }
  if (values.help) {
    process.stdout.write(`${usage.trim()}\n`)
    process.exit(0)
  }
  return values as ReturnType<typeof parseArgs<{ options: O; strict: true }>>['values']
}

/**
 * The parsed values checked and converted by a zod schema (numbers from their text, ranges): a value
 * the schema refuses prints which option and why, and the usage, and exits 2, as a malformed option does.
 */
export function checkedArgs<T>(
  usage: string,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: Issue[] } } },
  values: unknown,
): T {
  const r = schema.safeParse(values)
  if (r.success) return r.data
  const lines = r.error.issues.map((i) => `--${String(i.path[0] ?? '')}: ${i.message}`)
  process.stderr.write(`${lines.join('\n')}\n\n${usage.trim()}\n`)
  process.exit(2)
}
interface Issue {
  path: PropertyKey[]
  message: string
}
