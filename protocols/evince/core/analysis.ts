/**
 * What the pages and exports of a debate run derive from replayed debates (pure): one flat record per
 * round, one result per case, batch accuracy of A alone, B's first answer and the debate, and the
 * confusion of the final top-1 against the ground truth.
 */
import { accuracy, canonicalLabel, displayName, entropy, type LabelProb, type RoundMetrics, rankOf } from './metrics'
import { describeRefused, type RefusedMessage } from '../../../lib/protocols/types'
import { type EvinceInstance, type EvinceRound, type EvinceState, finalDistribution } from './protocol'

/** One round's numbers, flat: what the charts, the metrics table and the rounds export show. */
export type RoundPoint = { round: number; delta: number } & Omit<
  RoundMetrics,
  'labels' | 'wdOrdinal' | 'rawSumA' | 'rawSumB' | 'warnings'
> & { critA: number | null; critB: number | null; crit: number | null }

/** The complete rounds (both turns in) as flat points. */
export function roundPoints(rounds: readonly EvinceRound[]): RoundPoint[] {
  return rounds.flatMap((r) => {
    if (!r.metrics) return []
    const { labels: _l, wdOrdinal: _o, rawSumA: _a, rawSumB: _b, warnings: _w, ...metrics } = r.metrics
    return [
      {
        round: r.round,
        delta: r.delta,
        ...metrics,
        critA: r.critA?.score ?? null,
        critB: r.critB?.score ?? null,
        crit: r.crit ?? null,
      },
    ]
  })
}

export interface CaseResult {
  sessionId: string
  position: number
  status: string
  stopReason: string | null
  symptoms: string
  truth: string
  rounds: number
  aloneA: LabelProb[] | null
  firstB: LabelProb[] | null
  final: LabelProb[] | null
  /** EnToPPS (appendix F) of the same last round, for comparison. */
  entopps: LabelProb[] | null
  finalEntropy: number | null
  /**
   * Why the case is left out of the results, when its stored log holds a message the rules refuse
   * (written before the rule existed, e.g. a distribution summing to 200 %); null otherwise.
   */
  excluded: string | null
}

/**
 * A replayed debate as one case's result (finals only for finished debates). A debate whose log the
 * rules refuse at some message (`refused`, from `replayAccepted`) is excluded: no distribution of it
 * is counted or charted, and `excluded` says which message broke which rule.
 */
export function caseResult(
  s: { id: string; position: number; status: string; stopReason: string | null },
  instance: EvinceInstance,
  state: EvinceState,
  refused: RefusedMessage | null = null,
): CaseResult {
  const final = finalDistribution(state)
  const first = state.rounds[0]
  const done = s.status === 'done'
  if (refused)
    return {
      sessionId: s.id,
      position: s.position,
      status: s.status,
      stopReason: s.stopReason,
      symptoms: instance.input.symptoms,
      truth: instance.prediction,
      rounds: state.rounds.filter((r) => r.A && r.B).length,
      aloneA: null,
      firstB: null,
      final: null,
      entopps: null,
      finalEntropy: null,
      excluded: describeRefused(refused),
    }
  return {
    sessionId: s.id,
    position: s.position,
    status: s.status,
    stopReason: s.stopReason,
    symptoms: instance.input.symptoms,
    truth: instance.prediction,
    rounds: state.rounds.filter((r) => r.A && r.B).length,
    aloneA: first?.A?.predictions ?? null,
    firstB: first?.B?.predictions ?? null,
    final: done ? (final?.crit ?? null) : null,
    entopps: done ? (final?.entopps ?? null) : null,
    finalEntropy: done && final ? entropy(final.crit.map((p) => p.probability)) : null,
    excluded: null,
  }
}

/**
 * Accuracy (top-1, top-k, MRR with 95% intervals) of A alone, B's first answer and the debate, over
 * the finished cases with a ground truth; excluded cases (see {@link CaseResult.excluded}) are not
 * counted, and `excluded` says how many were left out.
 */
export function batchAccuracy(cases: CaseResult[], k: number, aliases: Record<string, string>) {
  const finished = cases.filter((c) => c.truth && c.status === 'done')
  const withTruth = finished.filter((c) => !c.excluded)
  const of = (pick: (c: CaseResult) => LabelProb[] | null) =>
    accuracy(
      withTruth.flatMap((c) => {
        const d = pick(c)
        return d ? [{ truth: c.truth, final: d }] : []
      }),
      k,
      aliases,
    )
  return {
    n: withTruth.length,
    excluded: finished.length - withTruth.length,
    rows: [
      { key: 'A', label: 'Debater A alone (round 1)', ...of((c) => c.aloneA) },
      { key: 'B', label: "Debater B, round 1 (after seeing A's answer)", ...of((c) => c.firstB) },
      { key: 'debate', label: 'EVINCE debate (CRIT-weighted P_f)', ...of((c) => c.final) },
      { key: 'entopps', label: 'EVINCE debate, EnToPPS combination', ...of((c) => c.entopps) },
    ],
  }
}

