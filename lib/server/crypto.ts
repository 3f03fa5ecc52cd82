import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/**
 * Secrets at rest (LLM API keys) are sealed with AES-256-GCM. The key comes from the environment:
 * PARLEY_ENCRYPTION_KEY (32 bytes as base64 or hex), or else derived from BETTER_AUTH_SECRET with
 * HKDF. Changing that secret makes stored keys unreadable (they must be entered again).
 * Format: "v1:<iv b64url>:<tag b64url>:<ciphertext b64url>".
 */
function key(): Buffer {
  const explicit = process.env.PARLEY_ENCRYPTION_KEY
  if (explicit) {
    const buf = /^[0-9a-f]{64}$/i.test(explicit) ? Buffer.from(explicit, 'hex') : Buffer.from(explicit, 'base64')
    if (buf.length !== 32) throw new Error('PARLEY_ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64).')
    return buf
  }
  const secret = process.env.BETTER_AUTH_SECRET
  if (!secret) throw new Error('Set BETTER_AUTH_SECRET (or PARLEY_ENCRYPTION_KEY) to store API keys.')
  return Buffer.from(hkdfSync('sha256', secret, 'parley', 'parley:secrets:v1', 32))
}

export function seal(plaintext: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key(), iv)
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':')
}

export class SecretUnreadableError extends Error {}

export function unseal(sealed: string): string {
  const [v, iv, tag, ct] = sealed.split(':')
  if (v !== 'v1' || !iv || !tag || ct === undefined)
    throw new SecretUnreadableError('Stored secret has an unknown format.')
  try {
    const decipher = createDecipheriv('aes-256-gcm', key(), Buffer.from(iv, 'base64url'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8')
  } catch {
    throw new SecretUnreadableError(
      'The stored API key cannot be decrypted (was the encryption secret changed?). Enter the key again.',
    )
  }
}

/** "sk-…abcd": enough to tell keys apart, useless to an attacker. */
export function maskSecret(last4: string | null | undefined): string {
  return last4 ? `…${last4}` : 'none'
}
