// The one place that decides which secret a Parley process uses. BETTER_AUTH_SECRET signs session
// cookies and, through HKDF, encrypts stored LLM API keys (unless PARLEY_ENCRYPTION_KEY is set).
// `npm start` keeps it in <data dir>/auth-secret when it is not in the environment; every other
// process (`parley worker`, `parley pxp run`) must find the same secret there, or it cannot decrypt
// the keys the web server stored.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** Parley's data folder: PARLEY_DATA_DIR, or .data in the project. */
export function dataDir(env = process.env) {
  return env.PARLEY_DATA_DIR ? path.resolve(env.PARLEY_DATA_DIR) : path.join(ROOT, '.data')
}

/** Where `npm start` keeps the generated secret. */
export function secretFile(env = process.env) {
  return path.join(dataDir(env), 'auth-secret')
}

/**
 * Set env.BETTER_AUTH_SECRET the way every Parley process does: keep it when it is set, else read
 * <data dir>/auth-secret, else (only with `create`, as `npm start` does) write a new random one
 * there. Returns where the secret came from: 'env', 'file', 'created', or undefined for none.
 */
export function loadAuthSecret(env = process.env, { create = false } = {}) {
  if (env.BETTER_AUTH_SECRET) return 'env'
  const file = secretFile(env)
  if (existsSync(file)) {
    const secret = readFileSync(file, 'utf8').trim()
    if (secret) {
      env.BETTER_AUTH_SECRET = secret
      return 'file'
    }
  }
  if (!create) return undefined
  mkdirSync(path.dirname(file), { recursive: true })
  const secret = randomBytes(32).toString('base64url')
  writeFileSync(file, `${secret}\n`, { mode: 0o600 })
  env.BETTER_AUTH_SECRET = secret
  return 'created'
}

/**
 * For processes that decrypt stored API keys but must not invent a secret (a new one could not
 * read what the web server stored): load it as above, or throw an error that says what to set.
 */
export function requireEncryptionSecret(env = process.env) {
  const source = loadAuthSecret(env)
  if (source || env.PARLEY_ENCRYPTION_KEY) return
  throw new Error(
    `No secret to decrypt stored API keys: set BETTER_AUTH_SECRET (or PARLEY_ENCRYPTION_KEY) to the web server's value, ` +
      `or point PARLEY_DATA_DIR at the data folder whose auth-secret \`npm start\` created (looked for ${secretFile(env)}).`,
  )
}
