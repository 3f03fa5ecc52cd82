/**
 * ReHAC collaboration policy π^collab (pure). The paper's policy is LLaMA-2 + LoRA with a 2-way head
 * (rehac.md §2.1); Parley trains a small logistic model instead, over hand-documented text features,
 * with the paper's offline objective (Eqs. 6–8, rehac.md §2.2):
 *
 *   maximise  J̃(θ) = Σ_rows c · [ min(r·A, clip(r, 1−ε, 1+ε)·A) + α·H(π_θ(·|s)) ] / Σ c   − (l2/2)·‖w‖²
 *   r = π_θ(a|s) / π_beh(a|s),  π_beh = 0.5 (uniform collection, rehac.md §1.6),  ε = 0.3
 *   H(π(·|s)) = −Σ_a π(a|s)·ln π(a|s)
 *
 * The training loss is −J̃. Choices where the paper is open (see rehac.md A10):
 * - The ratio r carries gradient and the clipped term is PPO's min(r·A, clip(r)·A), as the task asks;
 *   the authors' code instead treats the ratio as a constant weight and multiplies it by `count`
 *   before clipping. Here `count` (how many sampled trajectories passed through (s, a)) weights the
 *   row in the mean instead (`weightByCount`, default on), so a prefix seen 10 times counts 10 times.
 * - Entropy is added once per row, as in the authors' code (a state with both actions gets it twice).
 * - A small L2 penalty (default 1e-4) keeps hashed weights bounded; set l2 = 0 for the bare objective.
 *
 * Model: p_human = π_θ(1|s) = σ(b + w·x(s)), action 0 = agent, 1 = human (the paper's coding). x(s)
 * is the feature vector of `featurize` below; every feature is documented there. Training is
 * mini-batch Adam (written here, analytic gradients checked by finite differences in policy.test.ts),
 * deterministic for a seed: the seeded PRNG (mulberry32) draws the initial weights and each epoch's
 * shuffle, and nothing else is random.
 */
import { z } from 'zod'
import { fnv1a } from '../../../lib/llm/text'

// ───────────────────────────── rows ─────────────────────────────

/** One offline-RL row (rehac.md §2.3 step 5): `reward` is the advantage A(s, a), not a return. */
export const advantageRow = z.object({
  state: z.string().max(200_000),
  action: z.union([z.literal(0), z.literal(1)]),
  reward: z.number().finite(),
  count: z.number().int().min(1).max(1_000_000),
})
export type AdvantageRow = z.infer<typeof advantageRow>

/** π_beh of the collection: each solver with probability 0.5 (rehac.md §1.6, §3.1). */
export const BEHAVIOUR_PROB = 0.5
/** ε of the importance-weight clip (rehac.md Table 3 / A2: 0.3 for every experiment). */
export const DEFAULT_EPSILON = 0.3

// ───────────────────────────── seeded randomness ─────────────────────────────

/** mulberry32: a 32-bit seeded PRNG, uniform in [0, 1). Used for init and shuffling only. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function shuffleInPlace<T>(items: T[], rand: () => number): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    const tmp = items[i]!
    items[i] = items[j]!
    items[j] = tmp
  }
}

// ───────────────────────────── features ─────────────────────────────

export const featureConfig = z.object({
  /** Size of the hashed text block (unigrams + bigrams). */
  hashDim: z.number().int().min(16).max(65_536).default(4096),
  /** How many of the most recent finished steps feed the text block (1 = only the last step). */
  lastSteps: z.number().int().min(0).max(10).default(1),
  /** Also hash the question's unigrams (namespace "q:"). Off by default: held-out questions are new. */
  questionTokens: z.boolean().default(false),
  /** Include bigrams of the step text, not only unigrams. */
  bigrams: z.boolean().default(true),
})
export type FeatureConfig = z.output<typeof featureConfig>

