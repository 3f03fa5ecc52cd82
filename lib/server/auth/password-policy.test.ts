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

it('says why a password is refused: what zxcvbn found guessable, never the password itself', async () => {
  const { passwordWeakness } = await import('./password-policy')
  const why = (p: string, inputs: string[] = []) =>
    passwordWeakness(p, inputs)
      ?.replace('This password is too easy to guess. ', '')
      .replace(' A few unrelated words make a strong one.', '')
  expect(why('qwertyuiop')).toBe('It is a common password.')
  expect(why('radiology')).toBe('It is a common word.')
  expect(why('Elizabeth1990')).toBe('It contains a common password and a recent year.')
  expect(why('correcthorse')).toBe('It contains two common words.')
  expect(why('zxcvbnm,./')).toBe('It is a keyboard pattern.')
  expect(why('abcdefgh1')).toBe('It contains a run of consecutive characters.')
  expect(why('p@ssw0rd99')).toBe('It contains a common password with letters swapped for symbols and a repetition.')
  expect(why('Xk9#mP2q')).toBe('8 random characters are too few: use 12 or more.')
  expect(why('rita.reset@lab.org', ['rita.reset@lab.org'])).toBe(
    'It is your email, your name or the name of this site.',
  )
  // The message never quotes what was typed (it may reach a log, e.g. a bad PARLEY_ADMIN_PASSWORD).
  for (const p of ['summer2026!', 'p@ssw0rd99', 'Elizabeth1990'])
    expect(passwordWeakness(p)).not.toMatch(/summer|p@ssw0rd|Elizabeth|1990|2026/)
})
