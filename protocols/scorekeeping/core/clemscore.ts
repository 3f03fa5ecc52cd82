/**
 * clembench scores (pure; imports nothing from lib/): Cohen's κ as scikit-learn computes it, the
 * "privateshared" (scorekeeping) game's turn and episode scores as `PrivateSharedScorer` logs them
 * (clp-research/clembench `privateshared/master.py`), and the benchmark table of clemcore's
 * `clemeval.py` (% Played, Quality Score, clemscore).
 *
 * Notation: gold g_i ∈ {0, 1} is the probe's ground truth, pred p_i ∈ {0, 1} (2 = an unparsable
 * answer, which only occurs in a round that was not played and is never scored).
 *
 * - accuracy = |{i : g_i = p_i}| / N (sklearn `accuracy_score`; NaN for N = 0).
 * - Cohen's κ (sklearn `cohen_kappa_score`, unweighted): C is the confusion matrix over the sorted
 *   union of labels (rows gold, columns pred), E_ij = colsum_i · rowsum_j / N, and
 *   κ = 1 − Σ_{i≠j} C_ij / Σ_{i≠j} E_ij, which equals (p_o − p_e)/(1 − p_e). When the expected
 *   disagreement Σ_{i≠j} E_ij is 0 (both raters used one and the same label) sklearn divides 0 by 0:
 *   older releases return NaN with numpy's RuntimeWarning, newer ones return `replace_undefined_by`
 *   (default NaN) with an UndefinedMetricWarning. Parley returns NaN. The sums are taken in numpy's
 *   order (pairwise summation over the row-major matrix), so the last bit agrees as well.
 * - Truncated κ = Python's max(0, κ): κ when κ > 0, otherwise 0 (also for NaN).
 * - Main Score = 100 · 2·SF·tκ/(SF + tκ), the harmonic mean of slot-filling accuracy SF and
 *   truncated κ; 0 when SF + tκ = 0; NaN when either is NaN (aborted).
 */

/** numpy's pairwise summation (what `np.sum` does on a contiguous float64 array), starting from 0. */
function pairwiseSum(a: readonly number[], start = 0, n = a.length): number {
  if (n < 8) {
    let res = 0
    for (let i = 0; i < n; i++) res += a[start + i]!
    return res
  }
  if (n <= 128) {
    const r = [0, 0, 0, 0, 0, 0, 0, 0].map((_, j) => a[start + j]!)
    let i = 8
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j]! += a[start + i + j]!
    let res = r[0]! + r[1]! + (r[2]! + r[3]!) + (r[4]! + r[5]! + (r[6]! + r[7]!))
    for (; i < n; i++) res += a[start + i]!
    return res
  }
  let n2 = Math.floor(n / 2)
  n2 -= n2 % 8
  return pairwiseSum(a, start, n2) + pairwiseSum(a, start + n2, n - n2)
}

function sortedLabels<T extends number | string>(a: readonly T[], b: readonly T[]): T[] {
  return [...new Set([...a, ...b])].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
}

/** sklearn `accuracy_score(gold, pred)`: the share of equal pairs (NaN when there are none). */
export function accuracy<T>(gold: readonly T[], pred: readonly T[]): number {
  if (gold.length !== pred.length)
    throw new RangeError(`accuracy: ${gold.length} gold labels, ${pred.length} predicted`)
  if (gold.length === 0) return Number.NaN
  let same = 0
  for (let i = 0; i < gold.length; i++) if (gold[i] === pred[i]) same++
  return same / gold.length
}

/**
 * sklearn `cohen_kappa_score(y1, y2)` (no weights, no sample weights, labels = the sorted union).
 * NaN when the expected disagreement is 0 (see the module comment) and for empty input.
 */
export function cohenKappa<T extends number | string>(y1: readonly T[], y2: readonly T[]): number {
  if (y1.length !== y2.length) throw new RangeError(`cohenKappa: ${y1.length} and ${y2.length} labels`)
  if (y1.length === 0) return Number.NaN
  const labels = sortedLabels(y1, y2)
  const k = labels.length
  const index = new Map(labels.map((l, i) => [l, i]))
  const confusion = Array.from({ length: k * k }, () => 0)
  for (let i = 0; i < y1.length; i++) confusion[index.get(y1[i]!)! * k + index.get(y2[i]!)!]!++
  const sum0 = labels.map((_, j) => labels.reduce((s, _l, i) => s + confusion[i * k + j]!, 0)) // column sums
  const sum1 = labels.map((_, i) => labels.reduce((s, _l, j) => s + confusion[i * k + j]!, 0)) // row sums
  const total = sum0.reduce((s, x) => s + x, 0)
  // expected = np.outer(sum0, sum1) / N; weights 1 off the diagonal, 0 on it
  const weightedExpected: number[] = []
  let disagreement = 0
  for (let i = 0; i < k; i++)
    for (let j = 0; j < k; j++) {
      weightedExpected.push(i === j ? 0 : (sum0[i]! * sum1[j]!) / total)
      if (i !== j) disagreement += confusion[i * k + j]!
    }
  return 1 - disagreement / pairwiseSum(weightedExpected)
}