/**
 * Dense block, in this order (one-hot unless stated; "capped" = larger values share the last slot):
 *  - t: finished steps so far (the number of `<solver> agent|human` markers), 0..9 capped   → 10
 *  - humans so far, 0..5 capped                                                            → 6
 *  - agents so far, 0..5 capped                                                            → 6
 *  - last solver: none / agent / human                                                     → 3
 *  - last step's action: none / Search / Lookup / Finish / SQL-or-other                    → 5
 *  - last step's length bucket: floor(log2(chars + 1)), 0..15 capped                       → 16
 * Then the hashed block (hashDim slots): the lowercase word tokens (Unicode letters/digits runs) of
 * the last `lastSteps` steps' text (Thought, Action and Observation lines, markers excluded) as
 * unigrams "s:w" and bigrams "s:w1 w2", plus question unigrams "q:w" if `questionTokens`; each
 * distinct key sets slot fnv1a(key) mod hashDim to 1 (presence, not counts; collisions add), and the
 * block is scaled to unit L2 norm so a long Wikipedia observation does not outweigh a short step.
 */
const T_SLOTS = 10
const H_SLOTS = 6
const A_SLOTS = 6
const LAST_SOLVER_SLOTS = 3
const ACTION_SLOTS = 5
const LEN_SLOTS = 16
export const DENSE_SIZE = T_SLOTS + H_SLOTS + A_SLOTS + LAST_SOLVER_SLOTS + ACTION_SLOTS + LEN_SLOTS

export function featureSize(config: FeatureConfig): number {
  return DENSE_SIZE + config.hashDim
}

/** A sparse feature vector: parallel index/value arrays. */
export interface SparseVec {
  idx: Int32Array
  val: Float64Array
}

/** The parts of a state text the features read (exported for tests and for the deciders' `t`). */
export interface ParsedState {
  question: string
  solvers: ('agent' | 'human')[]
  /** Text of each finished step (between its marker and the next), markers removed. */
  steps: string[]
}

const MARKER = /<solver> (agent|human)\n/g

export function parseState(state: string): ParsedState {
  const qMatch = /^Question: (.*)$/m.exec(state)
  const question = qMatch ? qMatch[1]! : ''
  const solvers: ('agent' | 'human')[] = []
  const starts: number[] = []
  const ends: number[] = []
  for (const m of state.matchAll(MARKER)) {
    solvers.push(m[1] as 'agent' | 'human')
    starts.push(m.index)
    ends.push(m.index + m[0].length)
  }
  const steps: string[] = []
  for (let i = 0; i < solvers.length; i++) {
    let stop = i + 1 < starts.length ? starts[i + 1]! : state.length
    // The open marker the state ends with ("…\n<solver>") is not part of the last step.
    if (i + 1 === solvers.length) {
      const open = state.lastIndexOf('<solver>')
      if (open >= ends[i]!) stop = open
    }
    steps.push(state.slice(ends[i]!, stop).trim())
  }
  return { question, solvers, steps }
}

function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
}

function actionSlot(step: string): number {
  const m = /Action \d+:\s*(\w+)/.exec(step)
  if (!m) return step.length === 0 ? 0 : 4
  const kind = m[1]!.toLowerCase()
  if (kind === 'search') return 1
  if (kind === 'lookup') return 2
  if (kind === 'finish') return 3
  return 4
}

