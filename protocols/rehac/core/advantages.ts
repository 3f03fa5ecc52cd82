/**
 * ReHAC's offline-RL data from collected trajectories, as the authors' Monte-Carlo pipeline computes it
 * (rehac.md §2.3; github.com/XueyangFeng/ReHAC data_preprocess.py and intercode/data/sql/*.py):
 *
 *   1. every decision t of an episode is a row (state, action, return): the state is the trajectory text
 *      up to and including its t-th "<solver>", stripped; the action is 0 when the first word after that
 *      marker is "agent", else 1; the return is the episode's R = f1 − λ·C with C its human markers in the
 *      WHOLE trajectory (every decision carries the same R);
 *   2. rows are grouped by the exact state string and the action: mean return R̄(s,a) and count n;
 *   3. states longer than 5,041 characters are dropped (Python's len: code points);
 *   4. states seen with both actions give A(s,a) = (R̄(s,a) − R̄(s,¬a)) / 2; the others are dropped.
 *
 * Row order and arithmetic follow the Python: states in order of first appearance, the first-seen action
 * first; λ is added once per human step (`budget += lambda_`), sums run in file order.
 *
 * Speed: a state is its parent state + one segment + "<solver>", and the text splits uniquely at
 * "<solver>", so two states are equal exactly when their segment sequences are. States are therefore
 * nodes of a trie keyed by segment, and no state string is built or hashed whole; the output slices
 * the first trajectory that reached a state.
 */

export const MAX_STATE_LENGTH = 5041
const MARKER = '<solver>'

/** One Monte-Carlo row: R̄(s,a) and how many decisions it averages. */
export interface MonteCarloRow {
  state: string
  action: 0 | 1
  meanReturn: number
  count: number
}
/** One advantage row (the training file: `reward` is A(s,a)). */
export interface AdvantageRow {
  state: string
  action: 0 | 1
  reward: number
  count: number
  meanReturn: number
}
/** One imitation row: the action with the higher mean return (the first-seen one on a tie). */
export interface ImitationRow {
  state: string
  action: 0 | 1
  count: number
}

export interface AdvantageOptions {
  lambda: number
  /** States longer than this (code points) are dropped; default 5,041. */
  maxStateLength?: number
}

export interface AdvantageTables {
  /** Decisions read (one per marker). */
  decisions: number
  /** Distinct states. */
  states: number
  /** Every (state, action) within the length limit, in first-seen order. */
  monteCarlo: MonteCarloRow[]
  /** Two rows per state seen with both actions. */
  advantages: AdvantageRow[]
  imitation: ImitationRow[]
}

interface Node {
  children: Map<string, Node> | null
  /** The text this state was first read from, and its span there. */
  text: string
  start: number
  end: number
  codePoints: number
  sum: [number, number]
  count: [number, number]
  firstAction: 0 | 1 | -1
}

/**
 * Python's str.strip() whitespace (the characters `isspace()` accepts), for the leading strip of the
 * first state; later states end with "<solver>", so the strip never changes their end.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python's isspace() includes the separators \x1c-\x1f.
const PY_SPACE = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*/

/** Python's len(): code points (a surrogate pair is one). */
export function codePointLength(text: string, start = 0, end = text.length): number {
  let n = end - start
  for (let i = start; i < end - 1; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--
        i++
      }
    }
  }
  return n
}

/** Python's `\w` for str: letters, numbers, underscore. */
const WORD = /[\p{L}\p{N}_]+/gu

/** The first word after `from`, as the authors' `<solver>[\s\S]*?(\w+)` finds it ('' when none). */
function firstWord(text: string, from: number): string {
  WORD.lastIndex = from
  const m = WORD.exec(text)
  return m ? m[0] : ''
}

/** The human markers of a trajectory (the authors' C: the first word after "<solver>" is "human"). */
function markers(text: string): { at: number[]; actions: (0 | 1)[]; human: number } {
  const at: number[] = []
  const actions: (0 | 1)[] = []
  let human = 0
  for (let i = text.indexOf(MARKER); i !== -1; i = text.indexOf(MARKER, i + MARKER.length)) {
    const w = firstWord(text, i + MARKER.length)
    at.push(i)
    actions.push(w === 'agent' ? 0 : 1)
    if (w === 'human') human++
  }
  return { at, actions, human }
}

