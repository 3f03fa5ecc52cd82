import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { strFromU8, unzipSync, zipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { scoresJson } from '@/protocols/scorekeeping/core/clemscore'
import { episodeOf, playGame, type ScorekeepingInstance } from '@/protocols/scorekeeping/core'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { clembenchExperiments, importClembench } from '@/protocols/scorekeeping/server/import'
import type { ScorekeepingRunView, ScorekeepingSessionView } from '@/protocols/scorekeeping/server/results'
import { exportRun, exportRunFile } from '@/lib/server/services/run-export'
import { createRun, runDashboard, viewRun } from '@/lib/server/services/runs'
import { getSession, submitTurn } from '@/lib/server/services/sessions'
import { runSession } from '@/lib/server/engine/runner'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'
import { scriptedDataset, scriptedRun } from './support-db'
import { describeShared, sharedDir } from '../../../tests/support/shared'

const fake = useFakeLlm()
// The import is the one dataset import job: this file works its queue.
useBulkWorkers()

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * A scripted answerer for some games: every request is answered with the value of the slot it asks
 * for (matched by the game's own initial prompt and the request as the last message), every side
 * question with "no". The same answerer as a function, for the pure reference game.
 */
function answerer(instances: ScorekeepingInstance[]) {
  const rules: FakeRule[] = [
    { match: { model: 'gen', contains: 'Answer this question with yes or no' }, replies: [{ text: 'ASIDE: no' }] },
  ]
  for (const inst of instances) {
    for (const r of inst.requests) {
      const value = inst.slots.find((s) => s.name === r.slot)?.value as string
      rules.push({
        match: {
          model: 'gen',
          contains: new RegExp(
            `${escapeRe(inst.initialPrompt as string)}[\\s\\S]*${escapeRe(`${inst.tag}: ${r.text}`)}$`,
          ),
        },
        replies: [{ text: `ANSWER: ${value}.` }],
      })
    }
  }
  const reply = (inst: ScorekeepingInstance) => (ask: { kind?: string; slot: string }) =>
    ask.kind === 'answer' ? `ANSWER: ${inst.slots.find((s) => s.name === ask.slot)?.value}.` : 'ASIDE: no'
  return { rules, reply }
}

/** A folder as a zip, as a researcher would upload the game's folder. */
function zipFolder(dir: string): Uint8Array {
  const files: Record<string, Uint8Array> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name)
      if (statSync(p).isDirectory()) walk(p)
      else files[`privateshared/${path.relative(dir, p)}`] = new Uint8Array(readFileSync(p))
    }
  }
  walk(dir)
  return zipSync(files)
}

async function world() {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  return { researcher, expert, study, conn }
}

async function run(actor: Actor, input: Record<string, unknown>) {
  const r = await execute(createRun, actor, { protocol: 'scorekeeping', ...input })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  return r.data
}