/** Final top-1 against the ground truth, labels canonicalised: {truth → {predicted → count}}. */
export function confusion(cases: CaseResult[], aliases: Record<string, string>) {
  const m = new Map<string, Map<string, number>>()
  // How each label is written in the cases: the truth as the case set writes it, a prediction as the
  // debate listed it (parentheticals removed, as the metrics name labels); the first spelling wins.
  const names = new Map<string, string>()
  const name = (c: string, written: string) => {
    if (!names.has(c)) names.set(c, displayName(written))
  }
  for (const c of cases) {
    if (!c.truth || !c.final?.length || c.excluded) continue
    const t = canonicalLabel(c.truth, aliases)
    const p = canonicalLabel(c.final[0]?.label ?? '', aliases)
    name(t, c.truth)
    const row = m.get(t) ?? new Map<string, number>()
    row.set(p, (row.get(p) ?? 0) + 1)
    m.set(t, row)
  }
  for (const c of cases)
    if (c.truth && c.final?.[0] && !c.excluded) name(canonicalLabel(c.final[0].label, aliases), c.final[0].label)
  const truths = [...m.keys()].sort()
  const predicted = [...new Set([...m.values()].flatMap((r) => [...r.keys()]))].sort()
  // The square table: one label order on both axes (the truths, then labels only ever predicted),
  // so the diagonal is exactly the correct cases.
  const labels = [...truths, ...predicted.filter((p) => !m.has(p))]
  return {
    truths,
    predicted,
    counts: truths.map((t) => predicted.map((p) => m.get(t)?.get(p) ?? 0)),
    labels,
    names: labels.map((l) => names.get(l) ?? l),
    matrix: labels.map((t) => labels.map((p) => m.get(t)?.get(p) ?? 0)),
  }
}

/**
 * A distribution as one column per item for CSV (`<prefix>_<i>_label`, `<prefix>_<i>_probability`,
 * i = 1..slots, empty past the end of the list), so no cell holds a JSON array.
 */
export function distributionColumns(
  prefix: string,
  list: ReadonlyArray<{ label: string; probability: number }> | null | undefined,
  slots: number,
): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {}
  for (let i = 0; i < slots; i++) {
    const item = list?.[i]
    out[`${prefix}_${i + 1}_label`] = item?.label ?? null
    out[`${prefix}_${i + 1}_probability`] = item?.probability ?? null
  }
  return out
}

/** A list of texts as one CSV cell, items separated by " | " (documented in the README). */
export const textList = (items: readonly string[] | null | undefined) => (items?.length ? items.join(' | ') : null)

/**
 * Whether the final top-1 of a finished case is its ground truth (labels compared as the accuracy
 * table compares them: canonicalised, with the run's aliases and label merges); null without a
 * ground truth or a final distribution.
 */
export function top1Correct(
  truth: string,
  final: readonly LabelProb[] | null,
  aliases: Record<string, string>,
): boolean | null {
  if (!truth || !final?.length) return null
  return rankOf(truth, final, aliases) === 1
}

export interface MergedPrediction {
  /** The label as the metrics name it: the first spelling, parentheticals removed. */
  label: string
  /** The probabilities of every listed label that canonicalises to it, added. */
  probability: number
  justification: string
  /** The labels as the debater wrote them, when they differ from `label` (or were merged). */
  listedAs: string[]
}

/**
 * A debater's list as the metrics see it (protocols/evince/core/metrics `align`): labels canonicalised with
 * the run's aliases, duplicates merged by adding their probabilities, named by their first spelling
 * without parentheticals; the order is the debater's.
 */
export function mergedPredictions(
  predictions: ReadonlyArray<{ label: string; probability: number; justification?: string }>,
  aliases: Record<string, string> = {},
): MergedPrediction[] {
  const out = new Map<string, MergedPrediction>()
  for (const p of predictions) {
    const c = canonicalLabel(p.label, aliases) || p.label
    const had = out.get(c)
    if (had) {
      had.probability += p.probability
      had.listedAs.push(p.label)
      if (p.justification)
        had.justification = had.justification ? `${had.justification} ${p.justification}` : p.justification
    } else {
      out.set(c, {
        label: displayName(p.label),
        probability: p.probability,
        justification: p.justification ?? '',
        listedAs: [p.label],
      })
    }
  }
  return [...out.values()].map((m) =>
    m.listedAs.length === 1 && m.listedAs[0] === m.label ? { ...m, listedAs: [] } : m,
  )
}
