import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
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
import type { SessionImportPageData } from '@/protocols/labelling/server/session-import-page'
import { protocolPage } from '@/lib/server/services/protocol-pages'
import { labellingUi } from '@/protocols/labelling/ui'
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

  it('the import page: filter by run and state, a page at a time; the picked sessions import; staff only', async () => {
    const study = (await makeStudy(researcher, [a])).id
    const one = await labelledRun(study, 3)
    const two = await labelledRun(study, 1)
    const page = (actor: Actor, args: Record<string, string>) =>
      execute(protocolPage, actor, { studyId: study, protocol: 'labelling', path: ['import-sessions'], args })
    // Finished sessions by default: 3 + 1.
    const all = await page(researcher, {})
    if (!all.ok) throw new Error(all.error)
    const d = all.data.data as SessionImportPageData
    expect(d.total).toBe(4)
    expect(d.protocols).toEqual(['labelling'])
    expect(d.runs.map((r) => r.id).sort()).toEqual([one.runId, two.runId].sort())
    // One run, two per page: two pages of its three finished sessions.
    const p1 = await page(researcher, { run: one.runId, pageSize: '2' })
    const p2 = await page(researcher, { run: one.runId, pageSize: '2', page: '2' })
    if (!p1.ok || !p2.ok) throw new Error('page refused')
    const d1 = p1.data.data as SessionImportPageData
    const d2 = p2.data.data as SessionImportPageData
    expect([d1.total, d1.pageCount, d1.sessions.length, d2.sessions.length]).toEqual([3, 2, 2, 1])
    const ids = [...d1.sessions, ...d2.sessions].map((x) => x.id)
    expect(ids.sort()).toEqual(one.sessions.sort())
    expect(d1.sessions.every((x) => x.status === 'done' && x.runName === 'source' && x.messages > 0)).toBe(true)
    // Every state: the other run's unfinished sessions too.
    const any = await page(researcher, { run: two.runId, status: 'any' })
    if (!any.ok) throw new Error(any.error)
    expect((any.data.data as SessionImportPageData).total).toBe(3)
    // Bad filters are clear refusals.
    expect(await page(researcher, { status: 'nonsense' })).toMatchObject({ ok: false, status: 400 })
    expect(await page(researcher, { run: 'not-a-run-of-this-study' })).toMatchObject({ ok: false, status: 400 })
    // The page draws the checkboxes, select-all-on-page and the pagination.
    const html = renderToStaticMarkup(
      createElement(labellingUi.StudyPage!, {
        study: { id: study, name: 'S' },
        path: ['import-sessions'],
        title: p1.data.title,
        data: d1,
      }),
    )
    expect(html).toContain('Select all on this page')
    expect(html).toContain(`Select session ${d1.sessions[0]!.id}`)
    expect(html).toContain('Page 1 of 2')
    // What the Import button sends: the picked sessions, as one transcript dataset.
    const imported = await execute(importSessions, researcher, { studyId: study, name: 'picked', sessionIds: ids })
    expect(imported).toMatchObject({ ok: true, data: { items: 3 } })
    // Without a name: a clear error, nothing stored.
    const before = await db.dataset.count({ where: { studyId: study } })
    const unnamed = await execute(importSessions, researcher, { studyId: study, name: ' ', sessionIds: ids })
    expect(unnamed).toMatchObject({ ok: false, status: 400 })
    expect(await db.dataset.count({ where: { studyId: study } })).toBe(before)
    // Staff only: an expert member of the study may not open it (a page of a study it cannot see: 404).
    expect(await page(a, {})).toMatchObject({ ok: false, status: 404 })
  })
})
