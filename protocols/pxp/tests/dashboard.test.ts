import { parse } from 'csv-parse/sync'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { pxpStats } from '@/protocols/pxp/core/stats'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import type { Actor } from '@/lib/server/actor'
import { experimentIntelligibility, type pxpDashboard, tagSequences } from '@/protocols/pxp/server/dashboard'
import { exportRun } from '@/lib/server/services/run-export'
import { runDashboard } from '@/lib/server/services/runs'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

type Dashboard = Awaited<ReturnType<typeof pxpDashboard>>
/** The run's dashboard through the generic operation (the PXP plugin computes it). */
async function experimentDashboard(actor: Actor, input: { runId: string; [k: string]: unknown }) {
  const { runId, ...args } = input
  const r = await execute(runDashboard, actor, {
    runId: runId,
    args: Object.fromEntries(Object.entries(args).map(([k, v]) => [k, String(v)])),
  })
  return r.ok ? { ok: true as const, data: r.data.data as Dashboard } : r
}
/** An export's lines through the generic operation. */
async function* exportLines(actor: Actor, runId: string, table: string, format: 'jsonl' | 'csv') {
  const r = await execute(exportRun, actor, { runId, table, format })
  if (!r.ok) throw new Error(r.error)
  yield* r.data.lines()
}

const TAGS = ['RATIFY', 'REFUTE', 'REVISE', 'REJECT'] as const

/** An experiment whose sessions hold exactly the given tag sequences (message j from m when odd). */
async function experimentWith(studyId: string, reps: string[][][]) {
  const e = await db.run.create({
    data: {
      studyId,
      name: 'dash',
      protocol: 'pxp',
      task: 'drug',
      datasetId: 'none',
      config: { n: 10, k: 3 },
      seats: {},
      repetitions: reps.length,
      status: 'done',
    },
  })
  const lines: string[] = []
  for (const [r, sessions] of reps.entries()) {
    for (const [position, tags] of sessions.entries()) {
      const s = await db.protocolSession.create({
        data: {
          studyId,
          runId: e.id,
          protocol: 'pxp',
          protocolVersion: '1',
          config: { n: 10, k: 3 },
          task: 'drug',
          instance: {},
          seats: {},
          repetition: r + 1,
          position,
          status: 'done',
        },
      })
      await db.protocolMessage.createMany({
        data: tags.map((tag, i) => ({
          sessionId: s.id,
          seq: i + 1,
          sender: i % 2 === 0 ? 'm' : 'h',
          receiver: i % 2 === 0 ? 'h' : 'm',
          label: tag,
        })),
      })
      for (const [i, tag] of tags.entries())
        lines.push(JSON.stringify({ repetition: r + 1, session: s.id, j: i + 1, sender: i % 2 === 0 ? 'm' : 'h', tag }))
    }
  }
  return { runId: e.id, lines }
}

describe('the intelligibility dashboard in SQL equals `parley pxp stats` on the same messages', () => {
  it('hand-built sessions: every definition case, two repetitions', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const { runId, lines } = await experimentWith(study.id, [
      [
        ['INIT', 'RATIFY', 'RATIFY'], // strong for both (the paper's footnote), not ultra
        ['INIT', 'REFUTE', 'REVISE', 'RATIFY', 'RATIFY'], // h: REFUTE then RATIFY → one-way h, not strong; m ultra-strong
        ['INIT', 'REFUTE', 'REFUTE', 'REJECT'], // h REJECTs at 4: not one-way h; m never ratified
        ['INIT'], // nothing but INIT: intelligible for nobody
      ],
      [
        ['INIT', 'REVISE', 'RATIFY', 'RATIFY'], // h ultra-strong, m strong
        ['INIT', 'RATIFY', 'REFUTE', 'REJECT', 'REVISE'], // m: REFUTE, REVISE → one-way m; h RATIFY then REJECT → not
      ],
    ])
    const sql = await experimentIntelligibility(runId)
    const cli = await pxpStats(lines)
    expect(sql).toEqual(cli)
    // And the numbers themselves, worked out by hand from the definitions:
    expect(sql?.oneWay.human).toEqual({ median: 1.5, min: 1, max: 2 }) // rep 1: sessions 1,2 → 2; rep 2: session 1 → 1
    expect(sql?.ultraStrong.machine).toEqual({ median: 0.5, min: 0, max: 1 })
    expect(sql?.strong.human).toEqual({ median: 1, min: 1, max: 1 })
    expect(sql?.byBound.map((b) => b.oneWayHuman.max)).toEqual([0, 2, 2, 2, 2])
    expect(sql?.byBound[3]?.oneWayHuman).toEqual({ median: 1.5, min: 1, max: 2 }) // rep 2's REJECT at 4 removes one
    const seqs = await tagSequences(runId)
    expect(seqs).toContainEqual({ sequence: 'INIT_m RATIFY_h RATIFY_m', sessions: 1 })
    expect(seqs.reduce((a, s) => a + s.sessions, 0)).toBe(6)
  })

  it('random logs (fast-check): SQL and the streaming CLI computation agree', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const session = fc.array(fc.constantFrom(...TAGS), { minLength: 0, maxLength: 9 }).map((rest) => ['INIT', ...rest])
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(session, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
        async (reps) => {
          const { runId, lines } = await experimentWith(study.id, reps)
          expect(await experimentIntelligibility(runId)).toEqual(await pxpStats(lines))
        },
      ),
      { numRuns: 25 },
    )
  })

  it('the operation: drill-down by class, paging, visibility', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const { runId } = await experimentWith(study.id, [
      [
        ['INIT', 'RATIFY', 'RATIFY'],
        ['INIT', 'REFUTE', 'REFUTE', 'REJECT'],
        ['INIT', 'REVISE', 'REVISE', 'RATIFY'],
      ],
    ])
    const all = await experimentDashboard(researcher, { runId })
    if (!all.ok) throw new Error(all.error)
    expect(all.data.sessions.total).toBe(3)
    expect(all.data.proportions?.twoWay).toBeCloseTo(2 / 3)
    const ultra = await experimentDashboard(researcher, { runId, class: 'ultra-strong-h' })
    expect(ultra.ok && ultra.data.sessions.items.map((s) => s.sequence)).toEqual(['INIT_m REVISE_h REVISE_m RATIFY_h'])
    const none = await experimentDashboard(researcher, { runId, class: 'not-intelligible' })
    expect(none.ok && none.data.sessions.items.map((s) => s.position)).toEqual([1])
    const page2 = await experimentDashboard(researcher, { runId, pageSize: 2, page: 2 })
    expect(page2.ok && page2.data.sessions.items.map((s) => s.position)).toEqual([2])
    const outsider = await makeUser('researcher')
    expect(await experimentDashboard(outsider, { runId })).toMatchObject({ status: 404 })
    const empty = await experimentWith(study.id, [])
    expect(await experimentIntelligibility(empty.runId)).toBeNull()
  })
})