describeShared(
  'the released clembench instances, played by an LLM on the fake server',
  () => {
    it('imports the game folder as it is (5 experiments × 10 games) and plays one episode of every experiment; the engine scores equal the pure game', async () => {
      const w = await world()
      const zip = zipFolder(sharedDir('datasets', 'clembench-privateshared'))
      const imported = await importAndWait(
        w.researcher,
        { studyId: w.study.id, name: 'privateshared', file: new File([Buffer.from(zip)], 'privateshared.zip') },
        60_000,
        importClembench,
      )
      if (!imported.ok) throw new Error(imported.error)
      expect(imported.data).toMatchObject({ status: 'ready', instances: 50 })
      expect((await clembenchExperiments(imported.data.id)).sort()).toEqual(
        ['job-interview', 'letter-number', 'restaurant', 'things-places', 'travel-booking'].sort(),
      )
      // One game per experiment (game 0), by a dataset of those five.
      const instances = await db.instance.findMany({
        where: { datasetId: imported.data.id },
        orderBy: { index: 'asc' },
      })
      const firsts = instances.filter((i) => (i.meta as { gameId: number }).gameId === 0)
      expect(firsts).toHaveLength(5)
      const games = firsts.map((i) => i.input as unknown as ScorekeepingInstance)
      expect(games.map((g) => g.slots.length).sort((a, b) => a - b)).toEqual([5, 5, 5, 10, 15])
      const { rules, reply } = answerer(games)
      fake().setScript(rules)
      const ds = await db.dataset.create({
        data: {
          studyId: w.study.id,
          name: 'one of each',
          kind: 'clembench',
          source: 'test',
          instances: {
            create: firsts.map((i, index) => ({
              index,
              input: i.input as object,
              prediction: '',
              explanation: '',
              meta: i.meta as object,
            })),
          },
        },
      })
      const created = await run(w.researcher, {
        studyId: w.study.id,
        name: 'fake model',
        datasetId: ds.id,
        answerer: { kind: 'llm', connectionId: w.conn.id, model: 'gen' },
      })
      expect(await runHeadless(created.id, { concurrency: 3 })).toMatchObject({ total: 5, done: 5, stalled: 0 })
      const view = await execute(viewRun, w.researcher, { runId: created.id, args: { pageSize: '10' } })
      if (!view.ok) throw new Error(view.error)
      const v = view.data.data as ScorekeepingRunView
      for (const g of games) {
        const pure = scoresJson(episodeOf(playGame(g, reply(g))))
        const row = v.episodes.items.find((e) => e.experiment === g.experiment)
        expect(row?.mainScore ?? null, g.experiment).toEqual(pure['episode scores']['Main Score'])
        expect(row?.kappa ?? null).toEqual(pure['episode scores'].Kappa)
        // Every slot answered with its value: slot filling is perfect; "no" to every probe is not.
        expect(row?.slotFilling).toBe(1)
      }
      // clemcore's results folder: the model with its temperature (left to the provider here), the game,
      // the experiment, instance_<game_id>; scores.json as clemcore's scorer stores the pure game's scores
      const file = await execute(exportRunFile, w.researcher, { runId: created.id, file: 'clembench' })
      if (!file.ok) throw new Error(file.error)
      const files = unzipSync(file.data.bytes)
      const names = Object.keys(files).sort()
      const experiments = ['job-interview', 'letter-number', 'restaurant', 'things-places', 'travel-booking']
      expect(names).toEqual(
        experiments.flatMap((e) => [
          `results/gen-tdefault/privateshared/${e}/experiment.json`,
          ...['instance', 'interactions', 'scores'].map(
            (f) => `results/gen-tdefault/privateshared/${e}/instance_00000/${f}.json`,
          ),
        ]),
      )
      const read = (name: string) => JSON.parse(strFromU8(files[name] as Uint8Array))
      const travel = games.find((g) => g.experiment === 'travel-booking') as ScorekeepingInstance
      expect(read('results/gen-tdefault/privateshared/travel-booking/instance_00000/scores.json')).toEqual({
        meta: {},
        players: {},
        ...scoresJson(episodeOf(playGame(travel, reply(travel)))),
      })
      // instance.json is the game instance exactly as the released instances.json holds it
      const released = JSON.parse(readFileSync(sharedDir('datasets/clembench-privateshared/in/instances.json'), 'utf8'))
      for (const e of experiments) {
        const original = released.experiments
          .find((x: { name: string }) => x.name === e)
          .game_instances.find((g: { game_id: number }) => g.game_id === 0)
        const exported = strFromU8(
          files[`results/gen-tdefault/privateshared/${e}/instance_00000/instance.json`] as Uint8Array,
        )
        expect(JSON.stringify(JSON.parse(exported)), e).toBe(JSON.stringify(original))
      }
      expect(read('results/gen-tdefault/privateshared/travel-booking/experiment.json')).toMatchObject({
        name: 'travel-booking',
        game_name: 'privateshared',
        player_models: { '0': { model_name: 'gen', backend: 'openai_compatible' } },
      })
      expect(
        read('results/gen-tdefault/privateshared/travel-booking/instance_00000/interactions.json').meta,
      ).toMatchObject({
        game_name: 'privateshared',
        experiment_name: 'travel-booking',
        game_id: 0,
        results_folder: 'gen-tdefault',
      })
    }, 120_000)
  },
  'datasets/clembench-privateshared',
)

