#!/usr/bin/env node
// The `parley` command (npx parley --help). Runs the TypeScript CLI in lib/cli through tsx.
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { register } from 'tsx/esm/api'

// A reader that stops early (`parley rehac advantages big.jsonl | head`) closes the pipe: stop quietly,
// as Unix tools do, instead of crashing on EPIPE with a stack trace.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0)
  throw err
})
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
register({ tsconfig: path.join(root, 'tsconfig.json') })
const { main } = await import(pathToFileURL(path.join(root, 'lib/cli/index.ts')).href)
process.exitCode = await main(process.argv)
