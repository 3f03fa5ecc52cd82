import { existsSync } from 'node:fs'
import path from 'node:path'

/**
 * The path of a file of this protocol's folder (protocols/mint/…): the prompts, the sandbox's driver.
 * Beside the sources when they run as they are (tsx: tests, the CLI from any directory); in the
 * Next.js server bundle `import.meta` points into .next, so there it is the project's folder, which
 * `npm start` runs in (as the other protocols' demo files are read).
 */
export function mintFile(...parts: string[]): string {
  const here = typeof import.meta.dirname === 'string' ? path.resolve(import.meta.dirname, '..') : null
  const base =
    here && existsSync(path.join(here, 'core', 'prompts')) ? here : path.join(process.cwd(), 'protocols', 'mint')
  return path.join(base, ...parts)
}