/** The episode's return as the Python computes it: f1 minus λ added once per human step. */
export function episodeReturn(f1: number, humanSteps: number, lambda: number): number {
  let budget = 0
  for (let k = 0; k < humanSteps; k++) budget += lambda
  return f1 - budget
}

/** Step 1 for one episode: its decisions as (state, action, return) rows (for inspection and tests). */
export function episodeDecisions(
  trajectory: string,
  f1: number,
  lambda: number,
): { state: string; action: 0 | 1; return: number }[] {
  const lead = (PY_SPACE.exec(trajectory) as RegExpExecArray)[0].length
  const m = markers(trajectory)
  const r = episodeReturn(f1, m.human, lambda)
  return m.at.map((i, k) => ({
    state: trajectory.slice(lead, i + MARKER.length),
    action: m.actions[k] as 0 | 1,
    return: r,
  }))
}

/** Steps 1–4 over a set of episodes (`f1` is the task reward T). */
export function advantageTables(
  episodes: readonly { trajectory: string; f1: number }[],
  options: AdvantageOptions,
): AdvantageTables {
  const max = options.maxStateLength ?? MAX_STATE_LENGTH
  const root: Node = {
    children: null,
    text: '',
    start: 0,
    end: 0,
    codePoints: 0,
    sum: [0, 0],
    count: [0, 0],
    firstAction: -1,
  }
  const nodes: Node[] = []
  const pairs: { node: Node; action: 0 | 1 }[] = []
  let decisions = 0

  for (const ep of episodes) {
    const text = ep.trajectory
    const lead = (PY_SPACE.exec(text) as RegExpExecArray)[0].length
    const m = markers(text)
    const r = episodeReturn(ep.f1, m.human, options.lambda)
    let node = root
    let prevEnd = lead
    for (let k = 0; k < m.at.length; k++) {
      const i = m.at[k] as number
      const segment = text.slice(prevEnd, i)
      const end = i + MARKER.length
      if (node.children === null) node.children = new Map()
      let child = node.children.get(segment)
      if (child === undefined) {
        child = {
          children: null,
          text,
          start: lead,
          end,
          codePoints: node.codePoints + codePointLength(text, prevEnd, i) + MARKER.length,
          sum: [0, 0],
          count: [0, 0],
          firstAction: -1,
        }
        node.children.set(segment, child)
        nodes.push(child)
      }
      const a = m.actions[k] as 0 | 1
      if (child.count[a] === 0) pairs.push({ node: child, action: a })
      if (child.firstAction === -1) child.firstAction = a
      child.sum[a] += r
      child.count[a]++
      decisions++
      node = child
      prevEnd = end
    }
  }

  const stateOf = (n: Node) => n.text.slice(n.start, n.end)
  const monteCarlo: MonteCarloRow[] = []
  for (const { node, action } of pairs) {
    if (node.codePoints > max) continue
    monteCarlo.push({
      state: stateOf(node),
      action,
      meanReturn: node.sum[action] / node.count[action],
      count: node.count[action],
    })
  }
  const advantages: AdvantageRow[] = []
  const imitation: ImitationRow[] = []
  for (const node of nodes) {
    if (node.codePoints > max || node.count[0] === 0 || node.count[1] === 0) continue
    const state = stateOf(node)
    const a1 = node.firstAction as 0 | 1
    const a2: 0 | 1 = a1 === 0 ? 1 : 0
    const r1 = node.sum[a1] / node.count[a1]
    const r2 = node.sum[a2] / node.count[a2]
    advantages.push({ state, action: a1, reward: (r1 - r2) / 2, count: node.count[a1], meanReturn: r1 })
    advantages.push({ state, action: a2, reward: (r2 - r1) / 2, count: node.count[a2], meanReturn: r2 })
    imitation.push(
      r1 >= r2 ? { state, action: a1, count: node.count[a1] } : { state, action: a2, count: node.count[a2] },
    )
  }
  return { decisions, states: nodes.length, monteCarlo, advantages, imitation }
}
