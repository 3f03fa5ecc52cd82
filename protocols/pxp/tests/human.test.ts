import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { runSession as runPxpSession } from '@/lib/server/engine/runner'
import { derivedHumanTag } from '@/protocols/pxp/server/human'
import { createRun } from '@/lib/server/services/runs'
import { getSession as getPxpSession, submitTurn as submitHumanMessage } from '@/lib/server/services/sessions'
import type { Actor } from '@/lib/server/actor'
import { makeSession, makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()

const TRUTH = { y: 'CCO.CC(=O)O', e: 'Fischer esterification of acetic acid with ethanol.' }

const createPxpExperiment = {
  run: (actor: Actor, input: Record<string, unknown>) => execute(createRun, actor, { protocol: 'pxp', ...input }),
}
/** The tag stored for message j, and the tag Procedure 2 derived from the person's answers. */
async function tagsOf(sessionId: string, seq: number) {
  const m = await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId, seq } } })
  return { tag: m.label, derived: (m.payload as { derivedTag?: string }).derivedTag }
}

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
    const s = await makeSession(study.id, {
      protocol: 'pxp',
      config: { n: 10, k: 4 },
      task: 'drug',
      instance: { input: { smiles: 'CCOC(C)=O' }, prediction: TRUTH.y, explanation: TRUTH.e },
      seats: {
        m: {
          kind: 'llm',
          model: { connectionId: conn.id, model: 'gen' },
          helpers: { checker: { connectionId: conn.id, model: 'judge' } },
        },
        h: { kind: 'human', userId: expert.userId },
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
      (await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 2 } } })).label,
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
    expect(ok).toMatchObject({ ok: true, data: { message: { tag: 'RATIFY' } } })
    expect(await tagsOf(s.id, 4)).toEqual({ tag: 'RATIFY', derived: 'RATIFY' })
    expect(await runPxpSession(s.id)).toEqual({ kind: 'done', reason: 'mutual-ratify' })
    const tags = (await db.protocolMessage.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } })).map(
      (m) => m.label,
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

describe('an expert in the machine seat against an LLM tester (the protocol is symmetric)', () => {
  it('the expert opens with INIT, the LLM tester answers from its own side, and the expert ratifies', async () => {
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const conn = await fakeConnection(study.id, fake())
    const ds = await db.dataset.create({
      data: {
        studyId: study.id,
        name: 'one ester',
        kind: 'drug',
        source: 'inline',
        instances: { create: { index: 0, input: { smiles: 'CCOC(C)=O' }, prediction: TRUTH.y, explanation: TRUTH.e } },
      },
    })
    fake().setScript([
      { match: { model: 'tester' }, replies: [{ text: `Prediction: ${TRUTH.y}\nPathway: ${TRUTH.e}` }] },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ])
    const created = await createPxpExperiment.run(researcher, {
      studyId: study.id,
      name: 'expert as machine',
      datasetId: ds.id,
      machine: 'expert',
      tester: 'llm',
      expertIds: [expert.userId],
      generator: { connectionId: conn.id, model: 'gen' },
      testerGenerator: { connectionId: conn.id, model: 'tester' },
      checker: { connectionId: conn.id, model: 'judge' },
    })
    if (!created.ok) throw new Error(created.error)
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: created.data.id } })
    expect(await db.sessionSeat.findMany({ where: { sessionId: s.id } })).toMatchObject([
      { seat: 'm', userId: expert.userId, claimable: false },
    ])
    expect(await runPxpSession(s.id)).toEqual({ kind: 'awaiting', seat: 'm' })
    const view = await execute(getPxpSession, expert, { sessionId: s.id })
    expect(view).toMatchObject({ ok: true, data: { mySeats: ['m'], yourTurn: true, ask: { j: 1 } } })

    // At j = 1 there is nothing to judge yet: the first message is INIT without the two questions.
    const first = await execute(submitHumanMessage, expert, {
      sessionId: s.id,
      seq: 1,
      prediction: TRUTH.y,
      explanation: TRUTH.e,
    })
    expect(first).toMatchObject({ ok: true, data: { message: { tag: 'INIT' } } })
    const m1 = await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 1 } } })
    expect(m1).toMatchObject({ sender: 'm', receiver: 'h', authorUserId: expert.userId })

    // The LLM tester answers at j = 2; its prompt shows the expert's message as the partner's (user) turn.
    expect(await runPxpSession(s.id)).toEqual({ kind: 'awaiting', seat: 'm' })
    const m2 = await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 2 } } })
    expect(m2).toMatchObject({ sender: 'h', label: 'RATIFY' })
    const ctx = (await db.contextSnapshot.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 2 } } }))
      .context as Array<{ role: string; content: unknown }>
    expect(ctx.filter((t) => t.role === 'assistant')).toHaveLength(0)
    expect(ctx.filter((t) => t.role === 'user').length).toBeGreaterThanOrEqual(2)

    // From j = 2 on both judgements are required.
    const missing = await execute(submitHumanMessage, expert, {
      sessionId: s.id,
      seq: 3,
      prediction: TRUTH.y,
      explanation: TRUTH.e,
    })
    expect(missing).toMatchObject({ ok: false, status: 400, fieldErrors: { matchPrev: expect.any(Array) } })
    const third = await execute(submitHumanMessage, expert, {
      sessionId: s.id,
      seq: 3,
      matchPrev: true,
      agreePrev: true,
      prediction: TRUTH.y,
      explanation: TRUTH.e,
    })
    expect(third).toMatchObject({ ok: true, data: { message: { tag: 'RATIFY' } } })
    expect(await runPxpSession(s.id)).toEqual({ kind: 'done', reason: 'mutual-ratify' })
  })

  it('refuses experts on both sides', async () => {
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const conn = await fakeConnection(study.id, fake())
    const ds = await db.dataset.create({
      data: { studyId: study.id, name: 'x', kind: 'drug', source: 'inline' },
    })
    const r = await createPxpExperiment.run(researcher, {
      studyId: study.id,
      name: 'both',
      datasetId: ds.id,
      machine: 'expert',
      tester: 'expert',
      expertIds: [expert.userId],
      generator: { connectionId: conn.id },
      checker: { connectionId: conn.id },
    })
    expect(r).toMatchObject({ ok: false, status: 400, fieldErrors: { tester: expect.any(Array) } })
  })
})
