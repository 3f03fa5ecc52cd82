/**
 * Training a collaboration policy from collected trajectories (pure; the `rehac.train` operation and
 * `parley rehac train` both call it, so the app and the CLI give the same model for the same data):
 *
 *   1. the offline-RL rows at λ (core/advantages.ts: states seen with both actions, A(s,a));
 *   2. whole questions are held out: a row's question is its state's text before the first "<solver>"
 *      (the task line), and core/policy.ts splitByKey shuffles the sorted distinct questions with the
 *      seed and holds out round(fraction · n) of them (at least one, and at least one kept, when n ≥ 2);
 *   3. core/policy.ts trainPolicy on the kept rows (the paper's clipped objective, seeded);
 *   4. the offline estimate on the held-out questions' trees (core/policy.ts evaluateP), no LLM calls:
 *      - `meanChosenAdvantage`: for each held-out state with both actions, the advantage A(s, a*) of
 *        the action a* the policy picks (argmax), averaged with the state's visits as weight; with two
 *        actions A(s, a*) = ±(R̄(s,human) − R̄(s,agent)) / 2, so > 0 means it picks the better branch
 *        on average, and the agent-only / human-only baselines (the same figure for p = 0 / p = 1) are
 *        what the policy must beat;
 *      - `stateAccuracy`: the share of those states (with a non-zero advantage) where a* is the
 *        better action, i.e. agreement with the imitation file;
 *      - `humanRate`: the share of held-out states it gives to the human.
 *      This scores single decisions against the tree's Monte-Carlo returns; it is not the return of
 *      rolling the policy out through the tree (a state off the collected tree has no estimate).
 */
import { z } from 'zod'
import { advantageTables } from './advantages'
import {
  type AdvantageRow,
  type Evaluation,
  evaluate,
  evaluateP,
  type PolicyModel,
  splitByKey,
  trainPolicy,
} from './policy'

export const trainSettings = z.object({
  lambda: z.number().finite().min(0, 'λ must be at least 0.').max(1, 'λ is at most 1.').default(0.08),
  epochs: z.number().int('Whole epochs.').min(1, 'At least 1 epoch.').max(200, 'At most 200 epochs.').default(10),
  seed: z.number().int('A whole seed.').min(0).max(2_147_483_647).default(42),
  heldOutFraction: z
    .number()
    .min(0, 'The held-out fraction is from 0 to 0.9.')
    .max(0.9, 'The held-out fraction is from 0 to 0.9.')
    .default(0.2),
})
export type TrainSettings = z.output<typeof trainSettings>

/** Not enough data to train on (a message for the person, not a bug). */
export class TrainDataError extends Error {}

export interface TrainReport {
  /** Paste-ready as a `trained-policy` decider's model. */
  model: PolicyModel
  settings: TrainSettings
  data: {
    trajectories: number
    decisions: number
    states: number
    /** Offline-RL rows (two per state seen with both actions). */
    rows: number
    trainRows: number
    heldOutRows: number
    trainQuestions: number
    heldOutQuestions: number
  }
  /** −J̃ on the training rows after the last epoch. */
  finalLoss: number
  train: Evaluation
  /** The offline estimate on the held-out questions (null when nothing is held out). */
  heldOut: { policy: Evaluation; agentOnly: Evaluation; humanOnly: Evaluation } | null
}

/** The task text a state starts with (its question): what rows are held out by. */
export const questionOf = (row: { state: string }) => {
  const i = row.state.indexOf('<solver>')
  return i === -1 ? row.state : row.state.slice(0, i)
}

export function trainOnTrajectories(
  episodes: readonly { trajectory: string; f1: number }[],
  input: z.input<typeof trainSettings>,
): TrainReport {
  const settings = trainSettings.parse(input)
  const tables = advantageTables(episodes, { lambda: settings.lambda })
  const rows: AdvantageRow[] = tables.advantages.map((r) => ({
    state: r.state,
    action: r.action,
    reward: r.reward,
    count: r.count,
  }))
  if (rows.length === 0)
    throw new TrainDataError(
      `No state of the ${episodes.length} trajectories was reached with both actions, so there is no advantage to learn from: collect a trajectory tree first (a collection run).`,
    )
  const questions = new Set(rows.map(questionOf)).size
  const split =
    settings.heldOutFraction > 0 && questions >= 2
      ? splitByKey(rows, questionOf, { testFraction: settings.heldOutFraction, seed: settings.seed })
      : { train: rows, test: [], trainKeys: [...new Set(rows.map(questionOf))], testKeys: [] }
  const { model, history } = trainPolicy(split.train, { epochs: settings.epochs, seed: settings.seed })
  return {
    model,
    settings,
    data: {
      trajectories: episodes.length,
      decisions: tables.decisions,
      states: tables.states,
      rows: rows.length,
      trainRows: split.train.length,
      heldOutRows: split.test.length,
      trainQuestions: split.trainKeys.length,
      heldOutQuestions: split.testKeys.length,
    },
    finalLoss: history.at(-1)?.loss ?? Number.NaN,
    train: evaluate(model, split.train),
    heldOut: split.test.length
      ? {
          policy: evaluate(model, split.test),
          agentOnly: evaluateP(() => 0, split.test),
          humanOnly: evaluateP(() => 1, split.test),
        }
      : null,
  }
}

/** The one-line summary both the CLI and the operation give beside the model. */
export function trainSummary(r: TrainReport) {
  const pick = (e: Evaluation) => ({
    meanChosenAdvantage: e.meanChosenAdvantage,
    stateAccuracy: e.stateAccuracy,
    humanRate: e.humanRate,
    states: e.states,
  })
  return {
    ...r.settings,
    ...r.data,
    finalLoss: r.finalLoss,
    train: pick(r.train),
    heldOut: r.heldOut
      ? {
          policy: pick(r.heldOut.policy),
          agentOnly: pick(r.heldOut.agentOnly),
          humanOnly: pick(r.heldOut.humanOnly),
        }
      : null,
  }
}
