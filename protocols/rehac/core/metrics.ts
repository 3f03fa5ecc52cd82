/**
 * ReHAC's task reward and evaluation figures (rehac.md §1.4–1.5, §5.7):
 *   T = token F1 of the normalised answers (QA; InterCode's released `f1` key already holds its reward),
 *   C = human steps in the WHOLE trajectory (the count every row of Tables 1 and 4 satisfies, §4.6),
 *   R = T − λ·C,   HIR = Σ human steps / Σ steps, pooled over the set (§7 A7).
 */
import type { RehacLine } from './trajectory'

/**
 * SQuAD / HotpotQA answer normalisation: lower case, punctuation and the articles a/an/the removed,
 * whitespace collapsed. StrategyQA answers are true/false while people and models also write yes/no,
 * so a whole answer of "yes" / "no" is read as "true" / "false".
 */
export function normalizeAnswer(s: string): string {
  const out = s
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ')
  if (out === 'yes') return 'true'
  if (out === 'no') return 'false'
  return out
}

export function exactMatch(prediction: string, gold: string): boolean {
  return normalizeAnswer(prediction) === normalizeAnswer(gold)
}

const BOOLEAN_ANSWERS = new Set(['true', 'false', 'noanswer'])

/**
 * Token F1 as in the HotpotQA evaluation script: a yes/no (here true/false) answer scores only when it is
 * exactly the gold one, not by token overlap; otherwise the harmonic mean of token precision and recall
 * over the multiset of shared tokens.
 */
export function f1Score(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction)
  const g = normalizeAnswer(gold)
  if ((BOOLEAN_ANSWERS.has(p) || BOOLEAN_ANSWERS.has(g)) && p !== g) return 0
  const pt = p ? p.split(' ') : []
  const gt = g ? g.split(' ') : []
  const counts = new Map<string, number>()
  for (const t of gt) counts.set(t, (counts.get(t) ?? 0) + 1)
  let same = 0
  for (const t of pt) {
    const c = counts.get(t) ?? 0
    if (c > 0) {
      same++
      counts.set(t, c - 1)
    }
  }
  if (same === 0) return 0
  const precision = same / pt.length
  const recall = same / gt.length
  return (2 * precision * recall) / (precision + recall)
}

/** Steps and human steps of a trajectory text: one per line starting with "<solver> ". */
export function countSolvers(trajectory: string): { steps: number; human: number } {
  let steps = 0
  let human = 0
  let at = trajectory.startsWith('<solver>') ? 0 : nextLine(trajectory, 0)
  while (at !== -1) {
    steps++
    if (trajectory.startsWith('<solver> human', at)) human++
    at = nextLine(trajectory, at + 1)
  }
  return { steps, human }
}

function nextLine(text: string, from: number): number {
  const j = text.indexOf('\n<solver>', from)
  return j === -1 ? -1 : j + 1
}

/** R = T − λ·C for one trajectory. */
export const rehacReward = (t: number, humanSteps: number, lambda: number) => t - lambda * humanSteps

export interface RehacEvaluation {
  trajectories: number
  /** Mean task reward (the `f1` field). */
  T: number
  /** Mean exact match (true / 1 counts 1). */
  em: number
  /** Human steps over all trajectories. */
  humanSteps: number
  /** Steps over all trajectories. */
  steps: number
  /** λ · mean human steps per trajectory. */
  cost: number
  /** Mean of T − λ·C per trajectory. */
  R: number
  /** Pooled human intervention rate: humanSteps / steps. */
  hir: number
}

/**
 * The figures of `evaluate`, one trajectory at a time (a streamed file is never held whole): sums run
 * in file order, so the result is the same, bit for bit, as `evaluate` on the same lines.
 */
export class RehacEvaluator {
  private n = 0
  private t = 0
  private em = 0
  private human = 0
  private steps = 0
  private r = 0

  constructor(readonly lambda: number) {}

  add(line: Pick<RehacLine, 'trajectory' | 'em' | 'f1'>): void {
    const c = countSolvers(line.trajectory)
    this.n++
    this.t += line.f1
    this.em += typeof line.em === 'boolean' ? (line.em ? 1 : 0) : line.em
    this.human += c.human
    this.steps += c.steps
    this.r += rehacReward(line.f1, c.human, this.lambda)
  }

  result(): RehacEvaluation {
    const n = this.n
    return {
      trajectories: n,
      T: n ? this.t / n : 0,
      em: n ? this.em / n : 0,
      humanSteps: this.human,
      steps: this.steps,
      cost: n ? (this.lambda * this.human) / n : 0,
      R: n ? this.r / n : 0,
      hir: this.steps ? this.human / this.steps : 0,
    }
  }
}

/** The figures `parley rehac eval` prints for a released or exported file at λ (fractions, not ×100). */
export function evaluate(lines: readonly RehacLine[], lambda: number): RehacEvaluation {
  const e = new RehacEvaluator(lambda)
  for (const line of lines) e.add(line)
  return e.result()
}
