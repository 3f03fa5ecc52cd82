import { strToU8, zipSync } from 'fflate'
import { z } from 'zod'
import { clemTable, privateSharedScores, scoresJson } from '@/protocols/scorekeeping/core/clemscore'
import {
  DONE_REASONS,
  episodeOf,
  type ScorekeepingDoneReason,
  type ScorekeepingMessage,
  type ScorekeepingState,
  scorekeeping,
} from '@/protocols/scorekeeping/core'
import { replay } from '@/lib/protocols/types'
import {
  type ClemPlayer,
  clemModelPlayer,
  clemPersonPlayer,
  clembenchResultsFiles,
} from '@/protocols/scorekeeping/core/clembench-results'
import {
  Seats,
  db,
  pageInput,
  pageOf,
  replayCache,
  type ExportFile,
  type ExportTable,
  type LlmRef,
  type ViewContext,
} from '@/lib/server/sdk'

/**
 * What the scorekeeping pages and exports derive from the replayed episodes: the transcript of one
 * episode (the dialogue, and the probes as side questions with their tries), clembench's scores per
 * episode, the episode table, turn-level accuracy over probing rounds, and per player (a model, or a
 * person) % Played, Quality Score and clemscore as clemcore computes them.
 */
export const GAME = 'privateshared'

const nan = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? null : x)

/** The session page: the dialogue and the probes; ground truth only for those outside the game. */
export function scorekeepingSessionView(ctx: ViewContext<typeof scorekeeping>) {
  const { state } = ctx
  const player = ctx.mySeats.length > 0
  const done = state.outcome !== null
  const dialogue = state.messages
    .filter(
      (m): m is Extract<ScorekeepingMessage, { kind: 'request' | 'answer' }> =>
        m.kind === 'request' || m.kind === 'answer',
    )
    .map((m) => ({ seq: m.seq, kind: m.kind, round: m.round, text: m.text }))
  const tries = new Map<string, Array<{ seq: number; try: number; question: string; answer: string | null }>>()
  for (const m of state.messages) {
    if (m.kind !== 'probe' && m.kind !== 'probe-answer') continue
    const key = `${m.round}/${m.slot}`
    const list = tries.get(key) ?? []
    if (m.kind === 'probe') list.push({ seq: m.seq, try: m.try, question: m.text, answer: null })
    else {
      const t = list.find((x) => x.try === m.try)
      if (t) t.answer = m.text
    }
    tries.set(key, list)
  }
  return {
    experiment: state.instance.experiment ?? null,
    gameId: state.instance.gameId ?? null,
    tag: state.instance.tag,
    /** The answerer's private information (the person playing needs it; it is the game's premise). */
    slots: state.instance.slots,
    initialPrompt: state.instance.initialPrompt ?? null,
    words: { answer: state.instance.words.answer, aside: state.instance.words.aside },
    dialogue,
    probing: state.probing.map((r) => ({
      round: r.round,
      played: r.played,
      probes: r.probes.map((p) => ({
        slot: p.slot,
        value: p.value,
        tries: tries.get(`${r.round}/${p.slot}`) ?? [],
        // The ground truth of a probe is what the answerer is measured on: hidden from the player until the end.
        gt: player && !done ? null : p.gt,
      })),
    })),
    turns: state.turns.map((t) => ({
      round: t.round,
      slot: t.slot,
      filled: player && !done ? null : t.filled,
      anticipated: t.anticipated,
    })),
    outcome: state.outcome,
    outcomeLabel: state.outcome ? DONE_REASONS[state.outcome] : null,
    scores: done ? scoresJson(episodeOf(state)) : null,
  }
}
export type ScorekeepingSessionView = ReturnType<typeof scorekeepingSessionView>

/** One episode's result, replayed from its log once per session version (cached per process). */
interface Episode {
  sessionId: string
  runId: string
  repetition: number
  position: number
  status: string
  experiment: string
  gameId: number | null
  player: string
  outcome: ScorekeepingDoneReason | null
  scores: ReturnType<typeof privateSharedScores> | null
  json: ReturnType<typeof scoresJson> | null
  state: ScorekeepingState
  /** Who answered: the LLM (its connection, model and temperature) or the person's name. */
  answerer: { kind: 'llm'; model: LlmRef } | { kind: 'person'; name: string } | { kind: 'unclaimed' }
  /** When the session was created and when each message of `state.messages` was written (ms; kept small in the cache). */
  startedAt: number
  times: number[]
}

