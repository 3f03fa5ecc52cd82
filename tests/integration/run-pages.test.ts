import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { runSession } from '@/lib/server/engine/runner'
import { execute } from '@/lib/server/operation'
import { changeSeatModel, createRun, getRun } from '@/lib/server/services/runs'
import { getSession, inspectSession, myQueue } from '@/lib/server/services/sessions'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

/**
 * What experts and researchers meet on the run pages and in My work: sessions waiting behind the
 * person's own say what they wait for; a role is offered only the links it can follow; every seat
 * names the model it runs; Change model moves every seat on a connection in one action.
 */
const fake = useFakeLlm()

const SMILES = ['CCOC(C)=O', 'CCOC(=O)CC', 'COC(C)=O']

async function drugDataset(studyId: string, n = SMILES.length) {
  const ds = await db.dataset.create({
    data: {
      studyId,
      name: 'esters',
      kind: 'drug',
      source: 'inline',
      instances: {
        create: SMILES.slice(0, n).map((smiles, index) => ({
          index,
          input: { smiles },
          prediction: 'CCO.CC(=O)O',
          explanation: 'Fischer esterification.',
        })),
      },
    },
  })
  return ds.id
}

const ok = <T>(r: { ok: true; data: T } | { ok: false; error: string }): T => {
  if (!r.ok) throw new Error(r.error)
  return r.data
}

describe('My work: sessions waiting behind the person’s own', () => {
  it('are grouped as waiting and name the session they wait for, not "in progress"', async () => {
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const conn = await fakeConnection(study.id, fake())
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: 'Prediction: CCO\nPathway: A reduction.' }] },
      { match: { model: 'judge' }, replies: [{ text: 'No' }] },
    ])
    const created = ok(
      await execute(createRun, researcher, {
        protocol: 'pxp',
        studyId: study.id,
        name: 'chained',
        datasetId: await drugDataset(study.id),
        carryOver: true,
        tester: 'expert',
        expertIds: [expert.userId],
        generator: { connectionId: conn.id, model: 'gen' },
        checker: { connectionId: conn.id, model: 'judge' },
      }),
    )
    await db.run.update({ where: { id: created.id }, data: { status: 'running' } })
    const sessions = await db.protocolSession.findMany({
      where: { runId: created.id },
      orderBy: { position: 'asc' },
    })
    const [first] = sessions
    if (!first) throw new Error('no session')
    expect(await runSession(first.id)).toMatchObject({ kind: 'awaiting' })

    const queue = ok(await execute(myQueue, expert, {}))
    expect(queue.counts).toMatchObject({ yours: 1, waiting: 2, others: 0 })
    expect(queue.next).toBe(first.id)
    const waiting = queue.items.filter((i) => i.grp === 'waiting')
    expect(waiting.map((w) => w.id)).toEqual(sessions.slice(1).map((s) => s.id))
    const firstRow = queue.items.find((i) => i.id === first.id)
    for (const w of waiting)
      expect(w.waitingFor).toEqual({
        id: first.id,
        status: 'awaiting',
        position: 0,
        title: firstRow?.title,
        mine: true,
        yours: true,
      })
    // The filter lists exactly them.
    const only = ok(await execute(myQueue, expert, { filter: 'waiting' }))
    expect(only.items.map((i) => i.id)).toEqual(waiting.map((w) => w.id))
  })
})

describe('a role is offered only the links it can use', () => {
  it('runs.get marks session pages and the inspector as the actor’s operations answer them', async () => {
    const researcher = await makeUser('researcher')
    const viewer = await makeUser('viewer')
    const readerResearcher = await makeUser('researcher')
    const study = await makeStudy(researcher, [viewer])
    await db.studyMember.create({ data: { studyId: study.id, userId: readerResearcher.userId, role: 'viewer' } })
    const conn = await fakeConnection(study.id, fake())
    const created = ok(
      await execute(createRun, researcher, {
        protocol: 'pxp',
        studyId: study.id,
        name: 'links',
        datasetId: await drugDataset(study.id, 1),
        generator: { connectionId: conn.id, model: 'gen' },
        checker: { connectionId: conn.id, model: 'judge' },
      }),
    )
    for (const actor of [researcher, viewer, readerResearcher]) {
      const run = ok(await execute(getRun, actor, { runId: created.id }))
      const session = run.sessions.items[0]
      if (!session) throw new Error('no session')
      // What the page offers is what the operations behind the links answer.
      const page = await execute(getSession, actor, { sessionId: session.id })
      const inspector = await execute(inspectSession, actor, { sessionId: session.id })
      expect({ role: actor.role, open: session.open, all: run.can.openSessions }).toEqual({
        role: actor.role,
        open: page.ok,
        all: page.ok,
      })
      expect(run.can.inspect).toBe(inspector.ok)
    }
    // The viewer account reads the run but gets 403 from a session page: it is offered none.
    const asViewer = ok(await execute(getRun, viewer, { runId: created.id }))
    expect(asViewer.can).toEqual({ openSessions: false, inspect: false })
    expect(asViewer.sessions.items.every((s) => !s.open)).toBe(true)
  })
})