describe('a scorekeeping run of our demo game', () => {
  async function demoDataset(w: Awaited<ReturnType<typeof world>>, n = 2) {
    const { demoInstances } = await import('@/protocols/scorekeeping/server/demo')
    const ds = await db.dataset.create({
      data: {
        studyId: w.study.id,
        name: 'clinic',
        kind: 'clembench',
        source: 'demo',
        instances: {
          create: demoInstances(n).map((i, index) => ({
            index,
            input: i as object,
            prediction: '',
            explanation: '',
            meta: { experiment: i.experiment ?? '', gameId: i.gameId ?? null },
          })),
        },
      },
    })
    return { id: ds.id, instances: demoInstances(n) }
  }

  it('a person answers in the same game: tags added for them, probes kept out of the dialogue, scored like a model', async () => {
    const w = await world()
    const { id: datasetId, instances } = await demoDataset(w, 1)
    const created = await run(w.researcher, {
      studyId: w.study.id,
      name: 'people',
      datasetId,
      answerer: { kind: 'human', userId: w.expert.userId },
    })
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: created.id } })
    const game = instances[0] as ScorekeepingInstance
    // The person plays perfectly: each slot's value, and yes exactly for the slots already given.
    const given = new Set<string>()
    for (let guard = 0; guard < 200; guard++) {
      const end = await runSession(s.id)
      if (end.kind === 'done') break
      expect(end).toEqual({ kind: 'awaiting', seat: 'answerer' })
      const got = await execute(getSession, w.expert, { sessionId: s.id })
      if (!got.ok) throw new Error(got.error)
      const view = got.data.view as ScorekeepingSessionView
      const ask = got.data.ask as { j: number; kind: string }
      // A probe's ground truth is hidden from the person while the game runs.
      expect(view.probing.flatMap((r) => r.probes).every((p) => p.gt === null)).toBe(true)
      const last = view.probing
        .flatMap((r) => r.probes.flatMap((p) => p.tries.map((t) => ({ ...t, slot: p.slot }))))
        .find((t) => t.seq === ask.j - 1)
      const input =
        ask.kind === 'answer'
          ? (() => {
              const slot = game.requestOrder[view.dialogue.filter((d) => d.kind === 'answer').length] as string
              given.add(slot)
              return { reply: game.slots.find((x) => x.name === slot)?.value }
            })()
          : { answer: last && given.has(last.slot) ? 'yes' : 'no' }
      if (ask.kind === 'answer') {
        // A line break would end the game for a model: the person gets a clear refusal instead.
        expect(await execute(submitTurn, w.expert, { sessionId: s.id, seq: ask.j, reply: 'two\nlines' })).toMatchObject(
          { status: 400 },
        )
      }
      const r = await execute(submitTurn, w.expert, { sessionId: s.id, seq: ask.j, ...input })
      if (!r.ok) throw new Error(r.error)
    }
    const stored = await db.protocolMessage.findMany({
      where: { sessionId: s.id, sender: 'answerer' },
      orderBy: { seq: 'asc' },
    })
    expect(stored.every((m) => /^(ANSWER|ASIDE): /.test((m.body as { text: string }).text))).toBe(true)
    const done = await execute(getSession, w.researcher, { sessionId: s.id })
    if (!done.ok) throw new Error(done.error)
    const view = done.data.view as ScorekeepingSessionView
    expect(view.scores?.['episode scores']['Main Score']).toBe(100)
    expect(view.dialogue.every((d) => !d.text.includes('Answer this question with yes or no'))).toBe(true)
    const dash = await execute(runDashboard, w.researcher, { runId: created.id })
    if (!dash.ok) throw new Error(dash.error)
    const table = (dash.data.data as { overall: Array<{ model: string; clemscore: number }> }).overall
    expect(table).toEqual([expect.objectContaining({ model: expect.stringMatching(/\(person\)$/), clemscore: 100 })])
  }, 60_000)

  it('the episode CSV has one row per episode with clembench’s scores', async () => {
    const w = await world()
    const { id: datasetId, instances } = await demoDataset(w, 2)
    const { rules } = answerer(instances)
    fake().setScript(rules)
    const created = await run(w.researcher, {
      studyId: w.study.id,
      name: 'csv',
      datasetId,
      answerer: { kind: 'llm', connectionId: w.conn.id, model: 'gen' },
    })
    await runHeadless(created.id)
    const r = await execute(exportRun, w.researcher, { runId: created.id, table: 'episodes', format: 'csv' })
    if (!r.ok) throw new Error(r.error)
    const lines: string[] = []
    for await (const l of r.data.lines()) lines.push(l)
    expect(lines).toHaveLength(3)
    expect(lines[0]).toContain('mainScore')
    expect(lines[0]?.split(',')).toContain('kappa')
  })

  it("the demo game folder has every word clembench's game master reads, DUMMY_PROMPT included", async () => {
    const { demoGameFiles } = await import('@/protocols/scorekeeping/server/demo')
    const words = JSON.parse(demoGameFiles(1)['resources/en_words.json'] as string)
    // PrivateShared reads words.answer, aside, me, probe, ok, yes, no and dummy_prompt (its questioner's context)
    for (const key of ['ANSWER', 'ASIDE', 'ME', 'PROBE', 'OK', 'YES', 'NO', 'DUMMY_PROMPT'])
      expect(typeof words[key], key).toBe('string')
  })
})