/** Who answered an episode: the answerer's model, or the person. */
function answererOf(
  seats: unknown,
  people: Array<{ seat: string; user: { name: string; email: string } | null }>,
): Episode['answerer'] {
  const parsed = Seats.safeParse(seats)
  const fill = parsed.success ? parsed.data.answerer : undefined
  if (fill?.kind === 'llm') return { kind: 'llm', model: fill.model }
  const person = people.find((p) => p.seat === 'answerer')?.user
  return person ? { kind: 'person', name: person.name || person.email } : { kind: 'unclaimed' }
}

/** Who played an episode, for the tables: the model (with its temperature), or the person. */
function playerOf(a: Episode['answerer']) {
  if (a.kind === 'llm') {
    const m = a.model
    return `${m.name ?? m.model ?? 'default model'}${m.temperature !== undefined ? ` · T=${m.temperature}` : ''}`
  }
  return a.kind === 'person' ? `${a.name} (person)` : 'unclaimed (person)'
}

const episodeCache = replayCache((s): Episode => {
  const state = replay(
    scorekeeping,
    scorekeeping.config.parse(s.config ?? {}),
    s.instance as never,
    s.messages.map((m) => m.body as ScorekeepingMessage),
  )
  const done = state.outcome !== null
  const answerer = answererOf(s.seats, s.people)
  return {
    sessionId: s.id,
    runId: s.runId ?? '',
    repetition: s.repetition,
    position: s.position,
    status: s.status,
    experiment: state.instance.experiment ?? 'unnamed',
    gameId: state.instance.gameId ?? null,
    player: playerOf(answerer),
    outcome: state.outcome,
    scores: done ? privateSharedScores(episodeOf(state)) : null,
    json: done ? scoresJson(episodeOf(state)) : null,
    state,
    answerer,
    startedAt: s.createdAt.getTime(),
    times: s.messages.map((m) => m.createdAt.getTime()),
  }
})

export async function episodes(where: { runId?: string; runIds?: string[] }): Promise<Episode[]> {
  const rows = await db.protocolSession.findMany({
    where: where.runIds ? { runId: { in: where.runIds } } : { runId: where.runId },
    orderBy: [{ runId: 'asc' }, { repetition: 'asc' }, { position: 'asc' }],
    select: { id: true, updatedAt: true },
  })
  return episodeCache.of(rows)
}

/** The clem table of finished episodes: per player, per experiment and over the game. */
function tables(list: Episode[]) {
  const done = list.filter((e) => e.scores)
  const outcome = (e: Episode, game: string) => ({
    game,
    model: e.player,
    aborted: e.scores?.episode.Aborted ?? 1,
    mainScore: nan(e.scores?.episode['Main Score']),
  })
  return {
    /** clemcore's table over the game (one game: clemscore = % Played / 100 × Quality). */
    overall: clemTable(done.map((e) => outcome(e, GAME))),
    /** The same per experiment (each experiment as its own "game"). */
    byExperiment: clemTable(done.map((e) => outcome(e, e.experiment))),
  }
}

/** Mean accuracy per probing round and experiment (played rounds only): the turn-level curves. */
function curves(list: Episode[]) {
  const acc = new Map<string, Map<number, { sum: number; n: number }>>()
  for (const e of list) {
    if (!e.scores) continue
    const key = `${e.player} · ${e.experiment}`
    const m = acc.get(key) ?? new Map<number, { sum: number; n: number }>()
    e.scores.turns.forEach((t, round) => {
      const x = m.get(round) ?? { sum: 0, n: 0 }
      x.sum += t.Accuracy
      x.n++
      m.set(round, x)
    })
    acc.set(key, m)
  }
  return [...acc.entries()].map(([series, m]) => ({
    series,
    points: [...m.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([round, x]) => ({ round, accuracy: x.sum / x.n, n: x.n })),
  }))
}

const row = (e: Episode) => ({
  sessionId: e.sessionId,
  repetition: e.repetition,
  experiment: e.experiment,
  gameId: e.gameId,
  player: e.player,
  status: e.status,
  outcome: e.outcome,
  mainScore: nan(e.scores?.episode['Main Score']),
  accuracy: nan(e.scores?.episode.Accuracy),
  kappa: nan(e.scores?.episode.Kappa),
  truncatedKappa: nan(e.scores?.episode['Truncated Kappa']),
  middleAccuracy: nan(e.scores?.episode['Middle-Accuracy']),
  slotFilling: nan(e.scores?.episode['Slot-Filling-Accuracy']),
  aborted: e.scores ? e.scores.episode.Aborted : null,
  success: e.scores ? e.scores.episode.Success : null,
  requests: e.scores?.episode['Request Count'] ?? null,
  parsedRequests: e.scores?.episode['Parsed Request Count'] ?? null,
  violatedRequests: e.scores?.episode['Violated Request Count'] ?? null,
})

