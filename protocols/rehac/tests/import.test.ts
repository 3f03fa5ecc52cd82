import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { exportRun } from '@/lib/server/services/run-export'
import { importRun } from '@/lib/server/services/session-import'
import { replay } from '@/lib/protocols/types'
import { type RehacMessage, type RehacState, rehac } from '@/protocols/rehac/core/protocol'
import { trajectoryText } from '@/protocols/rehac/core/state-text'
import { importedEpisode } from '@/protocols/rehac/server/import'
import { coverageRows, methodRows, treePage } from '@/protocols/rehac/server/methods'
import { splitStoredConfig } from '@/protocols/rehac/server/session'
import { rehacSnapshot } from '@/protocols/rehac/server/setup'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { describeShared, sharedDir } from '../../../tests/support/shared'

/**
 * The authors' released trajectory files imported as sessions (server/import.ts over the engine's session
 * import): the stored sessions give Table 4's R and HIR at λ = 0.08 through the run's own metrics export,
 * and the trajectories export gives back the file's trajectory strings byte for byte.
 */

type Actor = Awaited<ReturnType<typeof makeUser>>

async function rows(actor: Actor, runId: string, table: string, args: Record<string, string> = {}) {
  const r = await execute(exportRun, actor, { runId, table, args })
  if (!r.ok) throw new Error(`${table}: ${r.error}`)
  const out: Record<string, unknown>[] = []
  for await (const l of r.data.lines()) out.push(JSON.parse(l))
  return out
}

async function importFile(
  actor: Actor,
  studyId: string,
  file: string,
  kind: string,
  fields: Record<string, string>,
  cut: (text: string) => string = (t) => t,
) {
  const text = cut(readFileSync(file, 'utf8'))
  const r = await execute(importRun, actor, {
    studyId,
    name: path.basename(file),
    kind,
    file: new File([text], path.basename(file)),
    ...fields,
  })
  if (!r.ok) throw new Error(r.error)
  return { ...r.data, text }
}

const trajectoriesOf = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l).trajectory as string)

describe('an imported line (no data needed)', () => {
  const line = {
    trajectory:
      'Question: Is water wet?\n<solver> agent\nThought 1: I search.\nAction 1: Search[Water]\nObservation 1: Water is a liquid.\n\n<solver> human\nThought 2: Yes.\nAction 2: Finish[true]\nObservation 2: Episode finished, reward = 1\n',
    em: 1,
    f1: 1,
  }
  it('becomes decide, step and observation messages whose replay renders the line byte for byte', () => {
    const e = importedEpisode(line, 3, 'yesno', undefined)
    expect(e.line).toBe(3)
    expect(e.messages.map((m) => `${m.message.sender}:${(m.message as RehacMessage).kind}`)).toEqual([
      'decider:decide',
      'agent:step',
      'environment:observation',
      'decider:decide',
      'human:step',
      'environment:observation',
    ])
    const { config, imported } = splitStoredConfig(e.config)
    expect(imported).toEqual({ T: 1, em: true, line: 3 })
    const state = replay(
      rehac,
      config,
      rehacSnapshot({ input: e.instance.input, prediction: '', explanation: '' } as never) as never,
      e.messages.map((m) => m.message as RehacMessage),
    ) as RehacState
    expect(state.reason).toBe('finished')
    expect(state.answer).toBe('true')
    expect(trajectoryText(state)).toBe(line.trajectory)
  })

  it('refuses a step whose lines as written do not read as its thought and action', () => {
    const e = importedEpisode(line, 1, 'yesno', undefined)
    const forged = e.messages.map((m) => m.message as RehacMessage)
    const step = forged[1] as Extract<RehacMessage, { kind: 'step' }>
    forged[1] = { ...step, action: { type: 'search', arg: 'Fire' } }
    const snap = rehacSnapshot({ input: e.instance.input, prediction: '', explanation: '' } as never) as never
    expect(() => replay(rehac, splitStoredConfig(e.config).config, snap, forged)).toThrow(/as written/)
  })
})