describe("the clembench export is clemcore's results folder", () => {
  it('names each player as clemcore does (a model with its temperature, the connection default model when none was chosen; a person) and writes what clem score reads', async () => {
    const w = await world()
    const ds = await scriptedDataset(w.study.id)
    const runs = [
      { answerer: { kind: 'llm', connectionId: w.conn.id, temperature: 0.7 } },
      { answerer: { kind: 'human', userId: w.expert.userId } },
    ]
    const zips = []
    for (const r of runs) {
      const { runId } = await scriptedRun(w.researcher, { studyId: w.study.id, datasetId: ds.id, ...r })
      const file = await execute(exportRunFile, w.researcher, { runId, file: 'clembench' })
      if (!file.ok) throw new Error(file.error)
      zips.push(unzipSync(file.data.bytes))
    }
    const [llm, person] = zips as [Record<string, Uint8Array>, Record<string, Uint8Array>]
    const folder = (files: Record<string, Uint8Array>) => [...new Set(Object.keys(files).map((n) => n.split('/')[1]))]
    expect(folder(llm)).toEqual(['gen-t0.7'])
    expect(folder(person)).toEqual(['person-expert_tester'])
    for (const files of [llm, person]) {
      const names = Object.keys(files)
      const episodes = names.filter((n) => n.endsWith('/interactions.json'))
      expect(episodes).toHaveLength(6)
      for (const e of episodes) {
        const dir = path.posix.dirname(e)
        // clem score: instance.json beside interactions.json, experiment.json in the experiment's folder
        expect(names).toContain(`${dir}/instance.json`)
        expect(names).toContain(`${path.posix.dirname(dir)}/experiment.json`)
        expect(dir).toMatch(/^results\/[^/]+\/privateshared\/test-trip\/instance_0000[0-5]$/)
        // clem transcribe: meta, players, turns
        const i = JSON.parse(strFromU8(files[e] as Uint8Array))
        expect(Object.keys(i).slice(0, 4)).toEqual(['meta', 'player_models', 'players', 'turns'])
        expect(i.meta.results_folder).toBe(dir.split('/')[1])
      }
    }
    const perfect = JSON.parse(
      strFromU8(llm['results/gen-t0.7/privateshared/test-trip/instance_00000/interactions.json'] as Uint8Array),
    )
    expect(perfect.players['Player 1']).toEqual({ game_role: 'Answerer', model_name: 'gen' })
    // every event carries the time its message was written
    expect(perfect.turns[0][2].timestamp).toBe('2026-03-02T10:00:01.000Z')
  })
})