/** Python's `max(0, kappa)`: kappa when it is greater than 0, else 0 (NaN gives 0). */
export function truncatedKappa(kappa: number): number {
  // biome-ignore lint/complexity/useMathMinMax: Math.max(NaN, 0) is NaN, Python's max(0, nan) is 0
  return kappa > 0 ? kappa : 0
}

/** `PrivateSharedScorer.compute_bench_score`: the harmonic mean of SF and truncated κ, × 100. */
export function mainScore(slotFillingAccuracy: number, truncated: number): number {
  if (Number.isNaN(slotFillingAccuracy) || Number.isNaN(truncated)) return Number.NaN
  if (slotFillingAccuracy + truncated === 0) return 0
  return 100 * ((2 * slotFillingAccuracy * truncated) / (slotFillingAccuracy + truncated))
}

/** One probe as the game logs it (`probes` in interactions.json): ground truth and parsed value. */
export interface LoggedProbe {
  gt: number
  /** 1 yes, 0 no, 2 an answer that never parsed. */
  value: number
}

/**
 * What the scorer reads from one episode (the keys the game master logs with `log_key`):
 * `probes` (per probing round, the probes asked, a failed round included), `Filled Slots`,
 * `Aborted`, `Played Probe Rounds`, and the three request counters per probing round (index r
 * counts the answerer replies in round r: the slot answer of round r and every probe try of probing
 * round r).
 */
export interface PrivateSharedEpisode {
  /** Number of slots n (the instance's; Middle-Accuracy uses it). */
  slots: number
  aborted: boolean
  playedProbeRounds: number
  probes: readonly (readonly LoggedProbe[])[]
  filledSlots: readonly boolean[]
  requestCounts: readonly number[]
  parsedRequestCounts: readonly number[]
  violatedRequestCounts: readonly number[]
}

export interface TurnScores {
  'Request Count': number
  'Parsed Request Count': number
  'Violated Request Count': number
  Accuracy: number
  /** From probing round 1 on: 1 when the answer of round t contained the requested slot's value. */
  'Slot Filled?'?: number
}

export interface EpisodeScores {
  /** Only when the middle probing round, int((n + 1)/2) − 1, was played. */
  'Middle-Accuracy'?: number
  Accuracy: number
  Kappa: number
  'Truncated Kappa': number
  'Slot-Filling-Accuracy': number
  'Main Score': number
  Aborted: number
  Lose: number
  Success: number
  'Request Count': number
  'Parsed Request Count': number
  'Violated Request Count': number
  'Request Success Ratio': number
}

export interface PrivateSharedScores {
  /** One entry per played probing round t = 0, 1, … */
  turns: TurnScores[]
  episode: EpisodeScores
}

const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0)

/** The middle probing round clembench reports: int((n + 1)/2) − 1 (2 for 5 slots, 4 for 10, 7 for 15). */
export const middleRound = (slots: number) => Math.trunc((slots + 1) / 2) - 1

/**
 * `PrivateSharedScorer.compute_scores`: turn scores for every played probing round, episode scores
 * NaN when aborted (except the counters, Aborted, Lose = Success = 0). Request Success Ratio is
 * parsed / requests (NaN if there were no requests, where Python would raise).
 */
export function privateSharedScores(ep: PrivateSharedEpisode): PrivateSharedScores {
  const { aborted } = ep
  const gold: number[] = []
  const pred: number[] = []
  const turns: TurnScores[] = []
  let middle: number | undefined
  for (let t = 0; t < ep.playedProbeRounds; t++) {
    const round = ep.probes[t] ?? []
    const g = round.map((p) => p.gt)
    const p = round.map((x) => x.value)
    gold.push(...g)
    pred.push(...p)
    const turn: TurnScores = {
      'Request Count': ep.requestCounts[t] ?? 0,
      'Parsed Request Count': ep.parsedRequestCounts[t] ?? 0,
      'Violated Request Count': ep.violatedRequestCounts[t] ?? 0,
      Accuracy: accuracy(g, p),
    }
    if (t !== 0) turn['Slot Filled?'] = ep.filledSlots[t - 1] ? 1 : 0
    turns.push(turn)
    if (t === middleRound(ep.slots)) middle = aborted ? Number.NaN : accuracy(g, p)
  }
  const acc = aborted ? Number.NaN : accuracy(gold, pred)
  const kappa = aborted ? Number.NaN : cohenKappa(gold, pred)
  const tk = aborted ? Number.NaN : truncatedKappa(kappa)
  const filled = ep.filledSlots.filter(Boolean).length
  const sf = aborted ? Number.NaN : filled / ep.filledSlots.length
  const success = aborted ? 0 : acc === 1 && sf === 1 ? 1 : 0
  const lose = aborted ? 0 : 1 - success
  const requests = sum(ep.requestCounts)
  const parsed = sum(ep.parsedRequestCounts)
  const episode: EpisodeScores = {
    ...(middle === undefined ? {} : { 'Middle-Accuracy': middle }),
    Accuracy: acc,
    Kappa: kappa,
    'Truncated Kappa': tk,
    'Slot-Filling-Accuracy': sf,
    'Main Score': mainScore(sf, tk),
    Aborted: aborted ? 1 : 0,
    Lose: lose,
    Success: success,
    'Request Count': requests,
    'Parsed Request Count': parsed,
    'Violated Request Count': sum(ep.violatedRequestCounts),
    'Request Success Ratio': requests === 0 ? Number.NaN : parsed / requests,
  }
  return { turns, episode }
}

