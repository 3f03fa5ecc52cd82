/**
 * Scorekeeping episodes → clembench's results folder, as clemcore's own pipeline writes and reads it
 * (pure: states in, JSON objects out). The layout and keys follow clemcore 3.4.2, the last 3.x release
 * whose legacy game master numbers the rounds as the scorekeeping game (clp-research/clembench
 * `privateshared`) expects, running that game's `PrivateShared` master:
 *
 *   <root>/<model>-t<temperature>/privateshared/<experiment>/experiment.json
 *   <root>/<model>-t<temperature>/privateshared/<experiment>/instance_<game_id, 5 digits>/
 *       instance.json       the game instance as in instances.json (`clem score` reads it: the scorer's `slots`)
 *       interactions.json   `meta`, `player_models`, `players`, `turns` (`clem transcribe` reads these),
 *                           then what the game master logs for scoring with `log_key`
 *       scores.json         `PrivateSharedScorer`'s scores (`clem eval` reads "episode scores")
 *
 * What each key means, as clembench's master logs it:
 * - `turns`: one list per round of clemcore's legacy master. The first holds the initial prompt and the
 *   fake "Ok." (label "pseudo"), probing round 0, then request 1 with its answer and probing round 1;
 *   list k holds request k + 1, its answer and probing round k + 1. A request is the master asking its
 *   programmatic questioner (Player 2) with DUMMY_PROMPT, the questioner's request text, and the tagged
 *   request sent to the answerer (Player 1). GM → GM events: `parse` ('yes', 'no' or 'NA') per probe
 *   try, `metadata` ("Slot filled: True", "Value for X anticipated; …", "Answer for X valid after n
 *   tries."), `check` ("Answer is correct."), `invalid format` (the abort) and `end`.
 * - `probes`: per probing round that started, every probe `{target, question, gt, answer, value,
 *   tries}`; `question` is the PROBE template filled (without a retry suffix), `answer` the last raw
 *   reply, `value` 1 yes, 0 no, 2 invalid, `tries` the try that parsed, or one more than the tries when
 *   none did (clembench's loop counter). A probe not asked because its round was aborted before it
 *   has only `target`, `question` and `gt`.
 * - `realised_slots`: slot → the ground-truth turn it ended with (its index in the request order,
 *   moved earlier when an answer anticipated its value), keyed in request order.
 * - `Filled Slots` (booleans), `Aborted` (a boolean), `Played Probe Rounds`, and the request counts
 *   per probing round.
 *
 * Where Parley's export differs from what clembench itself writes:
 * - The probe questions and the answerer's replies to them are also events of `turns` (GM → Player 1
 *   and back, label "forget": clemcore's label for a message the player does not keep, which the
 *   transcript draws dashed); clembench writes them only to player_1.requests.json, which Parley does
 *   not export (its own call log has every request).
 * - An invalid slot answer aborts the game (the README; clembench 2.0's message "Abort: invalid format
 *   in slot filling."), where the current master goes on without checking or probing that round.
 * - After an abort in probing round 0, clemcore's runner still asks the programmatic questioner once
 *   (its DUMMY_PROMPT and request appear before "end", never sent to the answerer); Parley does not.
 * - scores.json writes null where Python writes NaN (JSON has no NaN; clemcore's evaluation reads both).
 * - A second play of the same game by the same player (a repetition) goes to another root
 *   (`results-2/`, …): clemcore keeps one episode per game instance and model.
 * - A person's folder is `person-<name>` (no temperature); a model whose temperature was left to the
 *   provider is `<model>-tdefault`.
 * - No run.json and no requests.json.
 */
import { type ScoresJson, scoresJson } from './clemscore'
import {
  CLEMBENCH_EN_WORDS,
  episodeOf,
  maxTries,
  parseProbeAnswer,
  probeQuestion,
  type ScorekeepingInstance,
  type ScorekeepingState,
} from './protocol'

/** clembench's game name: the folder between the model and the experiment. */
export const CLEMBENCH_GAME = 'privateshared'

/** The clemcore release whose layout, keys and round numbering this export follows. */
export const CLEMCORE_LAYOUT_VERSION = '3.4.2'

/** Python's `repr(float)` for a temperature: 0 → "0.0", 0.7 → "0.7", 1 → "1.0", 5e-05 → "5e-05". */
export function pythonFloat(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf'
  const abs = Math.abs(x)
  if (x !== 0 && (abs < 1e-4 || abs >= 1e16)) {
    const [mantissa, exp] = x.toExponential().split('e') as [string, string]
    const sign = exp.startsWith('-') ? '-' : '+'
    const digits = exp.replace(/^[+-]/, '').padStart(2, '0')
    return `${mantissa}e${sign}${digits}`
  }
  return Number.isInteger(x) ? `${x}.0` : String(x)
}

/** A name safe as one folder of a zip on every system (clemcore writes the model name as it is). */
const folderSafe = (s: string) => s.replace(/[^\w.+-]+/g, '_').replace(/^\.+/, '_') || '_'

