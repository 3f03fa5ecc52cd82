// A Parley MINT run written as the engine stores it (a run, its sessions with their message logs, an LLM
// call per session), for the leaderboard and export tests: 'mint' need not be a registered protocol.
import type { Prisma } from '@/lib/generated/prisma/client'
import { db } from '@/lib/server/db'
import type { MintInstance, MintMessageBody } from '@/protocols/mint/core/protocol'

const DEFAULT_SEATS: Prisma.InputJsonObject = {
  agent: { kind: 'llm', model: { connectionId: 'c1', model: 'demo-model' }, helpers: {} },
  tool: { kind: 'program', program: 'python-sandbox', helpers: {}, params: {} },
  env: { kind: 'program', program: 'mint-check', helpers: {}, params: {} },
  feedback: { kind: 'human', claimable: true },
}

/** A Parley MINT run written as the engine stores it: sessions with their message logs. */
export async function parleyRun(
  studyId: string,
  name: string,
  config: Prisma.InputJsonObject,
  episodes: { log: MintMessageBody[]; status?: string; instance?: MintInstance }[],
  seats: Prisma.InputJsonObject = DEFAULT_SEATS,
) {
  const run = await db.run.create({
    data: {
      studyId,
      name,
      protocol: 'mint',
      task: 'mint',
      datasetId: 'none',
      config,
      seats,
      repetitions: 1,
      status: 'done',
    },
  })
  for (const [i, e] of episodes.entries()) {
    const s = await db.protocolSession.create({
      data: {
        studyId,
        runId: run.id,
        protocol: 'mint',
        protocolVersion: '1',
        config,
        task: 'mint',
        instance: e.instance ?? { id: String(i), dataset: 'gsm8k', prompt: 'What is 2+4?', reference: '6' },
        seats: {},
        position: i,
        status: e.status ?? 'done',
        messages: {
          create: e.log.map((m, j) => ({ seq: j + 1, sender: m.sender, receiver: 'all', body: { ...m, seq: j + 1 } })),
        },
      },
    })
    const call = await db.llmCall.create({
      data: {
        studyId,
        purpose: 'mint-session',
        sessionRef: s.id,
        provider: 'fake',
        modelRequested: 'demo-model',
        params: {},
        promptHash: `h${i}${run.id}`,
        request: {},
        status: 'ok',
        attempt: 1,
        tokensIn: 100,
        tokensOut: 10,
        costUsd: 0.01,
      },
    })
    // the agent's first message was written by that call
    await db.protocolMessage.updateMany({ where: { sessionId: s.id, seq: 1 }, data: { llmCallId: call.id } })
  }
  return run.id
}

/**
 * A finished episode with feedback after its first turn (a cell, its output, feedback, the answer, the
 * verdict), of a run of its own: what `mint.branch` branches at turn 1 (the permission and API probes).
 */
export async function branchableEpisode(studyId: string): Promise<string> {
  const runId = await parleyRun(studyId, 'branchable', { k: 3, feedback: { mode: 'textual' } }, [
    {
      log: [
        { sender: 'agent', kind: 'turn', content: '<execute> x = 6 </execute>', error: null },
        { sender: 'tool', kind: 'observation', output: '', done: false },
        { sender: 'feedback', kind: 'feedback', text: 'Print it.' },
        { sender: 'agent', kind: 'turn', content: '<solution> 6 </solution>', error: null },
        { sender: 'env', kind: 'verdict', correct: true },
      ],
    },
  ])
  // Paused: a branch of it is created but not queued (the probes run no workers, and leave no step jobs).
  await db.run.update({ where: { id: runId }, data: { status: 'paused' } })
  const s = await db.protocolSession.findFirstOrThrow({ where: { runId }, select: { id: true } })
  return s.id
}
