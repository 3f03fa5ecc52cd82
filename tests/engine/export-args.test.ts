import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { GET as exportRoute } from '@/app/api/runs/[runId]/export/route'
import { db } from '@/lib/server/db'
import type { ExportTable, ProtocolPlugin } from '@/lib/server/engine/plugin'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { execute } from '@/lib/server/operation'
import { exportRun } from '@/lib/server/services/run-export'
import { makeStudy, makeUser } from '../support/fixtures'
import { toy } from './toy/protocol'
import { toyPlugin } from './toy/plugin'

/**
 * A protocol table's own parameters (ExportTable.args): the export URL's other query values reach
 * `rows` parsed by the table's zod schema; a bad value is a 400 naming it before any row is read; a
 * table without `args` ignores them.
 */
const seen: unknown[] = []
const tables: Record<string, ExportTable> = {
  scaled: {
    label: 'scaled',
    args: z.object({
      factor: z.coerce.number({ error: 'Must be a number.' }).min(0, 'At least 0.').default(1),
    }),
    async *rows(_runId, _format, args) {
      seen.push(args)
      const { factor } = args as { factor: number }
      for (const x of [1, 2]) yield { x, y: x * factor }
    },
  },
  plain: {
    label: 'plain',
    async *rows(_runId, _format, args) {
      seen.push(args)
      yield { x: 1 }
    },
  },
}
const plugin = {
  ...toyPlugin,
  protocol: { ...toy, id: 'toy-export-args' },
  exports: async () => ({ tables }),
} as unknown as ProtocolPlugin
registerPlugin(plugin)

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const ds = await db.dataset.create({ data: { studyId: study.id, name: 'd', kind: 'numbers', source: 'inline' } })
  const run = await db.run.create({
    data: {
      studyId: study.id,
      name: 'args',
      protocol: 'toy-export-args',
      task: 'numbers',
      datasetId: ds.id,
      config: {},
      seats: {},
      repetitions: 1,
    },
  })
  return { researcher, runId: run.id }
}

const lines = async (it: AsyncIterable<string>) => {
  const out: string[] = []
  for await (const l of it) out.push(l)
  return out
}

describe('export tables take their own parameters (ExportTable.args)', () => {
  it('rows get the parsed parameters; defaults apply; a bad value is a 400 naming it; plain tables ignore them', async () => {
    const w = await world()
    const ok = await execute(exportRun, w.researcher, { runId: w.runId, table: 'scaled', args: { factor: '2.5' } })
    if (!ok.ok) throw new Error(ok.error)
    expect(await lines(ok.data.lines())).toEqual(['{"x":1,"y":2.5}', '{"x":2,"y":5}'])
    expect(seen.at(-1)).toEqual({ factor: 2.5 })

    const byDefault = await execute(exportRun, w.researcher, { runId: w.runId, table: 'scaled' })
    if (!byDefault.ok) throw new Error(byDefault.error)
    expect(await lines(byDefault.data.lines())).toEqual(['{"x":1,"y":1}', '{"x":2,"y":2}'])

    seen.length = 0
    const bad = await execute(exportRun, w.researcher, { runId: w.runId, table: 'scaled', args: { factor: '-1' } })
    expect(bad).toMatchObject({ ok: false, status: 400, fieldErrors: { factor: ['At least 0.'] } })
    expect(seen, 'no row was read').toEqual([])

    const plain = await execute(exportRun, w.researcher, { runId: w.runId, table: 'plain', args: { factor: 'x' } })
    if (!plain.ok) throw new Error(plain.error)
    expect(await lines(plain.data.lines())).toEqual(['{"x":1}'])
    expect(seen.at(-1)).toBeUndefined()
  })

  it("the export route passes the query's other values, as CSV too", async () => {
    const w = await world()
    const { createApiKey } = await import('@/lib/server/services/api-keys')
    const key = await execute(createApiKey, w.researcher, { name: 'k' })
    if (!key.ok) throw new Error(key.error)
    const get = (q: string) =>
      exportRoute(
        new Request(`http://localhost/api/runs/${w.runId}/export?${q}`, {
          headers: { authorization: `Bearer ${key.data.key}` },
        }),
        { params: Promise.resolve({ runId: w.runId }) },
      )
    const res = await get('table=scaled&format=csv&factor=3')
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('x,y\n1,3\n2,6\n')
    const bad = await get('table=scaled&factor=abc')
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ fieldErrors: { factor: ['Must be a number.'] } })
  })
})