/**
 * clemcore's model name for a model id: the id after its last "/" (clemcore's registry names a hosted
 * model without its organisation: "meta-llama/Meta-Llama-3.1-8B-Instruct" → "Meta-Llama-3.1-8B-Instruct").
 */
export function clemModelName(modelId: string): string {
  return folderSafe(modelId.split('/').filter(Boolean).at(-1) ?? modelId)
}

/** Who played an episode, as clemcore names it. */
export interface ClemPlayer {
  /** The run folder (clemcore's `Model.to_identifier`): "gpt-4o-2024-08-06-t0.0", "person-Ada_Lovelace". */
  folder: string
  /** `players["Player 1"].model_name`. */
  modelName: string
  /** `player_models["0"]` (clemcore's model spec). */
  modelSpec: Record<string, unknown>
}

/** A model as clemcore's folder names it: "<model>-t<temperature>". */
export function clemModelPlayer(modelId: string, temperature: number | undefined, backend: string): ClemPlayer {
  const modelName = clemModelName(modelId)
  const t = temperature === undefined ? 'default' : pythonFloat(temperature)
  return {
    folder: `${modelName}-t${t}`,
    modelName,
    modelSpec: { model_name: modelName, model_id: modelId, backend, temperature: temperature ?? null },
  }
}

/** A person (Parley's people play the same games): "person-<name>". */
export function clemPersonPlayer(name: string): ClemPlayer {
  const modelName = `person-${folderSafe(name.trim())}`
  return { folder: modelName, modelName, modelSpec: { model_name: modelName, backend: 'human' } }
}

/** instance_<game_id> with five digits, as clemcore's ResultsFolder names an episode's folder. */
export const instanceDir = (gameId: number) => `instance_${String(gameId).padStart(5, '0')}`

/** The game instance as clembench's instances.json holds it (`instance.json`), from the protocol's instance. */
export function clembenchInstanceJson(instance: ScorekeepingInstance, gameId: number): Record<string, unknown> {
  return {
    game_id: gameId,
    tag: instance.tag,
    slots: Object.fromEntries(instance.slots.map((s) => [s.name, s.value])),
    ...(instance.initialPrompt === undefined ? {} : { initial_prompt: instance.initialPrompt }),
    request_order: instance.requestOrder,
    requests: Object.fromEntries(instance.requests.map((r) => [r.slot, r.index])),
    probes: Object.fromEntries(
      instance.probes.map((round, r) => [String(r), Object.fromEntries(round.map((p) => [p.slot, p.index]))]),
    ),
    lang: instance.lang,
  }
}

interface EventAction {
  type: string
  content: unknown
  label?: string
}
interface TurnEvent {
  from: string
  to: string
  timestamp?: string
  action: EventAction
}

export interface InteractionsOptions {
  player: ClemPlayer
  experiment: string
  gameId: number
  /** The ISO time of each message of `state.messages` (same index); events without one have no timestamp. */
  times?: readonly (string | undefined)[]
  /** When the episode began (the initial prompt's events). */
  startedAt?: string
}

const GM = 'GM'
const ANSWERER = 'Player 1'
const QUESTIONER = 'Player 2'
const py = (b: boolean) => (b ? 'True' : 'False')

