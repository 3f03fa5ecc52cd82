import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { runHeadless } from '@/lib/server/engine/headless'
import { createRun, getRun, listRuns } from '@/lib/server/services/runs'
import { inspectSession } from '@/lib/server/services/sessions'
import { makeStudy, makeUser } from '../support/fixtures'
import { importAndWait, useBulkWorkers } from '../support/imports'
import { fakeConnection, useFakeLlm } from '../support/llm'

const fake = useFakeLlm()
// Imports are jobs: this process works their queue.
useBulkWorkers()

const CSV = 'input,output,explanation\nCCOC(C)=O,CCO.CC(=O)O,Fischer esterification\nCC(=O)N,CC(=O)O.N,amidation\n'

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const imported = await importAndWait(researcher, {
    studyId: study.id,
    name: 'Two esters',
    kind: 'drug',
    file: new File([CSV], 'two.csv'),
  })
  if (!imported.ok) throw new Error(imported.error)
  const conn = await fakeConnection(study.id, fake())
  return { researcher, study, datasetId: imported.data.id, conn }
}

describe('run views: list, progress with tokens and cost, the D/M/C inspector', () => {
  it('counts sessions by status and sums the tokens of the run’s calls in SQL', async () => {
    const { researcher, study, datasetId, conn } = await world()
    fake().setScript([
      {
        match: { model: 'gen', contains: 'CCOC(C)=O' },
        replies: [{ text: 'Prediction: CCO.CC(=O)O\nPathway: ester' }],
      },
      // The second instance's generator call always fails: that session stalls.
      { match: { model: 'gen', contains: 'CC(=O)N' }, replies: [{ fault: '500' }] },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ])
    const created = await execute(createRun, researcher, {
      protocol: 'pxp',
      studyId: study.id,
      name: 'views',
      datasetId,
      carryOver: 'false',
      generator: { connectionId: conn.id, model: 'gen' },
      checker: { connectionId: conn.id, model: 'judge' },
    })
    if (!created.ok) throw new Error(created.error)
    await runHeadless(created.data.id)

    const listed = await execute(listRuns, researcher, { studyId: study.id })
    expect(listed).toMatchObject({ ok: true, data: { total: 1, items: [{ name: 'views', sessions: 2, done: 1 }] } })

    const got = await execute(getRun, researcher, { runId: created.data.id })
    if (!got.ok) throw new Error(got.error)
    const calls = await db.llmCall.findMany({
      where: { sessionRef: { in: got.data.sessions.items.map((s) => s.id) } },
    })
    expect(calls.length).toBeGreaterThan(2)
    expect(got.data.counts).toMatchObject({
      total: 2,
      done: 1,
      stalled: 1,
      running: 0,
      calls: calls.length,
      failedCalls: calls.filter((c) => c.status !== 'ok').length,
      tokensIn: calls.reduce((a, c) => a + c.tokensIn, 0),
      tokensOut: calls.reduce((a, c) => a + c.tokensOut, 0),
    })
    expect(got.data.counts.failedCalls).toBeGreaterThan(0)
    const stalled = got.data.sessions.items.find((s) => s.status === 'stalled')
    expect(stalled?.stallError).toMatch(/500|server/i)

    const onlyStalled = await execute(getRun, researcher, { runId: created.data.id, status: 'stalled' })
    expect(onlyStalled.ok && onlyStalled.data.sessions.items.map((s) => s.id)).toEqual([stalled?.id])

    // The inspector shows every message with its context and the exact request of each call.
    const done = got.data.sessions.items.find((s) => s.status === 'done')
    const inspected = await execute(inspectSession, researcher, { sessionId: done?.id })
    if (!inspected.ok) throw new Error(inspected.error)
    const { messages, session, calls: sessionCalls } = inspected.data
    expect(messages.map((m) => m.seq)).toEqual(session.contexts.map((c) => c.seq))
    const generated = messages.find((m) => m.llmCallId)
    const genCall = sessionCalls.find((c) => c.id === generated?.llmCallId)
    expect(JSON.stringify(genCall?.request)).toContain('CCOC(C)=O')
    // The AGREE checker calls carry the message they served, so the inspector can place them.
    const agree = sessionCalls.filter((c) => c.purpose === 'pxp-agree')
    expect(agree.length).toBeGreaterThan(0)
    for (const c of agree) expect(messages.map((m) => String(m.seq))).toContain(c.messageRef)
  })

  it('hides runs of other studies (404) and keeps the inspector from experts (403)', async () => {
    const { researcher, study, datasetId, conn } = await world()
    const created = await execute(createRun, researcher, {
      protocol: 'pxp',
      studyId: study.id,
      name: 'private',
      datasetId,
      generator: { connectionId: conn.id, model: 'gen' },
      checker: { connectionId: conn.id, model: 'judge' },
    })
    if (!created.ok) throw new Error(created.error)
    const outsider = await makeUser('researcher')
    expect(await execute(getRun, outsider, { runId: created.data.id })).toMatchObject({ status: 404 })
    expect(await execute(listRuns, outsider, {})).toMatchObject({ ok: true, data: { total: 0 } })
    const session = await db.protocolSession.findFirstOrThrow({ where: { runId: created.data.id } })
    expect(await execute(inspectSession, outsider, { sessionId: session.id })).toMatchObject({ status: 404 })
    const expert = await makeUser('expert')
    expect(await execute(inspectSession, expert, { sessionId: session.id })).toMatchObject({ status: 403 })
  })
})
