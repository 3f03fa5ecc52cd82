import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'

/** What `next build` reads: a change to any of these makes the build stale. */
export const BUILD_SOURCES = ['app', 'components', 'lib', 'protocols', 'public']
export const BUILD_FILES = ['package.json', 'next.config.js', 'proxy.ts', 'instrumentation.ts', 'prisma/schema.prisma']

function newestMtime(dir) {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'generated' || entry.name.startsWith('.')) continue
    const p = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs)
  }
  return newest
}

/**
 * Whether `root`'s production build is missing or older than a source it was built from (the app, the
 * components, the libraries, every protocol's folder, public files, the configuration and the schema).
 */
export function buildIsStale(root) {
  const stamp = path.join(root, '.next', 'BUILD_ID')
  if (!existsSync(stamp)) return true
  const built = statSync(stamp).mtimeMs
  const sources = BUILD_SOURCES.map((d) => path.join(root, d)).filter(existsSync)
  const files = BUILD_FILES.map((f) => path.join(root, f)).filter(existsSync)
  return Math.max(0, ...sources.map(newestMtime), ...files.map((f) => statSync(f).mtimeMs)) > built
}