/** clembench's interactions.json for one finished episode (see the module comment). */
export function clembenchInteractions(state: ScorekeepingState, opts: InteractionsOptions): Record<string, unknown> {
  const { instance } = state
  const words = instance.words
  const tries = maxTries(instance)
  const turns: TurnEvent[][] = [[]]
  let at: string | undefined = opts.startedAt ?? opts.times?.[0]
  const log = (from: string, to: string, action: EventAction) =>
    turns.at(-1)!.push({ from, to, ...(at === undefined ? {} : { timestamp: at }), action })
  const self = (type: string, content: unknown) => log(GM, GM, { type, content })

  if (instance.initialPrompt !== undefined) {
    log(GM, ANSWERER, { type: 'send message', content: instance.initialPrompt, label: 'pseudo' })
    log(ANSWERER, GM, { type: 'get message', content: words.ok, label: 'pseudo' })
  }
  state.messages.forEach((m, i) => {
    at = opts.times?.[i] ?? at
    switch (m.kind) {
      case 'request': {
        if (m.round > 1) turns.push([])
        const request =
          instance.requests.find((r) => r.slot === m.slot)?.text ?? m.text.replace(`${instance.tag}: `, '')
        log(GM, QUESTIONER, {
          type: 'send message',
          content: words.dummyPrompt ?? CLEMBENCH_EN_WORDS.dummyPrompt,
          label: 'context',
        })
        log(QUESTIONER, GM, { type: 'get message', content: request, label: 'response' })
        log(GM, ANSWERER, { type: 'send message', content: m.text, label: 'context' })
        return
      }
      case 'answer': {
        log(ANSWERER, GM, { type: 'get message', content: m.text, label: 'response' })
        const turn = state.turns.find((t) => t.round === m.round)
        if (!turn || turn.parsed === null) {
          self('invalid format', 'Abort: invalid format in slot filling.')
          return
        }
        self('metadata', `Slot filled: ${py(turn.filled)}`)
        for (const a of turn.anticipated)
          self(
            'metadata',
            `Value for ${a.slot.toUpperCase()} anticipated; ground truth turn updated from ${a.from} to ${a.to}.`,
          )
        return
      }
      case 'probe':
        log(GM, ANSWERER, { type: 'send message', content: m.text, label: 'forget' })
        return
      case 'probe-answer': {
        log(ANSWERER, GM, { type: 'get message', content: m.text, label: 'forget' })
        const value = parseProbeAnswer(m.text, words)
        self('parse', value === 1 ? words.yes : value === 0 ? words.no : 'NA')
        const valid = value !== 2
        if (!valid && m.try < tries) return
        const probe = state.probing[m.round]?.probes.find((p) => p.slot === m.slot)
        const target = m.slot.toUpperCase()
        self(
          'metadata',
          valid
            ? `Answer for ${target} valid after ${m.try} tries.`
            : `Answer for ${target} invalid after max attempts.`,
        )
        self('check', `Answer is ${probe && value === probe.gt ? '' : 'in'}correct.`)
        if (!valid) self('invalid format', 'Abort: invalid format in probing.')
        return
      }
    }
  })
  if (state.outcome !== null) self('end', 'Game finished.')

  const ep = episodeOf(state)
  const gtTurn = new Map(instance.slots.map((s, i) => [s.name, state.gtTurn[i]!]))
  return {
    meta: {
      game_name: CLEMBENCH_GAME,
      experiment_name: opts.experiment,
      game_id: opts.gameId,
      results_folder: opts.player.folder,
      clem_version: `Parley (clemcore ${CLEMCORE_LAYOUT_VERSION} layout)`,
      round_count: turns.length,
      completed: state.outcome !== null,
    },
    player_models: { '0': opts.player.modelSpec },
    players: {
      GM: { game_role: 'Game Master', model_name: 'programmatic' },
      [ANSWERER]: { game_role: 'Answerer', model_name: opts.player.modelName },
      [QUESTIONER]: { game_role: 'Questioner', model_name: 'programmatic' },
    },
    turns,
    probes: state.probing.map((r) =>
      r.probes.map((p) => {
        const base = { target: p.target, question: probeQuestion(instance, r.round, p.slot) ?? '', gt: p.gt }
        if (p.value === null) return base
        return { ...base, answer: p.answer, value: p.value, tries: p.value === 2 ? p.tries + 1 : p.tries }
      }),
    ),
    realised_slots: Object.fromEntries(instance.requestOrder.map((s) => [s, gtTurn.get(s)])),
    'Request Count': ep.requestCounts,
    'Parsed Request Count': ep.parsedRequestCounts,
    'Violated Request Count': ep.violatedRequestCounts,
    'Filled Slots': ep.filledSlots,
    Aborted: ep.aborted,
    'Played Probe Rounds': ep.playedProbeRounds,
  }
}

/** scores.json as clemcore's scorer stores it (`meta` and `players` stay empty for this game). */
export function clembenchScoresJson(state: ScorekeepingState): { meta: object; players: object } & ScoresJson {
  return { meta: {}, players: {}, ...scoresJson(episodeOf(state)) }
}

/** One finished episode for the results folder. */
export interface ResultsEpisode extends Omit<InteractionsOptions, 'experiment' | 'gameId'> {
  state: ScorekeepingState
  /** The instance's experiment (default "unnamed") and game id (default `fallbackGameId`). */
  fallbackGameId: number
}

/**
 * The results folder for finished episodes: path → JSON value. The k-th play (k ≥ 2) of the same game
 * by the same player goes under `results-<k>/` instead of `results/`, as clemcore keeps one episode per
 * instance and model. Unfinished episodes are left out.
 */
export function clembenchResultsFiles(episodes: readonly ResultsEpisode[]): Record<string, unknown> {
  const files: Record<string, unknown> = {}
  const plays = new Map<string, number>()
  for (const e of episodes) {
    if (e.state.outcome === null) continue
    const experiment = e.state.instance.experiment ?? 'unnamed'
    const gameId = e.state.instance.gameId ?? e.fallbackGameId
    const experimentPath = `${e.player.folder}/${CLEMBENCH_GAME}/${folderSafe(experiment)}`
    const key = `${experimentPath}/${gameId}`
    const k = (plays.get(key) ?? 0) + 1
    plays.set(key, k)
    const root = k === 1 ? 'results' : `results-${k}`
    const experimentJson = `${root}/${experimentPath}/experiment.json`
    files[experimentJson] ??= {
      name: experiment,
      timestamp: e.startedAt ?? e.times?.[0] ?? null,
      game_name: CLEMBENCH_GAME,
      player_models: { '0': e.player.modelSpec },
    }
    const dir = `${root}/${experimentPath}/${instanceDir(gameId)}`
    files[`${dir}/instance.json`] = clembenchInstanceJson(e.state.instance, gameId)
    files[`${dir}/interactions.json`] = clembenchInteractions(e.state, {
      player: e.player,
      experiment,
      gameId,
      times: e.times,
      startedAt: e.startedAt,
    })
    files[`${dir}/scores.json`] = clembenchScoresJson(e.state)
  }
  return files
}
