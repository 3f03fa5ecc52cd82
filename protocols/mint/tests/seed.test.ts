import { describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { ensureDemoConnection } from '@/lib/server/llm/runtime'
import { demoSeed } from '@/lib/server/seed'
import { seedMintDemo } from '@/protocols/mint/server/seed'
import { sandboxStatus } from '@/protocols/mint/server/sandbox'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

const status = await sandboxStatus()
if (!status.available) {
  if (process.env.PARLEY_MINT_SANDBOX_REQUIRED === '1') throw new Error(`sandbox unavailable: ${status.reason}`)
  console.warn(`MINT demo seed test skipped: ${status.reason}`)
}

describe.skipIf(!status.available)('the MINT demo seed', () => {
  it('imports the demo tasks, finishes the demo runs (solved), leaves an episode for the expert; idempotent', async () => {
    await ensureDemoConnection()
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const seed = demoSeed(study.id, researcher as Actor, { 'expert@parley.local': expert as Actor })
    expect(await seedMintDemo(seed)).toEqual([
      'dataset demo MINT tasks',
      'dataset demo MINT questions with their corpus',
      'run demo MINT (no feedback)',
      'run demo MINT (LLM feedback)',
      'run demo MINT (expert feedback)',
      'run demo MINT (wikipedia_search)',
    ])
    const runs = await db.run.findMany({
      where: { studyId: study.id, protocol: 'mint' },
      orderBy: { createdAt: 'asc' },
    })
    expect(runs.map((r) => r.status)).toEqual(['done', 'done', 'running', 'done'])
    const finished = await db.protocolSession.findMany({ where: { runId: { in: [runs[0]!.id, runs[1]!.id] } } })
    expect(finished).toHaveLength(10)
    // The demo model solves every demo task: its cell prints the number, its proposal is checked correct.
    const verdicts = await db.protocolMessage.findMany({
      where: { sessionId: { in: finished.map((s) => s.id) }, label: 'verdict' },
    })
    expect(verdicts.map((m) => m.value)).toEqual(Array(10).fill('correct'))
    // The questions: the demo model's cell searches the corpus (two or three hops) and prints the answer.
    const searched = await db.protocolSession.findMany({ where: { runId: runs[3]?.id }, orderBy: { position: 'asc' } })
    expect(searched).toHaveLength(3)
    const searchVerdicts = await db.protocolMessage.findMany({
      where: { sessionId: { in: searched.map((s) => s.id) }, label: 'verdict' },
    })
    expect(searchVerdicts.map((m) => m.value)).toEqual(Array(3).fill('correct'))
    const observations = await db.protocolMessage.findMany({
      where: { sessionId: { in: searched.map((s) => s.id) }, label: 'observation' },
      orderBy: [{ sessionId: 'asc' }],
    })
    expect(observations.map((m) => (m.body as { output: string }).output).sort()).toEqual([
      '1871\n',
      'Orsel\n',
      'yes\n',
    ])
    const live = await db.protocolSession.findMany({ where: { runId: runs[2]?.id } })
    expect(live.map((s) => [s.status, s.awaitingSeat])).toEqual([['awaiting', 'feedback']])
    expect(await seedMintDemo(seed)).toEqual([])
  })
})