type Nullable<T> = { [K in keyof T]: T[K] | null }

/** clembench's `scores.json` for one episode: NaN written as null (JSON has no NaN). */
export interface ScoresJson {
  'turn scores': Record<string, Nullable<TurnScores>>
  'episode scores': Nullable<EpisodeScores>
}

const nanToNull = <T extends object>(o: T): Nullable<T> =>
  Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, typeof v === 'number' && Number.isNaN(v) ? null : v]),
  ) as Nullable<T>

export function scoresJson(ep: PrivateSharedEpisode): ScoresJson {
  const s = privateSharedScores(ep)
  return {
    'turn scores': Object.fromEntries(s.turns.map((t, i) => [String(i), nanToNull(t)])),
    'episode scores': nanToNull(s.episode),
  }
}

// ---- clemcore clemeval.py: % Played, Quality Score, clemscore ----

/** numpy's `round(x, decimals)` (what pandas' DataFrame.round uses): rint(x·10^d)/10^d, ties to even. */
export function roundHalfEven(x: number, decimals = 2): number {
  if (!Number.isFinite(x)) return x
  const f = 10 ** decimals
  const y = x * f
  let r = Math.round(y)
  if (r - y === 0.5 && r % 2 !== 0) r -= 1
  return r / f
}

/** pandas' group mean: skips NaN, Kahan-compensated sum; NaN when nothing is left. */
export function pandasMean(xs: readonly number[]): number {
  let total = 0
  let compensation = 0
  let count = 0
  for (const x of xs) {
    if (Number.isNaN(x)) continue
    count++
    const y = x - compensation
    const t = total + y
    compensation = t - total - y
    total = t
  }
  return count === 0 ? Number.NaN : total / count
}

/** One scored episode for the benchmark table: its game, the model (pair) that played it, its scores. */
export interface EpisodeOutcome {
  game: string
  model: string
  /** Aborted (0/1 or a boolean); Played = 1 − Aborted. */
  aborted: number | boolean
  /** Main Score (NaN or null when aborted). */
  mainScore: number | null
}

export interface GameRow {
  game: string
  /** 100 · mean(Played), rounded to 2 decimals. */
  played: number
  /** mean(Main Score) over the played episodes (NaN skipped), rounded to 2 decimals; NaN if none. */
  quality: number
}

export interface ModelRow {
  model: string
  /** (averagePlayed / 100) · averageQuality, rounded to 2 decimals. */
  clemscore: number
  /** Macro-average of the games' % Played (each already rounded), rounded to 2 decimals. */
  averagePlayed: number
  /** Macro-average of the games' Quality Score (NaN games skipped), rounded to 2 decimals. */
  averageQuality: number
  games: GameRow[]
}

/**
 * clemcore `save_clem_table`: per game and model % Played and Quality Score, their macro-averages over
 * the games, and clemscore, with the same rounding steps. Models and games sorted by name.
 */
export function clemTable(episodes: readonly EpisodeOutcome[]): ModelRow[] {
  const byModel = new Map<string, Map<string, EpisodeOutcome[]>>()
  for (const e of episodes) {
    const games = byModel.get(e.model) ?? new Map<string, EpisodeOutcome[]>()
    byModel.set(e.model, games)
    games.set(e.game, [...(games.get(e.game) ?? []), e])
  }
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  return [...byModel.keys()].sort(byName).map((model) => {
    const games = byModel.get(model)!
    const rows: GameRow[] = [...games.keys()].sort(byName).map((game) => {
      const eps = games.get(game)!
      return {
        game,
        played: roundHalfEven(pandasMean(eps.map((e) => 1 - Number(e.aborted))) * 100),
        quality: roundHalfEven(pandasMean(eps.map((e) => e.mainScore ?? Number.NaN))),
      }
    })
    const averagePlayed = roundHalfEven(pandasMean(rows.map((r) => r.played)))
    const averageQuality = roundHalfEven(pandasMean(rows.map((r) => r.quality)))
    return {
      model,
      clemscore: roundHalfEven((averagePlayed / 100) * averageQuality),
      averagePlayed,
      averageQuality,
      games: rows,
    }
  })
}
