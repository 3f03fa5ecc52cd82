import { describe, expect, it } from 'vitest'
import { SCRIPTED_GAMES } from '../tests/support'
import { privateSharedScores, scoresJson } from './clemscore'
import { episodeOf, playGame, type ScorekeepingState, scorekeeping } from './protocol'
import { replay } from '../../../lib/protocols/types'
import { fromClembenchInstance } from './clembench'
import {
  clembenchInstanceJson,
  clembenchInteractions,
  clembenchResultsFiles,
  clembenchScoresJson,
  clemModelName,
  clemModelPlayer,
  clemPersonPlayer,
  instanceDir,
  pythonFloat,
} from './clembench-results'

/**
 * What clemcore's pipeline reads (clemcore 3.4.2, clembench a717f23), checked on the export:
 * - `clem score` (GameBenchmark.compute_scores): interactions.json, instance.json beside it and
 *   experiment.json in its parent; PrivateSharedScorer reads instance["slots"] and the interactions'
 *   `Aborted`, `Played Probe Rounds`, `probes[t][i].gt/.value`, `Filled Slots` and the request counts.
 * - `clem transcribe` (transcripts/builder.py): `meta.game_name/experiment_name/game_id/results_folder`,
 *   `players` (a `game_role` for each), `turns` of `{from, to, action: {type, content, label?}}` whose
 *   `from`/`to` are "GM" or a player of `players`.
 * - `clem eval` (clemeval.py): `<model>/<game>/<experiment>/<episode>/scores.json`, "episode scores".
 */
const played = SCRIPTED_GAMES.map((g) => ({ ...g, state: playGame(g.instance, g.reply) }))
const byWhat = (prefix: string) => played.find((g) => g.what.startsWith(prefix)) as (typeof played)[number]
const player = clemModelPlayer('gpt-4o-2024-08-06', 0, 'openai')
const interactionsOf = (state: ScorekeepingState) =>
  clembenchInteractions(state, { player, experiment: 'test-trip', gameId: state.instance.gameId ?? 0 }) as Record<
    string,
    any
  >

describe('folder names as clemcore writes them', () => {
  it('a model is "<model>-t<temperature>" with Python\'s float, the model id without its organisation', () => {
    expect([0, 0.7, 1, 2, 0.25, 1e-4, 5e-5].map(pythonFloat)).toEqual([
      '0.0',
      '0.7',
      '1.0',
      '2.0',
      '0.25',
      '0.0001',
      '5e-05',
    ])
    expect(clemModelName('meta-llama/Meta-Llama-3.1-8B-Instruct')).toBe('Meta-Llama-3.1-8B-Instruct')
    expect(clemModelName('gpt-4o-2024-08-06')).toBe('gpt-4o-2024-08-06')
    expect(clemModelName('llama3:8b')).toBe('llama3_8b')
    expect(player.folder).toBe('gpt-4o-2024-08-06-t0.0')
    expect(clemModelPlayer('gen', 0.7, 'x').folder).toBe('gen-t0.7')
    expect(clemModelPlayer('gen', undefined, 'x').folder).toBe('gen-tdefault')
    expect(clemPersonPlayer('Ada Lovelace').folder).toBe('person-Ada_Lovelace')
    expect(instanceDir(7)).toBe('instance_00007')
  })

  it('one root per play of the same game by the same player; experiment.json once per folder; unfinished left out', () => {
    const g = played[0]!
    const unfinished = replay(scorekeeping, {}, g.instance, g.state.messages.slice(0, 3)) as ScorekeepingState
    const files = clembenchResultsFiles([
      { state: unfinished, player: clemPersonPlayer('Not yet'), fallbackGameId: 9 },
      { state: g.state, player, fallbackGameId: 9 },
      { state: played[1]!.state, player, fallbackGameId: 9 },
      { state: g.state, player, fallbackGameId: 9 },
      { state: g.state, player: clemPersonPlayer('Ada'), fallbackGameId: 9 },
    ])
    expect(Object.keys(files).sort()).toEqual(
      [
        'results/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/experiment.json',
        'results/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00000/instance.json',
        'results/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00000/interactions.json',
        'results/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00000/scores.json',
        'results/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00001/instance.json',
        'results/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00001/interactions.json',
        'results/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00001/scores.json',
        'results-2/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/experiment.json',
        'results-2/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00000/instance.json',
        'results-2/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00000/interactions.json',
        'results-2/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/instance_00000/scores.json',
        'results/person-Ada/privateshared/test-trip/experiment.json',
        'results/person-Ada/privateshared/test-trip/instance_00000/instance.json',
        'results/person-Ada/privateshared/test-trip/instance_00000/interactions.json',
        'results/person-Ada/privateshared/test-trip/instance_00000/scores.json',
      ].sort(),
    )
    expect(files['results/gpt-4o-2024-08-06-t0.0/privateshared/test-trip/experiment.json']).toMatchObject({
      name: 'test-trip',
      game_name: 'privateshared',
      player_models: { '0': { model_name: 'gpt-4o-2024-08-06', backend: 'openai' } },
    })
    // scores.json as clemcore's scorer stores it: empty meta and players, then the scores
    expect(files['results/person-Ada/privateshared/test-trip/instance_00000/scores.json']).toEqual({
      meta: {},
      players: {},
      ...scoresJson(episodeOf(g.state)),
    })
  })
})

