import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { runSession } from '@/lib/server/engine/runner'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { myQueue } from '@/lib/server/services/sessions'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

/** What experts and researchers meet in My work: sessions waiting behind the person's own say what they wait for. */
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
    await db.experiment.update({ where: { id: created.id }, data: { status: 'running' } })
    const sessions = await db.protocolSession.findMany({
      where: { experimentId: created.id },
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
