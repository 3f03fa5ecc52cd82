import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { pxpStats } from '@/protocols/pxp/core/stats'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { runHeadless as runExperiment } from '@/lib/server/engine/headless'
import { shuffled } from '@/lib/server/engine/prepare'
import { runTableLines } from '@/lib/server/services/run-export'
import { createRun } from '@/lib/server/services/runs'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'
import { describeShared, PXP_DATA } from '../../../tests/support/shared'

const fake = useFakeLlm()
// Imports are jobs: this process works their queue.
useBulkWorkers()

describeShared(
  'a PXP experiment on the released DRUG data (machine LLM vs. ground-truth proxy)',
  () => {
    it('creates R × instances sessions, runs them with carry-over, and exports messages that pxp stats reads', async () => {
      const researcher = await makeUser('researcher')
      const study = await makeStudy(researcher)
      const imported = await importAndWait(researcher, {
        studyId: study.id,
        name: 'Retro',
        kind: 'drug',
        file: new File([readFileSync(path.join(PXP_DATA, 'retro.csv'))], 'retro.csv'),
      })
      if (!imported.ok) throw new Error(imported.error)
      const conn = await fakeConnection(study.id, fake())
      const first = await db.instance.findMany({
        where: { datasetId: imported.data.id },
        orderBy: { index: 'asc' },
        take: 3,
      })
      // The generator answers each product with its true reactants; the checker agrees.
      fake().setScript([
        ...first.map((i) => ({
          match: { model: 'gen', contains: `pathway for ${(i.input as { smiles: string }).smiles}.` },
          replies: [{ text: `Prediction: ${i.prediction}\nPathway: A plausible single step.` }],
        })),
        { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
      ])
      const created = await execute(createRun, researcher, {
        protocol: 'pxp',
        studyId: study.id,
        name: 'DRUG pilot',
        datasetId: imported.data.id,
        sample: 3,
        repetitions: 2,
        generator: { connectionId: conn.id, model: 'gen', temperature: 0.3 },
        checker: { connectionId: conn.id, model: 'judge' },
      })
      expect(created).toMatchObject({ ok: true, data: { sessions: 6 } })
      if (!created.ok) return
      const seen: number[] = []
      const progress = await runExperiment(created.data.id, { concurrency: 2, onProgress: (p) => seen.push(p.done) })
      expect(progress).toEqual({ total: 6, done: 6, stalled: 0, awaiting: 0 })
      expect(seen).toEqual([1, 2, 3, 4, 5, 6])
      expect(await db.run.findUniqueOrThrow({ where: { id: created.data.id } })).toMatchObject({
        status: 'done',
      })

      // Carry-over: the second session of a repetition was prompted with the first one's dialogue.
      const second = await db.protocolSession.findFirstOrThrow({
        where: { runId: created.data.id, repetition: 1, position: 1 },
      })
      const ctx = await db.contextSnapshot.findUniqueOrThrow({
        where: { sessionId_seq: { sessionId: second.id, seq: 1 } },
      })
      // C stands in one line for the carried dialogue; the call log has the exact request with it.
      expect(JSON.stringify(ctx.context)).toContain('messages of the 1 earlier session(s) of this repetition')
      expect(JSON.stringify(ctx.context)).not.toContain(first[0]?.prediction)
      const call = await db.llmCall.findFirstOrThrow({
        where: { sessionRef: second.id, messageRef: '1', purpose: 'pxp-generate' },
      })
      expect(JSON.stringify(call.request)).toContain(first[0]?.prediction)

      const lines: string[] = []
      for await (const l of runTableLines(created.data.id, 'm', 'jsonl')) lines.push(l)
      expect(lines).toHaveLength(6 * 3)
      const report = await pxpStats(lines)
      const all3 = { median: 3, min: 3, max: 3 }
      const none = { median: 0, min: 0, max: 0 }
      expect(report).toMatchObject({
        repetitions: 2,
        sessions: 3,
        oneWay: { human: all3, machine: all3 },
        twoWay: all3,
        strong: { human: all3, machine: all3 },
        ultraStrong: { human: none, machine: none },
      })
      expect(report.byBound).toEqual([
        { j: 1, oneWayHuman: none, oneWayMachine: none },
        { j: 2, oneWayHuman: all3, oneWayMachine: none },
        { j: 3, oneWayHuman: all3, oneWayMachine: all3 },
      ])

      // The same through the CLI: export piped into stats.
      const env = { ...process.env }
      const exported = spawnSync(
        process.execPath,
        ['bin/parley.mjs', 'pxp', 'export', '--experiment', created.data.id],
        {
          env,
          encoding: 'utf8',
        },
      )
      expect(exported.status).toBe(0)
      const stats = spawnSync(process.execPath, ['bin/parley.mjs', 'pxp', 'stats', '-'], {
        input: exported.stdout,
        encoding: 'utf8',
        env,
      })
      expect(stats.status).toBe(0)
      expect(JSON.parse(stats.stdout)).toEqual(JSON.parse(JSON.stringify(report)))
      const rerun = spawnSync(process.execPath, ['bin/parley.mjs', 'run', created.data.id], {
        env,
        encoding: 'utf8',
      })
      expect(rerun.status).toBe(0)
      expect(JSON.parse(rerun.stdout)).toEqual({ total: 6, done: 6, stalled: 0, awaiting: 0 })
    }, 60_000)
  },
  'datasets/pxp-interact',
)

describe('the order of a repetition', () => {
  it('the seeded shuffle is a reproducible permutation', () => {
    const xs = Array.from({ length: 20 }, (_, i) => i)
    expect(shuffled(xs, 1)).toEqual(shuffled(xs, 1))
    expect(shuffled(xs, 1)).not.toEqual(shuffled(xs, 2))
    expect([...shuffled(xs, 3)].sort((a, b) => a - b)).toEqual(xs)
  })
})