describe('instance.json is the game instance as clembench wrote it', () => {
  it('round-trips a clembench instance object, key order included', () => {
    const raw = {
      game_id: 3,
      tag: 'TRAVEL-AGENT',
      slots: { from: 'Paris', to: 'Lisbon', by: 'Overnight bus' },
      initial_prompt: 'You are a customer …',
      request_order: ['to', 'by', 'from'],
      requests: { from: 4, to: 3, by: 0 },
      probes: {
        '0': { from: 3, to: 3, by: 0 },
        '1': { from: 1, to: 0, by: 2 },
        '2': { from: 0, to: 1, by: 1 },
        '3': { from: 2, to: 2, by: 0 },
      },
      lang: 'en',
    }
    const json = clembenchInstanceJson(fromClembenchInstance(raw, { experiment: 'travel-booking' }), 3)
    expect(JSON.stringify(json)).toBe(JSON.stringify(raw))
  })
})

describe('interactions.json: what clembench logs, in its names and meanings', () => {
  it("has clemcore's keys in its order, the players as it names them, one turn list per round", () => {
    const i = interactionsOf(byWhat('perfect').state)
    expect(Object.keys(i)).toEqual([
      'meta',
      'player_models',
      'players',
      'turns',
      'probes',
      'realised_slots',
      'Request Count',
      'Parsed Request Count',
      'Violated Request Count',
      'Filled Slots',
      'Aborted',
      'Played Probe Rounds',
    ])
    expect(i.meta).toEqual({
      game_name: 'privateshared',
      experiment_name: 'test-trip',
      game_id: 0,
      results_folder: 'gpt-4o-2024-08-06-t0.0',
      clem_version: 'Parley (clemcore 3.4.2 layout)',
      round_count: 5,
      completed: true,
    })
    expect(i.players).toEqual({
      GM: { game_role: 'Game Master', model_name: 'programmatic' },
      'Player 1': { game_role: 'Answerer', model_name: 'gpt-4o-2024-08-06' },
      'Player 2': { game_role: 'Questioner', model_name: 'programmatic' },
    })
    // five slots: five rounds; the first holds the initial prompt, probing round 0, request 1 and probing round 1
    expect(i.turns).toHaveLength(5)
    const events = i.turns.flat()
    for (const e of events) {
      expect(Object.keys(e.action)).toEqual(expect.arrayContaining(['type', 'content']))
      expect(Object.keys(i.players)).toEqual(expect.arrayContaining([e.from, e.to]))
    }
    expect(i.turns[0].slice(0, 2)).toEqual([
      {
        from: 'GM',
        to: 'Player 1',
        action: { type: 'send message', content: expect.stringMatching(/^You are travelling/), label: 'pseudo' },
      },
      { from: 'Player 1', to: 'GM', action: { type: 'get message', content: 'Ok.', label: 'pseudo' } },
    ])
    // a request: the master asks its programmatic questioner (DUMMY_PROMPT), then tags the request for the answerer
    const request = events.findIndex((e: { to: string }) => e.to === 'Player 2')
    expect(events.slice(request, request + 5)).toEqual([
      {
        from: 'GM',
        to: 'Player 2',
        action: { type: 'send message', content: 'What is the next request?', label: 'context' },
      },
      { from: 'Player 2', to: 'GM', action: { type: 'get message', content: 'Tell me to?', label: 'response' } },
      { from: 'GM', to: 'Player 1', action: { type: 'send message', content: 'AGENT: Tell me to?', label: 'context' } },
      { from: 'Player 1', to: 'GM', action: { type: 'get message', content: 'ANSWER: Rome.', label: 'response' } },
      { from: 'GM', to: 'GM', action: { type: 'metadata', content: 'Slot filled: True' } },
    ])
    expect(i.turns[0].filter((e: { to: string }) => e.to === 'Player 2')).toHaveLength(1)
    expect(i.turns.at(-1).at(-1)).toEqual({ from: 'GM', to: 'GM', action: { type: 'end', content: 'Game finished.' } })
    // booleans stay booleans
    expect(i['Filled Slots']).toEqual([true, true, true, true, true])
    expect(i.Aborted).toBe(false)
    expect(i['Played Probe Rounds']).toBe(6)
  })

  it('realised_slots maps each slot to its ground-truth turn, in request order, moved by an anticipation', () => {
    expect(JSON.stringify(interactionsOf(byWhat('perfect').state).realised_slots)).toBe(
      JSON.stringify({ to: 0, when: 1, by: 2, from: 3, class: 4 }),
    )
    const i = interactionsOf(byWhat('anticipates').state)
    expect(JSON.stringify(i.realised_slots)).toBe(JSON.stringify({ to: 0, when: 0, by: 2, from: 3, class: 4 }))
    expect(i.turns.flat()).toContainEqual({
      from: 'GM',
      to: 'GM',
      action: { type: 'metadata', content: 'Value for WHEN anticipated; ground truth turn updated from 1 to 0.' },
    })
  })

  it('a probe has its question, its last answer, its value and its tries; the probe text and reply are kept out of the dialogue ("forget")', () => {
    const i = interactionsOf(byWhat('anticipates').state)
    expect(i.probes).toHaveLength(6)
    expect(i.probes[0][0]).toEqual({
      target: 'FROM',
      question: 'ME: Does the agent know from (0)? Answer this question with yes or no and then stop.',
      gt: 0,
      answer: 'ASIDE: No.',
      value: 0,
      tries: 1,
    })
    expect(i.probes[2].find((p: { target: string }) => p.target === 'BY')).toMatchObject({
      answer: 'ASIDE: No.',
      value: 0,
      tries: 2,
    })
    const events = i.turns.flat()
    const retry = events.findIndex((e: { action: { content: string } }) => e.action.content === 'ASIDE: maybe')
    expect(
      events
        .slice(retry - 1, retry + 6)
        .map((e: { action: { type: string; content: string; label?: string } }) => [
          e.action.type,
          e.action.content.slice(0, 16),
          e.action.label,
        ]),
    ).toEqual([
      ['send message', 'ME:  Does the ag', 'forget'],
      ['get message', 'ASIDE: maybe', 'forget'],
      ['parse', 'NA', undefined],
      ['send message', 'ME: Be careful. ', 'forget'],
      ['get message', 'ASIDE: No.', 'forget'],
      ['parse', 'no', undefined],
      ['metadata', 'Answer for BY va', undefined],
    ])
  })

  it('an aborted probing round lists the probes not asked without answer, value or tries (no nulls); the failed one has tries 6', () => {
    const i = interactionsOf(byWhat('aborted: a probe').state)
    expect(i.probes).toHaveLength(3)
    expect(i.probes[2]).toEqual([
      expect.objectContaining({ target: 'FROM', value: 0, tries: 1 }),
      expect.objectContaining({ target: 'TO', answer: 'I would rather not say.', value: 2, tries: 6 }),
      { target: 'BY', question: expect.any(String), gt: 0 },
      { target: 'CLASS', question: expect.any(String), gt: 0 },
      { target: 'WHEN', question: expect.any(String), gt: 1 },
    ])
    expect(JSON.stringify(i)).not.toContain('null')
    expect(i.Aborted).toBe(true)
    expect(i.meta.round_count).toBe(2)
    expect(
      i.turns
        .at(-1)
        .slice(-4)
        .map((e: { action: { type: string; content: string } }) => e.action),
    ).toEqual([
      { type: 'metadata', content: 'Answer for TO invalid after max attempts.' },
      { type: 'check', content: 'Answer is incorrect.' },
      { type: 'invalid format', content: 'Abort: invalid format in probing.' },
      { type: 'end', content: 'Game finished.' },
    ])
  })

  it("an invalid slot answer ends the game with clembench 2.0's abort message; an abort in probing round 0 leaves one round", () => {
    const answer = interactionsOf(byWhat('aborted: a slot answer').state)
    expect(
      answer.turns
        .at(-1)
        .slice(-3)
        .map((e: { action: { type: string; content: string } }) => e.action),
    ).toEqual([
      { type: 'get message', content: 'By train.', label: 'response' },
      { type: 'invalid format', content: 'Abort: invalid format in slot filling.' },
      { type: 'end', content: 'Game finished.' },
    ])
    expect(answer['Filled Slots']).toEqual([true, true])
    const zero = interactionsOf(byWhat('aborted in probing round 0').state)
    expect(zero.turns).toHaveLength(1)
    expect(zero.turns[0].some((e: { to: string }) => e.to === 'Player 2')).toBe(false)
    expect(zero['Filled Slots']).toEqual([])
    expect(zero['Played Probe Rounds']).toBe(0)
  })

  it("PrivateSharedScorer's inputs, read from the files, give Parley's scores for every game", () => {
    for (const g of played) {
      const i = interactionsOf(g.state)
      const instance = clembenchInstanceJson(g.state.instance, 0) as { slots: Record<string, string> }
      // what the scorer reads, as it reads it
      const fromFiles = privateSharedScores({
        slots: Object.keys(instance.slots).length,
        aborted: Boolean(i.Aborted),
        playedProbeRounds: i['Played Probe Rounds'],
        probes: i.probes,
        filledSlots: i['Filled Slots'],
        requestCounts: i['Request Count'],
        parsedRequestCounts: i['Parsed Request Count'],
        violatedRequestCounts: i['Violated Request Count'],
      })
      expect(fromFiles, g.what).toEqual(privateSharedScores(episodeOf(g.state)))
      expect(clembenchScoresJson(g.state)).toEqual({ meta: {}, players: {}, ...scoresJson(episodeOf(g.state)) })
    }
  })
})