/** The run page's part: the episode table (paged) and the run's clem numbers. */
export async function scorekeepingRunView(runId: string, rawArgs: Record<string, string | undefined>) {
  const { page, pageSize } = z.object(pageInput).parse(rawArgs)
  const list = await episodes({ runId: runId })
  const start = (page - 1) * pageSize
  return {
    ...tables(list),
    curves: curves(list),
    finished: list.filter((e) => e.scores).length,
    episodes: pageOf(list.slice(start, start + pageSize).map(row), list.length, page, pageSize),
  }
}
export type ScorekeepingRunView = Awaited<ReturnType<typeof scorekeepingRunView>>

/** Results: every scorekeeping run of the run's study side by side (models and people in one table). */
export async function scorekeepingDashboard(runId: string) {
  const run = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { studyId: true } })
  const runs = await db.run.findMany({
    where: { studyId: run.studyId, protocol: scorekeeping.id },
    orderBy: { createdAt: 'asc' },
    select: { id: true, name: true, status: true },
  })
  const list = await episodes({ runIds: runs.map((r) => r.id) })
  return { runs, ...tables(list), curves: curves(list), finished: list.filter((e) => e.scores).length }
}
export type ScorekeepingDashboard = Awaited<ReturnType<typeof scorekeepingDashboard>>

export const scorekeepingExports: Record<string, ExportTable> = {
  episodes: {
    label: 'Episode scores (one row per episode)',
    async *rows(runId) {
      for (const e of await episodes({ runId: runId })) yield row(e)
    },
  },
}

/** Who played an episode as clemcore names it: "<model>-t<temperature>" (the connection's default model when none was set), or the person. */
async function clemPlayers(list: Episode[]): Promise<Map<Episode, ClemPlayer>> {
  const ids = [...new Set(list.flatMap((e) => (e.answerer.kind === 'llm' ? [e.answerer.model.connectionId] : [])))]
  const connections = new Map(
    (
      await db.llmConnection.findMany({
        where: { id: { in: ids } },
        select: { id: true, defaultModel: true, provider: true },
      })
    ).map((c) => [c.id, c]),
  )
  const out = new Map<Episode, ClemPlayer>()
  for (const e of list) {
    const a = e.answerer
    if (a.kind === 'llm') {
      const c = connections.get(a.model.connectionId)
      const backend = c?.provider === 'openai-compatible' ? 'openai_compatible' : (c?.provider ?? 'unknown')
      out.set(e, clemModelPlayer(a.model.model ?? c?.defaultModel ?? 'default-model', a.model.temperature, backend))
    } else out.set(e, clemPersonPlayer(a.kind === 'person' ? a.name : 'unclaimed'))
  }
  return out
}

export const scorekeepingFiles: Record<string, ExportFile> = {
  clembench: {
    label: 'clembench results folder (zip)',
    description:
      "clemcore's results folder: results/<model>-t<temperature>/privateshared/<experiment>/experiment.json and instance_<game_id>/{instance.json, interactions.json, scores.json} per finished episode (clem score, clem transcribe and clem eval read it).",
    filename: 'clembench-results.zip',
    contentType: 'application/zip',
    async build(runId) {
      const list = (await episodes({ runId: runId })).filter((e) => e.json)
      const players = await clemPlayers(list)
      const json = clembenchResultsFiles(
        list.map((e) => ({
          state: e.state,
          player: players.get(e)!,
          fallbackGameId: e.position,
          times: e.times.map((t) => new Date(t).toISOString()),
          startedAt: new Date(e.startedAt).toISOString(),
        })),
      )
      const files: Record<string, Uint8Array> = {}
      for (const [path, value] of Object.entries(json)) files[path] = strToU8(JSON.stringify(value, null, 2))
      if (!Object.keys(files).length)
        files['results/README.txt'] = strToU8('No episode of this run has finished yet.\n')
      return zipSync(files)
    },
  },
}
