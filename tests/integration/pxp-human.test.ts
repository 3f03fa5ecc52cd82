import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { runPxpSession } from '@/lib/server/runner/pxp'
import { derivedHumanTag, getPxpSession, submitHumanMessage } from '@/lib/server/services/pxp-sessions'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

const fake = useFakeLlm()

const TRUTH = { y: 'CCO.CC(=O)O', e: 'Fischer esterification of acetic acid with ethanol.' }

describe('an expert as the human agent', () => {
  it('refutes, sees the machine revise, ratifies; the session ends on mutual RATIFY', async () => {
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const conn = await fakeConnection(study.id, fake())
    fake().setScript([
      {
        match: { model: 'gen' },
        replies: [
          { text: 'Prediction: CCO\nPathway: Reduction.' },
          { text: `Prediction: ${TRUTH.y}\nPathway: ${TRUTH.e}` },
        ],
      },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ])
    const s = await db.protocolSession.create({
      data: {
        studyId: study.id,
        assigneeId: expert.userId,
        protocol: 'pxp',
        protocolVersion: '1',
        config: { n: 10, k: 4 },
        task: 'drug',
        instance: { input: { smiles: 'CCOC(C)=O' }, prediction: TRUTH.y, explanation: TRUTH.e },
        seats: {
          m: {
            kind: 'llm',
            generator: { connectionId: conn.id, model: 'gen' },
            checker: { connectionId: conn.id, model: 'judge' },
          },
          h: { kind: 'human', userId: expert.userId },
        },
      },
    })
    expect(await runPxpSession(s.id)).toEqual({ kind: 'awaiting', seat: 'h' })
    const view = await execute(getPxpSession, expert, { sessionId: s.id })
    expect(view).toMatchObject({ ok: true, data: { yourTurn: true, ask: { j: 2 } } })
    // The expert does not see the ground truth of their own session.
    expect(JSON.stringify(view)).not.toContain(TRUTH.e)

    const answer = {
      sessionId: s.id,
      seq: 2,
      matchPrev: false,
      agreePrev: false,
      prediction: TRUTH.y,
      explanation: TRUTH.e,
    }
    // Two tabs submit at once: one message is stored, the other is told it was already answered.
    const [a, b] = await Promise.all([
      execute(submitHumanMessage, expert, answer),
      execute(submitHumanMessage, expert, answer),
    ])
    expect([a.ok, b.ok].sort()).toEqual([false, true])
    expect([a, b].find((r) => !r.ok)).toMatchObject({ status: 409, error: expect.stringContaining('already answered') })
    expect(
      (await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 2 } } })).tag,
    ).toBe('REFUTE')

    expect(await runPxpSession(s.id)).toEqual({ kind: 'awaiting', seat: 'h' })
    // REJECT is refused while j ≤ k (k = 4 here); RATIFY is accepted.
    const early = await execute(submitHumanMessage, expert, {
      ...answer,
      seq: 4,
      matchPrev: true,
      agreePrev: true,
      tag: 'REJECT',
    })
    expect(early).toMatchObject({ ok: false, status: 400 })
    const ok = await execute(submitHumanMessage, expert, { ...answer, seq: 4, matchPrev: true, agreePrev: true })
    expect(ok).toMatchObject({ ok: true, data: { tag: 'RATIFY', derived: 'RATIFY' } })
    expect(await runPxpSession(s.id)).toEqual({ kind: 'done', reason: 'mutual-ratify' })
    const tags = (await db.protocolMessage.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } })).map(
      (m) => m.tag,
    )
    expect(tags).toEqual(['INIT', 'REFUTE', 'REVISE', 'RATIFY', 'RATIFY'])

    // Another expert cannot open or answer it.
    const other = await makeUser('expert')
    expect(await execute(getPxpSession, other, { sessionId: s.id })).toMatchObject({ ok: false, status: 404 })
    expect(await execute(submitHumanMessage, other, { ...answer, seq: 6 })).toMatchObject({ ok: false, status: 404 })
  })

  it('derives the human tag from the two judgements and whether the answer changed', () => {
    const own = { y: 'a', e: 'x' }
    expect(derivedHumanTag({ j: 2, k: 3, matchPrev: true, agreePrev: true, own })).toBe('RATIFY')
    expect(derivedHumanTag({ j: 2, k: 3, matchPrev: false, agreePrev: true, own })).toBe('REFUTE')
    expect(
      derivedHumanTag({ j: 4, k: 3, matchPrev: true, agreePrev: false, own, ownPrev: { y: 'a', e: 'older' } }),
    ).toBe('REVISE')
    expect(derivedHumanTag({ j: 4, k: 3, matchPrev: false, agreePrev: false, own, ownPrev: own })).toBe('REJECT')
    expect(derivedHumanTag({ j: 2, k: 3, matchPrev: false, agreePrev: false, own })).toBe('REFUTE')
  })
})