export function featurize(state: string, config: FeatureConfig): SparseVec {
  const parsed = parseState(state)
  const t = parsed.solvers.length
  const humans = parsed.solvers.filter((s) => s === 'human').length
  const agents = t - humans
  const last = parsed.steps[t - 1] ?? ''
  const lastSolver = parsed.solvers[t - 1]
  const dense: number[] = []
  let base = 0
  dense.push(base + Math.min(t, T_SLOTS - 1))
  base += T_SLOTS
  dense.push(base + Math.min(humans, H_SLOTS - 1))
  base += H_SLOTS
  dense.push(base + Math.min(agents, A_SLOTS - 1))
  base += A_SLOTS
  dense.push(base + (lastSolver === undefined ? 0 : lastSolver === 'agent' ? 1 : 2))
  base += LAST_SOLVER_SLOTS
  dense.push(base + (t === 0 ? 0 : actionSlot(last)))
  base += ACTION_SLOTS
  dense.push(base + Math.min(Math.floor(Math.log2(last.length + 1)), LEN_SLOTS - 1))

  const keys = new Set<string>()
  for (const step of parsed.steps.slice(Math.max(0, t - config.lastSteps))) {
    const toks = tokens(step)
    for (let i = 0; i < toks.length; i++) {
      keys.add(`s:${toks[i]}`)
      if (config.bigrams && i + 1 < toks.length) keys.add(`s:${toks[i]} ${toks[i + 1]}`)
    }
  }
  if (config.questionTokens) for (const w of tokens(parsed.question)) keys.add(`q:${w}`)
  const hashed = new Map<number, number>()
  for (const k of keys) {
    const slot = DENSE_SIZE + (fnv1a(k) % config.hashDim)
    hashed.set(slot, (hashed.get(slot) ?? 0) + 1)
  }
  let norm = 0
  for (const v of hashed.values()) norm += v * v
  norm = Math.sqrt(norm)
  const n = dense.length + hashed.size
  const idx = new Int32Array(n)
  const val = new Float64Array(n)
  dense.forEach((d, i) => {
    idx[i] = d
    val[i] = 1
  })
  let i = dense.length
  for (const [slot, v] of hashed) {
    idx[i] = slot
    val[i] = v / norm
    i++
  }
  return { idx, val }
}

// ───────────────────────────── model ─────────────────────────────

export const policyModel = z
  .object({
    kind: z.literal('rehac-logistic'),
    version: z.literal(1),
    features: featureConfig,
    bias: z.number().finite(),
    weights: z.array(z.number().finite().min(-1e6).max(1e6)).max(DENSE_SIZE + 65_536),
  })
  .refine((m) => m.weights.length === featureSize(m.features), {
    message: 'weights must have DENSE_SIZE + hashDim entries',
    path: ['weights'],
  })
export type PolicyModel = z.output<typeof policyModel>

export function serialiseModel(model: PolicyModel): string {
  return JSON.stringify(policyModel.parse(model))
}

/** Parses a model from JSON text (bounded: at most 4 MB) or from an already-decoded object. */
export function parseModel(input: string | unknown): PolicyModel {
  if (typeof input === 'string') {
    if (input.length > 4_000_000) throw new Error('policy model JSON is larger than 4 MB')
    return policyModel.parse(JSON.parse(input))
  }
  return policyModel.parse(input)
}

function sigmoid(z: number): number {
  if (z >= 0) return 1 / (1 + Math.exp(-z))
  const e = Math.exp(z)
  return e / (1 + e)
}

function logit(x: SparseVec, weights: ArrayLike<number>, bias: number): number {
  let z = bias
  for (let i = 0; i < x.idx.length; i++) z += weights[x.idx[i]!]! * x.val[i]!
  return z
}

/** π_θ(human | s) for a state text (the state ends with the open "<solver>" marker). */
export function pHuman(model: PolicyModel, stateText: string): number {
  return sigmoid(logit(featurize(stateText, model.features), model.weights, model.bias))
}

/**
 * The argmax rule shared by evaluation and the deciders: human iff p_human > 0.5. A tie (0.5) goes to
 * the agent, the choice that costs no human intervention.
 */
export function argmaxHuman(p: number): boolean {
  return p > 0.5
}

// ───────────────────────────── objective ─────────────────────────────

export interface ObjectiveParams {
  epsilon: number
  alpha: number
  behaviourProb: number
}

/**
 * One row's surrogate, as a function of the logit z = logit π_θ(human|s): value
 * min(r·A, clip(r)·A) + α·H and its derivative with respect to z.
 * dr/dz = ±p(1−p)/π_beh (+ for human, − for agent); dH/dz = −z·p(1−p).
 * Where the clipped branch is the min, the value does not depend on θ (PPO), so its slope is 0; at the
 * boundary r = 1±ε both branches are equal and the unclipped slope is used.
 */