describeShared('the released ReHAC files imported as sessions', () => {
  const dir = sharedDir('datasets', 'rehac')
  const results = (name: string) => path.join(dir, 'results', `${name}_lambda0.08.jsonl`)

  it("give Table 4's R and HIR at λ = 0.08 from the stored sessions, and their trajectories back byte for byte", async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const table4: Array<{ name: string; kind: string; fields: Record<string, string>; R: number; hir: number }> = [
      { name: 'hotpotqa', kind: 'rehac-results-qa', fields: { questions: 'qa' }, R: 31.38, hir: 51.46 },
      { name: 'strategyqa', kind: 'rehac-results-qa', fields: { questions: 'yesno' }, R: 61.12, hir: 20.47 },
      { name: 'intercode', kind: 'rehac-results-sql', fields: {}, R: 60.08, hir: 4.15 },
    ]
    for (const t of table4) {
      const imported = await importFile(researcher, study.id, results(t.name), t.kind, t.fields)
      expect(imported.sessions).toBe(100)
      const run = await db.run.findUniqueOrThrow({ where: { id: imported.runId } })
      expect(run.status).toBe('done')
      const [m] = await rows(researcher, imported.runId, 'metrics', { lambdas: '0.08' })
      expect(m).toMatchObject({ method: 'program:imported', episodes: 100 })
      expect(Math.round((m?.R as number) * 10_000) / 100).toBe(t.R)
      expect(Math.round((m?.hir as number) * 10_000) / 100).toBe(t.hir)
      const exported = await rows(researcher, imported.runId, 'trajectories')
      expect(exported.map((r) => r.trajectory)).toEqual(trajectoriesOf(imported.text))
    }
    // The training file's question tree page reads imported episodes with the file's T (idx 296 has 3+).
    const training = await importFile(
      researcher,
      study.id,
      path.join(dir, 'strategyqa.jsonl'),
      'rehac-training',
      {},
      (text) => text.split('\n').slice(0, 40).join('\n'),
    )
    const firstLine = JSON.parse(training.text.split('\n')[0] as string) as { idx: number; f1: number }
    const tree = await treePage(study.id, training.runId, String(firstLine.idx), {})
    expect(tree?.trajectories.length).toBeGreaterThan(0)
    expect(tree?.trajectories[0]?.T).toBe(firstLine.f1)
    expect((await coverageRows(training.runId)).length).toBeGreaterThan(0)
    // The study's method comparison (one SQL statement over the stored messages) gives the same figures.
    const methods = await methodRows(study.id, 0.08)
    expect(
      methods
        .filter((m) => m.runId !== training.runId)
        .map((m) => [m.name, Math.round((m.R as number) * 10_000) / 100]),
    ).toEqual(table4.map((t) => [`${t.name}_lambda0.08.jsonl`, t.R]))
  }, 240_000)

  it('imports the whole training file (strategyqa.jsonl) and exports its trajectories byte for byte', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const started = Date.now()
    const imported = await importFile(researcher, study.id, path.join(dir, 'strategyqa.jsonl'), 'rehac-training', {})
    console.log(
      `strategyqa.jsonl: ${imported.sessions} sessions, ${imported.messages} messages imported in ${Date.now() - started} ms`,
    )
    expect(imported.sessions).toBe(2420)
    const exported = await rows(researcher, imported.runId, 'trajectories')
    const file = trajectoriesOf(imported.text)
    expect(exported).toHaveLength(file.length)
    for (let i = 0; i < file.length; i++) expect(exported[i]?.trajectory, `line ${i + 1}`).toBe(file[i])
    // T and EM are the file's (no gold answer came with it).
    const lines = imported.text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { em: number; f1: number })
    expect(exported.map((r) => [r.f1, r.em])).toEqual(lines.map((l) => [l.f1, l.em === 1]))
    // The question index is the instance's id.
    const first = await db.protocolSession.findFirstOrThrow({ where: { runId: imported.runId, position: 0 } })
    expect((first.instance as { id: string }).id).toBe(String(JSON.parse(imported.text.split('\n')[0] as string).idx))
  }, 600_000)

  it('refuses a file with a bad line, naming it, and stores nothing', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const good = readFileSync(results('strategyqa'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
    // Line 7: a step's marker says "<solver> robot"; line 9 of another file: the trajectory goes on after Finish.
    const bad = good.slice()
    const seven = JSON.parse(bad[6] as string)
    bad[6] = JSON.stringify({ ...seven, trajectory: seven.trajectory.replace('<solver> agent', '<solver> robot') })
    const r = await execute(importRun, researcher, {
      studyId: study.id,
      name: 'bad',
      kind: 'rehac-results-qa',
      file: new File([bad.join('\n')], 'bad.jsonl'),
    })
    expect(!r.ok && r.error).toMatch(/bad\.jsonl, line 7: trajectory line \d+ .*bad marker/)

    const afterFinish = good.slice(0, 10)
    const nine = JSON.parse(afterFinish[8] as string)
    afterFinish[8] = JSON.stringify({
      ...nine,
      trajectory: `${nine.trajectory}<solver> agent\nThought 9: more\nAction 9: Search[x]\nObservation 9: x\n`,
    })
    const r2 = await execute(importRun, researcher, {
      studyId: study.id,
      name: 'bad',
      kind: 'rehac-results-qa',
      file: new File([afterFinish.join('\n')], 'late.jsonl'),
    })
    // The Finish is no longer the last step, so its observation does not end the episode: `apply` refuses it.
    expect(!r2.ok && r2.error).toMatch(/late\.jsonl, line 9: message \d+ refused: Step \d+: finish ends the episode/)
    expect(await db.run.count({ where: { studyId: study.id } })).toBe(0)
    expect(await db.protocolSession.count({ where: { studyId: study.id } })).toBe(0)
    expect(await db.dataset.count({ where: { studyId: study.id } })).toBe(0)
  })
})
