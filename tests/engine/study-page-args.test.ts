import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { db } from '@/lib/server/db'
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
    // The page `judged` needs the study permission adjudicate, every other one read (the default).
    studyPageNeeds: (path: string[]) => (path[0] === 'judged' ? 'adjudicate' : 'read'),
    async studyPage(_actor: unknown, _studyId: string, path: string[], args: Record<string, string>) {
      seen.push({ path, args })
      if (path[0] === 'judged') return { title: 'judged', data: {} }
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

describe('studyPageNeeds: the study permission a page needs', () => {
  it('a page for adjudicate opens for an annotator account the study made adjudicator, and only that page', async () => {
    const researcher = await makeUser('researcher')
    const judge = await makeUser('annotator')
    const annotator = await makeUser('annotator')
    const study = await makeStudy(researcher)
    await db.studyMember.createMany({
      data: [
        { studyId: study.id, userId: judge.userId, role: 'adjudicator' },
        { studyId: study.id, userId: annotator.userId, role: 'annotator' },
      ],
    })
    const page = (who: typeof judge, path: string[]) =>
      execute(protocolPage, who, { studyId: study.id, protocol: 'toy-page-args', path })
    expect(await page(judge, ['judged'])).toMatchObject({
      ok: true,
      data: { title: 'judged', study: { id: study.id, name: study.name } },
    })
    // A page that needs read: the annotator account reads no study (no studies:read), so 404.
    expect(await page(judge, ['scaled'])).toMatchObject({ ok: false, status: 404 })
    // The annotator study role grants neither.
    expect(await page(annotator, ['judged'])).toMatchObject({ ok: false, status: 404 })
    expect(await page(researcher, ['judged'])).toMatchObject({ ok: true })
  })
})
