import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { claimSeat, submitTurn } from '@/lib/server/services/sessions'
import { TranscriptItem } from '@/protocols/labelling/core'
import { labellingDataset } from '@/protocols/labelling/fixture'
import { importSessions } from '@/protocols/labelling/server/session-import'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

/**
 * Sessions as labelling items: a run's finished sessions become one transcript item each, in a
 * `labelling-items` dataset, audited; a session of another study stores nothing.
 */
let researcher: Actor
let a: Actor
let studyId: string
let otherStudy: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  a = await makeUser('expert')
  studyId = (await makeStudy(researcher, [a])).id
  otherStudy = (await makeStudy(researcher, [a])).id
})
afterAll(async () => {
  await stopBoss()
})

async function labelledRun(study: string, labelled: number) {
  const datasetId = await labellingDataset(study, 3, `items ${Math.random()}`)
  const r = await execute(createRun, researcher, {
    studyId: study,
    protocol: 'labelling',
    name: 'source',
    datasetId,
    config: { preset: 'relevance-0-2' },
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: 1,
    start: true,
  })
  if (!r.ok) throw new Error(r.error)
  const rows = await db.protocolSession.findMany({ where: { runId: r.data.id }, orderBy: { position: 'asc' } })
  for (const s of rows.slice(0, labelled)) {
    expect((await execute(claimSeat, a, { sessionId: s.id, seat: 'annotator' })).ok).toBe(true)
    expect((await execute(submitTurn, a, { sessionId: s.id, seq: 1, answers: { O: '2' } })).ok).toBe(true)
  }
  return { runId: r.data.id, sessions: rows.map((s) => s.id) }
}

describe('import sessions as transcript items', () => {
  it('a run’s finished sessions become transcript items, one each, with turns; audited', async () => {
    const { runId, sessions } = await labelledRun(studyId, 2)
    const r = await execute(importSessions, researcher, { studyId, name: 'what the annotators did', runIds: [runId] })
    expect(r.ok, JSON.stringify(r)).toBe(true)
    if (!r.ok) return
    expect(r.data.items).toBe(2)
    const stored = await db.instance.findMany({
      where: { datasetId: r.data.datasetId },
      orderBy: { index: 'asc' },
    })
    const items = stored.map((s) => TranscriptItem.parse(s.input))
    expect(items.map((i) => i.sessionId)).toEqual(sessions.slice(0, 2))
    for (const item of items) {
      expect(item.protocol).toBe('labelling')
      expect(item.turns.length).toBeGreaterThan(0)
      expect(item.turns[0]?.who).toBe('Annotator')
    }
    const ds = await db.dataset.findUniqueOrThrow({ where: { id: r.data.datasetId } })
    expect(ds.kind).toBe('labelling-items')
    expect(
      await db.auditLog.count({ where: { action: 'dataset.import-sessions', resourceId: r.data.datasetId } }),
    ).toBe(1)
  })

  it('a session of another study: refused, nothing stored', async () => {
    const mine = await labelledRun(studyId, 1)
    const theirs = await labelledRun(otherStudy, 1)
    const before = await db.dataset.count({ where: { studyId } })
    const r = await execute(importSessions, researcher, {
      studyId,
      name: 'mixed',
      sessionIds: [mine.sessions[0] ?? '', theirs.sessions[0] ?? ''],
    })
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(/not a session of this study/)
    expect(await db.dataset.count({ where: { studyId } })).toBe(before)
  })

  it('an annotator may not import', async () => {
    const { runId } = await labelledRun(studyId, 1)
    const r = await execute(importSessions, a, { studyId, name: 'x', runIds: [runId] })
    expect(r.ok).toBe(false)
  })
})
