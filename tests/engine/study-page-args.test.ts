import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { execute } from '@/lib/server/operation'
import { protocolPage } from '@/lib/server/services/protocol-pages'
import { makeStudy, makeUser } from '../support/fixtures'
import { toy } from './toy/protocol'
import { toyPlugin } from './toy/plugin'

/**
 * A protocol page's search parameters (`views.studyPage`'s 4th argument): the page URL's values reach
 * the plugin as strings, the plugin validates them with its own zod schema (a bad value is its message
 * on the page, not a crash), the service bounds them (too many or too long: 400, which the page shows
 * as 404), and a page without parameters gets {}.
 */
const seen: Array<{ path: string[]; args: Record<string, string> }> = []
const factor = z.object({ factor: z.coerce.number({ error: 'factor must be a number.' }).min(0).default(1) })
const plugin = {
  ...toyPlugin,
  protocol: { ...toy, id: 'toy-page-args' },
  views: async () => ({
    session: () => ({}),
    async studyPage(_actor: unknown, _studyId: string, path: string[], args: Record<string, string>) {
      seen.push({ path, args })
      if (path[0] !== 'scaled') return null
      const r = factor.safeParse(args)
      return r.success
        ? { title: 'scaled', data: { value: 2 * r.data.factor, error: null } }
        : { title: 'scaled', data: { value: null, error: r.error.issues[0]?.message } }
    },
  }),
} as unknown as ProtocolPlugin
registerPlugin(plugin)

describe('studyPage gets the page URL’s search parameters', () => {
  it('passes them through, lets the plugin refuse a bad value with a message, bounds them, and 404s an unknown page', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const page = (path: string[], args?: Record<string, string>) =>
      execute(protocolPage, researcher, {
        studyId: study.id,
        protocol: 'toy-page-args',
        path,
        ...(args ? { args } : {}),
      })

    const ok = await page(['scaled'], { factor: '2.5' })
    expect(ok).toMatchObject({ ok: true, data: { title: 'scaled', data: { value: 5, error: null } } })
    expect(seen.at(-1)).toEqual({ path: ['scaled'], args: { factor: '2.5' } })

    const none = await page(['scaled'])
    expect(none).toMatchObject({ ok: true, data: { data: { value: 2 } } })
    expect(seen.at(-1)?.args).toEqual({})

    const bad = await page(['scaled'], { factor: 'lots' })
    expect(bad).toMatchObject({ ok: true, data: { data: { value: null, error: 'factor must be a number.' } } })

    const tooLong = await page(['scaled'], { factor: 'x'.repeat(501) })
    expect(tooLong).toMatchObject({ ok: false, status: 400 })
    const tooMany = await page(['scaled'], Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, '1'])))
    expect(tooMany).toMatchObject({ ok: false, status: 400 })

    const unknown = await page(['nothing'], { factor: '1' })
    expect(unknown).toMatchObject({ ok: false, status: 404 })
  })
})