export function rowSurrogate(
  z: number,
  action: 0 | 1,
  A: number,
  { epsilon, alpha, behaviourProb }: ObjectiveParams,
): { value: number; surrogate: number; ratio: number; entropy: number; dz: number } {
  const p = sigmoid(z)
  const pa = action === 1 ? p : 1 - p
  const ratio = pa / behaviourProb
  const clipped = Math.min(Math.max(ratio, 1 - epsilon), 1 + epsilon)
  const unclippedTerm = ratio * A
  const clippedTerm = clipped * A
  const surrogate = Math.min(unclippedTerm, clippedTerm)
  const pq = p * (1 - p)
  const slopeRatio = ((action === 1 ? 1 : -1) * pq) / behaviourProb
  const dSurr = unclippedTerm <= clippedTerm ? A * slopeRatio : 0
  // Entropy of a Bernoulli from the logit, stable for large |z|: H = softplus(z) − p·z.
  const softplus = z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z))
  const entropy = softplus - p * z
  const dH = -z * pq
  return { value: surrogate + alpha * entropy, surrogate, ratio, entropy, dz: dSurr + alpha * dH }
}

export interface EncodedRow {
  x: SparseVec
  action: 0 | 1
  A: number
  weight: number
}

/**
 * The loss −J̃ over `rows` (weights normalised by their sum) plus (l2/2)·‖w‖² (bias not penalised),
 * and its gradient. `grad` has one entry per weight; `gradBias` is separate.
 */
export function lossAndGradient(
  weights: ArrayLike<number>,
  bias: number,
  rows: readonly EncodedRow[],
  params: ObjectiveParams & { l2: number },
): { loss: number; grad: Float64Array; gradBias: number } {
  const grad = new Float64Array(weights.length)
  let gradBias = 0
  let total = 0
  let wsum = 0
  for (const r of rows) wsum += r.weight
  if (wsum === 0) wsum = 1
  for (const r of rows) {
    const z = logit(r.x, weights, bias)
    const s = rowSurrogate(z, r.action, r.A, params)
    const c = r.weight / wsum
    total += c * s.value
    // d(−J)/dz = −c·dz
    const g = -c * s.dz
    if (g !== 0) {
      for (let i = 0; i < r.x.idx.length; i++) grad[r.x.idx[i]!]! += g * r.x.val[i]!
      gradBias += g
    }
  }
  let reg = 0
  if (params.l2 > 0) {
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i]!
      reg += w * w
      grad[i]! += params.l2 * w
    }
  }
  return { loss: -total + 0.5 * params.l2 * reg, grad, gradBias }
}

// ───────────────────────────── training ─────────────────────────────

export const trainOptions = z.object({
  epochs: z.number().int().min(1).max(10_000).default(10),
  lr: z.number().positive().max(10).default(0.05),
  epsilon: z.number().min(0).max(1).default(DEFAULT_EPSILON),
  /** Entropy coefficient α; rehac.md Table 3 uses 0.1 for StrategyQA (0 to 0.1 elsewhere). */
  alpha: z.number().min(0).max(10).default(0.1),
  seed: z.number().int().default(42),
  /** rehac.md Table 3: 64. */
  batchSize: z.number().int().min(1).max(1_000_000).default(64),
  l2: z.number().min(0).max(10).default(1e-4),
  weightByCount: z.boolean().default(true),
  optimizer: z.enum(['adam', 'sgd']).default('adam'),
  behaviourProb: z.number().gt(0).lt(1).default(BEHAVIOUR_PROB),
  /** Standard deviation-like scale of the uniform initial weights (±initScale). */
  initScale: z.number().min(0).max(1).default(0.01),
  features: featureConfig.default(featureConfig.parse({})),
})
export type TrainOptions = z.input<typeof trainOptions>

