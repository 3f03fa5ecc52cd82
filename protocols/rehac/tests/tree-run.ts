import { expect } from 'vitest'
import type { FakeLlmServer, FakeRule } from '@/lib/llm/fake-server'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { rehacQaDataset, rehacScript } from '@/protocols/rehac/fixture'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection } from '../../../tests/support/llm'

/**
 * The simulated human (model "person") answers "Nobody" at once, whatever the step; the agent searches,
 * then finishes right ("Halvard Brenn"). A collection on one question grows the tree
 *   "00" agent, agent: T 1, C 0      "01" agent, human: T 0, C 1      "1" human: T 0, C 1
 * so at λ: root state R̄(agent) = (1 + (0 − λ)) / 2, R̄(human) = −λ, A(root, agent) = 1/4 + λ/4;
 * the state after the agent's search R̄(agent) = 1, R̄(human) = −λ, A = (1 + λ) / 2.
 */
export const treeScript = (latencyMs = 0): FakeRule[] => [
  {
    match: { model: 'person', contains: 'Observation 1:' },
    replies: [{ text: 'Thought 2: I think I know.\nAction 2: Finish[Nobody]', latencyMs }],
  },
  { match: { model: 'person' }, replies: [{ text: 'Thought 1: I know it.\nAction 1: Finish[Nobody]', latencyMs }] },
  ...(rehacScript(latencyMs) as FakeRule[]),
]

/** A finished collection run of the first demo question on the fake LLM; its run id and researcher. */
export async function treeRun(fakeLlm: FakeLlmServer) {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const conn = await fakeConnection(study.id, fakeLlm)
  fakeLlm.setScript(treeScript())
  const r = await execute(createRun, researcher, {
    studyId: study.id,
    protocol: 'rehac',
    name: 'tree',
    datasetId: await rehacQaDataset(study.id, 1),
    seats: {
      decider: { kind: 'program', program: 'tree', params: { seed: 3 } },
      agent: { kind: 'llm', model: { connectionId: conn.id, model: 'gen' } },
      human: { kind: 'llm', model: { connectionId: conn.id, model: 'person' } },
    },
    options: { collection: true },
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  expect(await runHeadless(r.data.id)).toMatchObject({ stalled: 0 })
  return { researcher, studyId: study.id, runId: r.data.id }
}
