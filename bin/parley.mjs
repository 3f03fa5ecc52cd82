#!/usr/bin/env node
// The `parley` command (npx parley --help). Runs the TypeScript CLI in lib/cli through tsx.
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { register } from 'tsx/esm/api'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
register({ tsconfig: path.join(root, 'tsconfig.json') })
const { main } = await import(pathToFileURL(path.join(root, 'lib/cli/index.ts')).href)
process.exitCode = await main(process.argv)