export interface TrainResult {
  model: PolicyModel
  /** The full-training-set loss (−J̃, incl. L2) after each epoch. */
  history: { epoch: number; loss: number }[]
}

export function encodeRows(rows: readonly AdvantageRow[], config: FeatureConfig, weightByCount = true): EncodedRow[] {
  const cache = new Map<string, SparseVec>()
  return rows.map((r) => {
    let x = cache.get(r.state)
    if (!x) {
      x = featurize(r.state, config)
      cache.set(r.state, x)
    }
    return { x, action: r.action, A: r.reward, weight: weightByCount ? r.count : 1 }
  })
}

/**
 * Trains the logistic policy on advantage rows. `onStep` (not part of the options' schema) is called
 * after every mini-batch; the bench uses it to sample memory.
 */
export function trainPolicy(
  rows: readonly AdvantageRow[],
  options: TrainOptions = {},
  onStep?: (epoch: number, batch: number) => void,
): TrainResult {
  const opts = trainOptions.parse(options)
  // Rows come from another module (advantages.ts) or a file: check them once at this boundary.
  for (const r of rows) advantageRow.parse(r)
  const config = opts.features
  const D = featureSize(config)
  const rand = mulberry32(opts.seed)
  const weights = new Float64Array(D)
  for (let i = 0; i < D; i++) weights[i] = (rand() * 2 - 1) * opts.initScale
  let bias = 0
  const encoded = encodeRows(rows, config, opts.weightByCount)
  const params = { epsilon: opts.epsilon, alpha: opts.alpha, behaviourProb: opts.behaviourProb, l2: opts.l2 }

  // Adam state (β1 = 0.9, β2 = 0.999, ε̂ = 1e-8, Kingma & Ba 2015), one slot per weight plus the bias.
  const m = new Float64Array(D + 1)
  const v = new Float64Array(D + 1)
  const b1 = 0.9
  const b2 = 0.999
  let step = 0
  const order = encoded.map((_, i) => i)
  const history: { epoch: number; loss: number }[] = []
  for (let epoch = 1; epoch <= opts.epochs; epoch++) {
    shuffleInPlace(order, rand)
    for (let start = 0, batch = 0; start < order.length; start += opts.batchSize, batch++) {
      const chunk = order.slice(start, start + opts.batchSize).map((i) => encoded[i]!)
      const { grad, gradBias } = lossAndGradient(weights, bias, chunk, params)
      step++
      if (opts.optimizer === 'sgd') {
        for (let i = 0; i < D; i++) weights[i]! -= opts.lr * grad[i]!
        bias -= opts.lr * gradBias
      } else {
        const c1 = 1 - b1 ** step
        const c2 = 1 - b2 ** step
        for (let i = 0; i <= D; i++) {
          const g = i < D ? grad[i]! : gradBias
          m[i] = b1 * m[i]! + (1 - b1) * g
          v[i] = b2 * v[i]! + (1 - b2) * g * g
          const delta = (opts.lr * (m[i]! / c1)) / (Math.sqrt(v[i]! / c2) + 1e-8)
          if (i < D) weights[i]! -= delta
          else bias -= delta
        }
      }
      onStep?.(epoch, batch)
    }
    history.push({ epoch, loss: lossAndGradient(weights, bias, encoded, params).loss })
  }
  const model: PolicyModel = {
    kind: 'rehac-logistic',
    version: 1,
    features: config,
    bias,
    weights: Array.from(weights),
  }
  return { model, history }
}

// ───────────────────────────── evaluation ─────────────────────────────

export interface Evaluation {
  rows: number
  states: number
  /**
   * Over rows with A ≠ 0, weighted by |A|·count: the argmax choice is right when it picks the row's
   * action and A > 0, or picks the other action and A < 0.
   */
  weightedAccuracy: number
  /** Unweighted share of states (with a non-zero advantage) whose argmax action has A > 0. */
  stateAccuracy: number
  /** Per state, the advantage of the argmax action, averaged with the state's total count as weight. */
  meanChosenAdvantage: number
  /** The count-weighted mean of min(r·A, clip(r)·A) (no entropy, no L2): Eq. 7's surrogate. */
  meanSurrogate: number
  /** Share of states the argmax sends to the human. */
  humanRate: number
}

