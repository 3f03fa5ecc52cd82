import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { getSession, saveDraft, submitTurn } from '@/lib/server/services/sessions'
import { makeAwaitingPxpSession, makeStudy, makeUser } from '../support/fixtures'

/** Drafts of a turn live on the server per (session, message number, person): any browser gets them back. */
describe('turn drafts on the server', () => {
  it('are kept per person and message, handed back with the turn, refused to others, and gone once sent', async () => {
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const other = await makeUser('expert')
    const study = await makeStudy(researcher, [expert, other])
    const s = await makeAwaitingPxpSession(study.id, expert.userId)

    const data = { match: false, agree: null, y: 'CCO.CC(=O)O', e: 'half written' }
    expect(await execute(saveDraft, expert, { sessionId: s.id, seq: 2, data })).toMatchObject({ ok: true })
    // Saved again: one row, the latest text.
    await execute(saveDraft, expert, { sessionId: s.id, seq: 2, data: { ...data, e: 'written further' } })
    const view = await execute(getSession, expert, { sessionId: s.id })
    expect(view).toMatchObject({ ok: true, data: { draft: { data: { ...data, e: 'written further' } } } })
    expect(await db.turnDraft.count({ where: { sessionId: s.id } })).toBe(1)

    // Someone without a seat in the session: 404; a message already written: 409.
    expect(await execute(saveDraft, other, { sessionId: s.id, seq: 2, data })).toMatchObject({ ok: false, status: 404 })
    expect(await execute(saveDraft, expert, { sessionId: s.id, seq: 1, data })).toMatchObject({
      ok: false,
      status: 409,
    })

    // Sending the turn removes its draft.
    const sent = await execute(submitTurn, expert, {
      sessionId: s.id,
      seq: 2,
      matchPrev: false,
      agreePrev: false,
      prediction: 'CCO.CC(=O)O',
      explanation: 'written further',
    })
    expect(sent).toMatchObject({ ok: true })
    expect(await db.turnDraft.count({ where: { sessionId: s.id } })).toBe(0)
  })
})
