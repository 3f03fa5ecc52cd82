import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { expect, it } from 'vitest'

const root = path.resolve(__dirname, '../../..')

it('loads the zxcvbn dictionaries on the first password check, not when the module is imported', () => {
  // A fresh Node process: this test worker may have loaded zxcvbn already for another test.
  const script = `
    const loaded = () => Object.keys(require.cache).some((k) => k.includes('@zxcvbn-ts'))
    import('./lib/server/auth/password-policy.ts').then((m) => {
      const before = loaded()
      const weak = m.passwordWeakness('password1')
      const strong = m.passwordWeakness('correct horse battery staple')
      console.log(JSON.stringify({ before, after: loaded(), weak, strong }))
    })`
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, encoding: 'utf8' })
  const r = JSON.parse(out.trim().split('\n').at(-1) as string)
  expect(r.before).toBe(false)
  expect(r.after).toBe(true)
  expect(r.weak).toMatch(/too easy to guess/)
  expect(r.strong).toBeNull()
})
