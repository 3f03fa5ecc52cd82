import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { POST as restPOST } from '@/app/api/v1/[...rest]/route'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import { exportRun } from '@/lib/server/services/run-export'
import { parseModel } from '@/protocols/rehac/core/policy'
import { trainRehacPolicy } from '@/protocols/rehac/server/train'
import { makeUser } from '../../../tests/support/fixtures'
import { useFakeLlm } from '../../../tests/support/llm'
import { treeRun } from './tree-run'

const fake = useFakeLlm()
const repo = path.resolve(import.meta.dirname, '../../..')
const tmp = mkdtempSync(path.join(tmpdir(), 'parley-rehac-train-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const parley = (args: string[]) =>
  spawnSync(process.execPath, ['bin/parley.mjs', ...args], {
    cwd: repo,
    env: { ...process.env, DATABASE_URL: '' },
    encoding: 'utf8',
    timeout: 120_000,
  })

describe('training a ReHAC policy in the app and with the CLI', () => {
  it("the operation trains on a study's collected tree; the CLI on its trajectories export gives the same model; REST answers it; access is checked", async () => {
    const w = await treeRun(fake())
    const settings = { lambda: 0.08, epochs: 5, seed: 7, heldOutFraction: 0.2 }
    const r = await execute(trainRehacPolicy, w.researcher, { studyId: w.studyId, ...settings })
    if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
    // One question: nothing can be held out; the model is a trained-policy decider's model.
    expect(r.data.summary).toMatchObject({ ...settings, trajectories: 3, rows: 4, trainRows: 4, heldOut: null })
    expect(parseModel(r.data.model)).toMatchObject({ kind: 'rehac-logistic' })
    // Two states, both better with the agent: trained on them it picks the agent in both.
    expect(r.data.summary.train).toMatchObject({ states: 2, stateAccuracy: 1, humanRate: 0 })

    const ex = await execute(exportRun, w.researcher, { runId: w.runId, table: 'trajectories' })
    if (!ex.ok) throw new Error(ex.error)
    const lines: string[] = []
    for await (const l of ex.data.lines()) lines.push(l)
    const file = path.join(tmp, 'run.jsonl')
    writeFileSync(file, lines.join('\n'))
    const cli = parley([
      'rehac',
      'train',
      file,
      '--lambda',
      '0.08',
      '--epochs',
      '5',
      '--seed',
      '7',
      '--held-out',
      '0.2',
    ])
    expect(cli.stderr).toBe('')
    const [model, summary] = cli.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(model).toEqual(r.data.model)
    expect(summary).toEqual(r.data.summary)

    // REST: the same answer over an API key.
    const k = await execute(createApiKey, w.researcher, { name: 'k' })
    if (!k.ok) throw new Error(k.error)
    const post = (body: unknown) =>
      restPOST(
        new Request('http://127.0.0.1/api/v1/rehac/policies/train', {
          method: 'POST',
          headers: { authorization: `Bearer ${k.data.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      )
    const res = await post({ studyId: w.studyId, ...settings })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(r.data)))
    const bad = await post({ studyId: w.studyId, lambda: 2, heldOutFraction: 1 })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({
      fieldErrors: { lambda: expect.any(Array), heldOutFraction: expect.any(Array) },
    })

    // Another run id than the study's ReHAC runs is refused; a researcher outside the study sees nothing.
    const other = await execute(trainRehacPolicy, w.researcher, { studyId: w.studyId, runIds: ['nope'] })
    expect(other).toMatchObject({ ok: false, status: 400, fieldErrors: { runIds: expect.any(Array) } })
    const stranger = await makeUser('researcher')
    expect(await execute(trainRehacPolicy, stranger, { studyId: w.studyId })).toMatchObject({ ok: false, status: 404 })
    const expert = await makeUser('expert')
    expect(await execute(trainRehacPolicy, expert, { studyId: w.studyId })).toMatchObject({ ok: false, status: 403 })
    expect(await db.auditLog.count({ where: { action: 'rehac.train', studyId: w.studyId } })).toBe(2)
  })

  it('the CLI holds out whole questions and reports the offline estimate against the baselines; no tree is exit 1', () => {
    // Three questions, each a full two-step tree: the human is right where the agent is wrong on
    // step 1 of q1 and q2 and wrong on q3's; the agent finishes right at step 2.
    const step = (who: string, n: number, action: string) =>
      `<solver> ${who}\nThought ${n}: t\nAction ${n}: ${action}\nObservation ${n}: o\n`
    const lines: string[] = []
    for (const [q, humanRight] of [
      ['Q1', true],
      ['Q2', true],
      ['Q3', false],
    ] as const)
      for (const [a, b] of [
        ['agent', 'agent'],
        ['agent', 'human'],
        ['human', 'agent'],
        ['human', 'human'],
      ]) {
        const f1 = a === 'human' ? (humanRight ? 1 : 0) : b === 'agent' ? 0.5 : 0.4
        lines.push(
          JSON.stringify({
            trajectory: `Question: ${q}\n${step(a as string, 1, 'Search[x]')}${step(b as string, 2, 'Finish[y]')}`,
            em: f1 === 1,
            f1,
          }),
        )
      }
    const file = path.join(tmp, 'three.jsonl')
    writeFileSync(file, lines.join('\n'))
    const run = (heldOut: string, seed = '1') => {
      const out = parley(['rehac', 'train', file, '--epochs', '30', '--seed', seed, '--held-out', heldOut])
      expect(out.stderr).toBe('')
      return JSON.parse(out.stdout.trim().split('\n')[1] as string)
    }
    const s = run('0.34')
    expect(s).toMatchObject({ trainQuestions: 2, heldOutQuestions: 1, trajectories: 12, rows: 18 })
    // Each question's tree has 3 states with both actions: the held-out question's 3.
    expect(s.heldOut.policy.states).toBe(3)
    expect(s.heldOut.agentOnly.humanRate).toBe(0)
    expect(s.heldOut.humanOnly.humanRate).toBe(1)
    // The baselines are exact: a held-out tree's agent-only and human-only chosen advantages are opposite.
    expect(s.heldOut.agentOnly.meanChosenAdvantage).toBeCloseTo(-s.heldOut.humanOnly.meanChosenAdvantage, 12)
    // Same seed, same split and model; no question held out with 0.
    expect(run('0.34')).toEqual(s)
    expect(run('0')).toMatchObject({ heldOut: null, heldOutQuestions: 0, trainQuestions: 3 })

    const agentsOnly = path.join(tmp, 'agents.jsonl')
    writeFileSync(agentsOnly, lines.filter((l) => !l.includes('human')).join('\n'))
    const none = parley(['rehac', 'train', agentsOnly])
    expect(none.status).toBe(1)
    expect(none.stderr).toMatch(/No state .* both actions/)
    expect(parley(['rehac', 'train', file, '--held-out', '0.95']).status).toBe(2)
  })
})