/** Evaluates any p_human function on held-out rows (constant baselines pass `() => 0` / `() => 1`). */
export function evaluateP(
  pOf: (state: string) => number,
  rows: readonly AdvantageRow[],
  { epsilon = DEFAULT_EPSILON, behaviourProb = BEHAVIOUR_PROB } = {},
): Evaluation {
  const byState = new Map<string, AdvantageRow[]>()
  for (const r of rows) {
    const list = byState.get(r.state)
    if (list) list.push(r)
    else byState.set(r.state, [r])
  }
  let accW = 0
  let accTotal = 0
  let stateRight = 0
  let stateTotal = 0
  let chosenSum = 0
  let chosenW = 0
  let surrSum = 0
  let surrW = 0
  let humans = 0
  for (const [state, list] of byState) {
    const p = Math.min(1, Math.max(0, pOf(state)))
    const human = argmaxHuman(p)
    if (human) humans++
    const chosen: 0 | 1 = human ? 1 : 0
    let stateCount = 0
    let chosenA: number | undefined
    for (const r of list) {
      stateCount += r.count
      if (r.reward !== 0) {
        const w = Math.abs(r.reward) * r.count
        accTotal += w
        if ((chosen === r.action) === r.reward > 0) accW += w
      }
      if (r.action === chosen) chosenA = r.reward
      const pa = r.action === 1 ? p : 1 - p
      const ratio = pa / behaviourProb
      const clipped = Math.min(Math.max(ratio, 1 - epsilon), 1 + epsilon)
      surrSum += r.count * Math.min(ratio * r.reward, clipped * r.reward)
      surrW += r.count
    }
    if (chosenA !== undefined) {
      chosenSum += stateCount * chosenA
      chosenW += stateCount
      if (list.some((r) => r.reward !== 0)) {
        stateTotal++
        if (chosenA > 0) stateRight++
      }
    }
  }
  const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b)
  return {
    rows: rows.length,
    states: byState.size,
    weightedAccuracy: ratio(accW, accTotal),
    stateAccuracy: ratio(stateRight, stateTotal),
    meanChosenAdvantage: ratio(chosenSum, chosenW),
    meanSurrogate: ratio(surrSum, surrW),
    humanRate: ratio(humans, byState.size),
  }
}

export function evaluate(
  model: PolicyModel,
  rows: readonly AdvantageRow[],
  opts?: { epsilon?: number; behaviourProb?: number },
): Evaluation {
  return evaluateP((s) => pHuman(model, s), rows, opts)
}

// ───────────────────────────── split ─────────────────────────────

/**
 * Holds out whole groups (e.g. questions) so no test state shares a question with a training state.
 * The caller names the group of each row; the distinct keys are sorted, shuffled with the seed, and
 * the first round(testFraction·n) (at least 1 when n ≥ 2) become the test set.
 */
export function splitByKey<T>(
  rows: readonly T[],
  keyOf: (row: T) => string,
  { testFraction = 0.2, seed = 42 }: { testFraction?: number; seed?: number } = {},
): { train: T[]; test: T[]; trainKeys: string[]; testKeys: string[] } {
  const keys = [...new Set(rows.map(keyOf))].sort()
  shuffleInPlace(keys, mulberry32(seed))
  let nTest = Math.round(testFraction * keys.length)
  if (keys.length >= 2) nTest = Math.min(Math.max(nTest, 1), keys.length - 1)
  const testKeys = keys.slice(0, nTest)
  const testSet = new Set(testKeys)
  const train: T[] = []
  const test: T[] = []
  for (const r of rows) (testSet.has(keyOf(r)) ? test : train).push(r)
  return { train, test, trainKeys: keys.slice(nTest).sort(), testKeys: [...testKeys].sort() }
}