describe('every seat names the model it runs', () => {
  it('a seat chosen as "the connection’s default model" records that model’s name when the run is created', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const created = ok(
      await execute(createRun, researcher, {
        protocol: 'pxp',
        studyId: study.id,
        name: 'defaults',
        datasetId: await drugDataset(study.id, 1),
        generator: { connectionId: conn.id },
        checker: { connectionId: conn.id },
      }),
    )
    const run = ok(await execute(getRun, researcher, { runId: created.id }))
    const seats = run.run.seats as { m: { model: { model?: string }; helpers: { checker: { model?: string } } } }
    expect(seats.m.model.model).toBe('gen')
    expect(seats.m.helpers.checker.model).toBe('gen')
    expect(run.connections[conn.id]).toMatchObject({ name: 'fake', defaultModel: 'gen' })
    const session = await db.protocolSession.findFirstOrThrow({ where: { runId: created.id } })
    expect((session.seats as typeof seats).m.model.model).toBe('gen')
    // A later change of the connection's default does not change what the run runs.
    await db.llmConnection.update({ where: { id: conn.id }, data: { defaultModel: 'judge' } })
    const again = ok(await execute(getRun, researcher, { runId: created.id }))
    expect((again.run.seats as typeof seats).m.model.model).toBe('gen')
  })
})

