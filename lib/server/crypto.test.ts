import { describe, expect, it } from 'vitest'
import { SecretUnreadableError, seal, unseal } from './crypto'

describe('secret sealing', () => {
  it('round-trips, uses a fresh IV each time, and never contains the plaintext', () => {
    process.env.BETTER_AUTH_SECRET = 'unit-test-secret-unit-test-secret-0123'
    const a = seal('sk-live-abcdef123456')
    const b = seal('sk-live-abcdef123456')
    expect(a).not.toBe(b)
    expect(a).not.toContain('abcdef')
    expect(unseal(a)).toBe('sk-live-abcdef123456')
    expect(unseal(b)).toBe('sk-live-abcdef123456')
  })

  it('refuses tampered ciphertext and a changed secret with a clear error', () => {
    process.env.BETTER_AUTH_SECRET = 'unit-test-secret-unit-test-secret-0123'
    const sealed = seal('sk-abc')
    const parts = sealed.split(':')
    const tampered = [...parts.slice(0, 3), Buffer.from('xxxxxx').toString('base64url')].join(':')
    expect(() => unseal(tampered)).toThrow(SecretUnreadableError)
    process.env.BETTER_AUTH_SECRET = 'another-secret-another-secret-another-1'
    expect(() => unseal(sealed)).toThrow(/cannot be decrypted/)
    process.env.PARLEY_ENCRYPTION_KEY = 'f'.repeat(64)
    expect(unseal(seal('sk-xyz'))).toBe('sk-xyz')
    delete process.env.PARLEY_ENCRYPTION_KEY
  })
})