describe('exports of D, M, C and the statistics', () => {
  const collect = async (it: AsyncIterable<string>) => {
    const out: string[] = []
    for await (const l of it) out.push(l)
    return out
  }

  it('M as JSONL is what `parley pxp stats` reads; CSV quotes commas, quotes and newlines', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const { runId } = await experimentWith(study.id, [
      [
        ['INIT', 'REFUTE', 'REVISE', 'RATIFY', 'RATIFY'],
        ['INIT', 'RATIFY', 'RATIFY'],
      ],
      [['INIT', 'REFUTE', 'REJECT']],
    ])
    const tricky = 'He said "no", then:\nnew line, and a comma'
    await db.protocolMessage.updateMany({ where: { session: { runId }, seq: 1 }, data: { detail: tricky } })
    const m = await collect(exportLines(researcher, runId, 'm', 'jsonl'))
    expect(m).toHaveLength(11)
    expect(await pxpStats(m)).toEqual(await experimentIntelligibility(runId))

    const csv = (await collect(exportLines(researcher, runId, 'm', 'csv'))).join('\n')
    const records = parse(csv, { columns: true }) as Array<Record<string, string>>
    expect(records).toHaveLength(11)
    expect(records.filter((r) => r.j === '1').map((r) => r.explanation)).toEqual([tricky, tricky, tricky])
    expect(records[0]).toHaveProperty('tag')

    const d = (await collect(exportLines(researcher, runId, 'd', 'jsonl'))).map((l) => JSON.parse(l))
    expect(d.map((s) => s.messages).sort()).toEqual([3, 3, 5])
    const stats = parse((await collect(exportLines(researcher, runId, 'stats', 'csv'))).join('\n'), {
      columns: true,
    }) as Array<Record<string, string>>
    expect(stats.find((r) => r.measure === 'twoWay')).toMatchObject({ median: '1', min: '0', max: '2' }) // reps: 2 and 0
    expect(stats.filter((r) => r.measure === 'oneWayAtBound')).toHaveLength(2 * 5)
  })

  it('streams a run larger than one page of sessions (1,100 sessions, 5,500 messages) in order', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const e = await db.run.create({
      data: {
        studyId: study.id,
        name: 'big',
        protocol: 'pxp',
        task: 'drug',
        datasetId: 'none',
        config: {},
        seats: {},
        repetitions: 1,
      },
    })
    const ids = Array.from({ length: 1100 }, (_, i) => `big-${e.id}-${String(i).padStart(4, '0')}`)
    await db.protocolSession.createMany({
      data: ids.map((id, position) => ({
        id,
        studyId: study.id,
        runId: e.id,
        protocol: 'pxp',
        protocolVersion: '1',
        config: {},
        task: 'drug',
        instance: {},
        seats: {},
        position,
      })),
    })
    const tags = ['INIT', 'REFUTE', 'REVISE', 'RATIFY', 'RATIFY']
    await db.protocolMessage.createMany({
      data: ids.flatMap((sessionId) =>
        tags.map((tag, i) => ({
          sessionId,
          seq: i + 1,
          sender: i % 2 ? 'h' : 'm',
          receiver: i % 2 ? 'm' : 'h',
          label: tag,
        })),
      ),
    })
    let n = 0
    let last = ''
    for await (const line of exportLines(researcher, e.id, 'm', 'jsonl')) {
      const row = JSON.parse(line) as { session: string; j: number }
      const key = `${row.session}:${row.j}`
      expect(key > last).toBe(true) // sessions by id, messages by j, never repeated
      last = key
      n++
    }
    expect(n).toBe(5500)
  }, 60_000)
})