describe('Change model', () => {
  it('moves every seat and helper on a connection in one action and re-queues the stalled sessions', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    // A connection nothing answers on: the run stalls on it.
    const gone = await db.llmConnection.create({
      data: {
        studyId: study.id,
        name: 'retired',
        provider: 'openai-compatible',
        baseUrl: 'http://127.0.0.1:1/v1',
        defaultModel: 'old',
        timeoutMs: 2000,
      },
    })
    const working = await fakeConnection(study.id, fake())
    fake().setScript([
      { match: { contains: 'Respond only with Yes or No' }, replies: [{ text: 'Yes' }] },
      { match: { model: 'gen' }, replies: [{ text: 'Prediction: CCO.CC(=O)O\nPathway: An esterification.' }] },
    ])
    const created = ok(
      await execute(createRun, researcher, {
        protocol: 'pxp',
        studyId: study.id,
        name: 'stalls',
        datasetId: await drugDataset(study.id, 1),
        generator: { connectionId: gone.id, temperature: 0.3 },
        checker: { connectionId: gone.id },
      }),
    )
    expect(await runHeadless(created.id)).toMatchObject({ stalled: 1 })
    await db.run.update({ where: { id: created.id }, data: { status: 'paused' } })
    const session = await db.protocolSession.findFirstOrThrow({ where: { runId: created.id } })
    expect(session.status).toBe('stalled')
    // The run page preselects the connection that failed.
    expect(ok(await execute(getRun, researcher, { runId: created.id })).lastStallCall).toEqual({
      connectionId: gone.id,
      model: 'old',
    })

    const changed = ok(
      await execute(changeSeatModel, researcher, {
        runId: created.id,
        from: { connectionId: gone.id },
        model: { connectionId: working.id },
        retry: true,
      }),
    )
    // The generator, its checker and the proxy's checker: three places, one action.
    expect(changed.changed.map((c) => `${c.seat}/${c.helper ?? ''}`).sort()).toEqual(['h/checker', 'm/', 'm/checker'])
    expect(changed).toMatchObject({ sessions: 1, retried: 1 })
    const after = await db.protocolSession.findUniqueOrThrow({ where: { id: session.id } })
    expect(after.status).toBe('queued')
    const seats = after.seats as {
      m: { model: unknown; helpers: { checker: unknown } }
      h: { helpers: { checker: unknown } }
    }
    // Each keeps its own temperature; every one names the new connection's model.
    expect(seats.m.model).toEqual({ connectionId: working.id, model: 'gen', temperature: 0.3, vision: true })
    expect(seats.m.helpers.checker).toEqual({ connectionId: working.id, model: 'gen' })
    expect(seats.h.helpers.checker).toEqual({ connectionId: working.id, model: 'gen' })
    const run = await db.run.findUniqueOrThrow({ where: { id: created.id } })
    expect(run.seats).toMatchObject({ m: { model: { connectionId: working.id, model: 'gen' } } })
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: 'run.change-seat-model', resourceId: created.id },
    })
    expect(audit.after).toMatchObject({ sessions: 1 })

    // The new model works: the session finishes.
    expect(await runHeadless(created.id)).toMatchObject({ done: 1, stalled: 0 })
    // The inspector names the models that ran, and those of the earlier, failed calls.
    const inspected = ok(await execute(inspectSession, researcher, { sessionId: session.id }))
    expect(inspected.connections).toMatchObject({
      [gone.id]: { name: 'retired', defaultModel: 'old' },
      [working.id]: { name: 'fake', defaultModel: 'gen' },
    })
    const models = new Set(inspected.calls.map((c) => `${c.connectionId}:${c.modelRequested}`))
    expect(models).toEqual(new Set([`${gone.id}:old`, `${working.id}:gen`]))
  })

  it('refuses a connection no seat of the run uses, and a request naming neither a seat nor a connection', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const other = await fakeConnection(study.id, fake())
    const created = ok(
      await execute(createRun, researcher, {
        protocol: 'pxp',
        studyId: study.id,
        name: 'refusals',
        datasetId: await drugDataset(study.id, 1),
        generator: { connectionId: conn.id, model: 'gen' },
        checker: { connectionId: conn.id, model: 'judge' },
      }),
    )
    expect(
      await execute(changeSeatModel, researcher, {
        runId: created.id,
        from: { connectionId: other.id },
        model: { connectionId: other.id },
      }),
    ).toMatchObject({ ok: false, status: 400, error: 'No seat of this run uses that connection.' })
    expect(
      await execute(changeSeatModel, researcher, { runId: created.id, model: { connectionId: other.id } }),
    ).toMatchObject({ ok: false, status: 400 })
    // One seat alone still works, and only that seat changes.
    const one = ok(
      await execute(changeSeatModel, researcher, {
        runId: created.id,
        seat: 'm',
        model: { connectionId: other.id, model: 'judge' },
      }),
    )
    expect(one.changed).toEqual([
      { seat: 'm', helper: null, model: { connectionId: other.id, model: 'judge', vision: true } },
    ])
    const run = await db.run.findUniqueOrThrow({ where: { id: created.id } })
    expect(run.seats).toMatchObject({
      m: { helpers: { checker: { connectionId: conn.id, model: 'judge' } } },
      h: { helpers: { checker: { connectionId: conn.id, model: 'judge' } } },
    })
  })
})

describe('the inspector draws the instance’s image', () => {
  it('names the instance fields that are images of its dataset', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const ds = await db.dataset.create({
      data: {
        studyId: study.id,
        name: 'x-rays',
        kind: 'rad',
        source: 'inline',
        assets: { create: { name: 'case1.png', mime: 'image/png', bytes: Buffer.from([137, 80, 78, 71]) } },
      },
    })
    const session = await db.protocolSession.create({
      data: {
        studyId: study.id,
        protocol: 'pxp',
        protocolVersion: '1',
        config: { n: 10, k: 3 },
        task: 'rad',
        instance: {
          input: { image: 'case1.png', note: 'not-an-asset.png' },
          datasetId: ds.id,
          prediction: 'Atelectasis',
        },
        seats: {},
      },
    })
    const inspected = ok(await execute(inspectSession, researcher, { sessionId: session.id }))
    expect(inspected.assets).toEqual(['case1.png'])
  })
})
