import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { makeUser } from '../support/fixtures'
import { hasBuild, type Proc, ROOT, startWeb } from '../support/processes'

/**
 * Several app instances of one release (README "Run it for a lab"): two `next start` processes on
 * one build and one database; a form rendered by one is posted to the other, as a load balancer
 * without sticky sessions does. Server actions are found by ids fixed at build time (and encrypted
 * with NEXT_SERVER_ACTIONS_ENCRYPTION_KEY when it is set), so one build serves every instance.
 */
const procs: Proc[] = []
/** React's own encoding of a server action's arguments, as the browser's runtime sends them. */
const { encodeReply } = createRequire(import.meta.url)(
  'next/dist/compiled/react-server-dom-turbopack/client.node.js',
) as {
  encodeReply(value: unknown): Promise<FormData | string>
}

afterAll(async () => {
  for (const p of procs) await p.stop('SIGTERM')
  await db.$disconnect()
})

/** The id of a server action in the shared build (what the browser's JavaScript sends). */
function actionId(exportedName: string): string {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, '.next/server/server-reference-manifest.json'), 'utf8')) as {
    node: Record<string, { exportedName?: string }>
  }
  const id = Object.entries(manifest.node).find(([, v]) => v.exportedName === exportedName)?.[0]
  if (!id) throw new Error(`no server action ${exportedName} in the build`)
  return id
}

/** Whether a page served by `base` loads JavaScript that carries this action id (the form's code). */
async function pageCarries(base: string, pagePath: string, id: string): Promise<boolean> {
  const html = await (await fetch(`${base}${pagePath}`)).text()
  const chunks = [...new Set([...html.matchAll(/\/_next\/static\/chunks\/[\w.-]+\.js/g)].map((m) => m[0]))]
  for (const c of chunks) if ((await (await fetch(`${base}${c}`)).text()).includes(id)) return true
  return false
}

describe.runIf(hasBuild())('two instances sharing one build', () => {
  it('a sign-in form fetched from instance A and posted to instance B signs in', async () => {
    const admin = await makeUser('admin')
    const env = { PARLEY_WORKERS: '0' }
    const [a, b] = await Promise.all([startWeb(3406, env), startWeb(3407, env)])
    procs.push(a, b)
    // The sign-in form as instance A serves it: its script posts to the action with this id.
    const id = actionId('signInAction')
    expect(await pageCarries('http://127.0.0.1:3406', '/sign-in', id)).toBe(true)
    // Submitted to instance B the way React does (useActionState: the previous state, then the form).
    const fields = new FormData()
    fields.append('next', '')
    fields.append('email', admin.email)
    fields.append('password', 'correct horse battery')
    const form = (await encodeReply([null, fields])) as FormData
    const res = await fetch('http://127.0.0.1:3407/sign-in', {
      method: 'POST',
      body: form,
      redirect: 'manual',
      headers: { origin: 'http://127.0.0.1:3407', 'next-action': id, accept: 'text/x-component' },
    })
    const body = await res.text()
    expect(body).not.toContain('Failed to find Server Action')
    expect([200, 303]).toContain(res.status)
    // Signed in: B set the session cookie, and the session works on A too (one database).
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ')
    expect(cookie).toContain('session_token')
    const me = await fetch('http://127.0.0.1:3406/api/v1/me', { headers: { cookie } })
    expect(me.status).toBe(200)
    expect(await me.json()).toMatchObject({ email: admin.email })
  }, 120_000)

  it('next start refuses a bad setting, naming the variable, instead of starting', async () => {
    const child = spawn(path.join(ROOT, 'node_modules/.bin/next'), ['start', '-p', '3408', '-H', '127.0.0.1'], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production', PARLEY_WORKERS: 'four' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (b) => (out += b))
    child.stderr.on('data', (b) => (out += b))
    const code = await new Promise((r) => child.once('exit', r))
    // EX_CONFIG: scripts/serve.mjs stops rather than start another process that would refuse too.
    expect(code).toBe(78)
    expect(out).toContain('PARLEY_WORKERS: expected a whole number from 0 to 1000 (got "four")')
    expect(out).toContain('Parley did not start.')
  }, 60_000)
})
