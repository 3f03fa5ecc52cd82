/**
 * The trajectory tree of one question (rehac.md §3.1, §5.2 point 8): episodes keyed by their choice
 * path (a bitstring of solvers, '0' agent, '1' human) share prefixes, and the coverage scheduler starts
 * an episode wherever a prefix still lacks one of its two branches, so every state an episode reached
 * gets both actions (what the advantage estimate needs).
 *
 * A new episode is a fork of the one that ended: it starts from that episode's first i steps and the
 * decider is forced to the other solver at step i + 1; after that its decider decides as the run's
 * does. Keys name the branch an episode was started for (`<question>/<bits>`, the plan's root episode
 * has the empty branch); a repeated human sample on one branch adds `#n`.
 */

/** Messages per step in the log (decide, step, observation): a fork at step t copies 3·(t − 1). */
export const MESSAGES_PER_STEP = 3

export const flip = (bit: string) => (bit === '1' ? '0' : '1')

/** What the scheduler knows of an episode of the question: its branch (from its key) and its path so far. */
export interface TreeEpisode {
  /** The branch it was started for ('' for the root episode). */
  branch: string
  /** Its choice path so far (the whole path once done). */
  path: string
  done: boolean
}

export interface Fork {
  /** The branch to start: the parent's first `at − 1` choices and the other solver at step `at`. */
  branch: string
  /** The step whose decision the fork forces (1-based). */
  at: number
  solver: 'agent' | 'human'
  /** How many of the parent's messages the fork starts with. */
  forkSeq: number
  /** 1 for the first episode of the branch, n for the n-th repeated human sample. */
  sample: number
}

/**
 * The forks to start after `ended` (an episode of the question that just ended): one per step of its
 * own part of the path (from its branch's end) whose other branch no episode of the question has taken
 * yet (started or done). With `humanSamples` > 1 (real annotators: "repeated sampling of the same path is allowed"), a branch that
 * gives the step to the human is started that many times; simulated humans answer alike, so their
 * duplicate paths are skipped (1).
 */
export function coverageForks(ended: TreeEpisode, all: readonly TreeEpisode[], humanSamples = 1): Fork[] {
  const out: Fork[] = []
  const from = ended.branch.length
  for (let i = from; i < ended.path.length; i++) {
    const bit = ended.path[i] as string
    const branch = ended.path.slice(0, i) + flip(bit)
    const solver = flip(bit) === '1' ? 'human' : 'agent'
    // Samples of this branch's step: episodes that decided step i + 1 themselves on this prefix (the
    // one started for the branch, or one whose own part began earlier and went this way). A fork's
    // copied prefix is not a new sample of its steps.
    const samples = all.filter((e) => e.branch === branch || (e.branch.length <= i && e.path.startsWith(branch))).length
    const wanted = solver === 'human' ? Math.max(1, humanSamples) : 1
    for (let n = samples + 1; n <= wanted; n++)
      out.push({ branch, at: i + 1, solver, forkSeq: i * MESSAGES_PER_STEP, sample: n })
  }
  return out
}

/** The key of an episode of question `q` started for `branch` (its n-th sample). */
export const branchKey = (q: string, branch: string, sample = 1) => `${q}/${branch}${sample > 1 ? `#${sample}` : ''}`

/** The question and branch a key names (null for a key this file did not make). */
export function parseBranchKey(key: string): { question: string; branch: string; sample: number } | null {
  const m = /^(.*)\/([01]*)(?:#(\d+))?$/.exec(key)
  if (!m) return null
  return { question: m[1] as string, branch: m[2] as string, sample: m[3] ? Number(m[3]) : 1 }
}

/**
 * Coverage of a question's tree: of the states the finished episodes reached (every proper prefix of
 * their paths), how many have both branches among the paths.
 */
export function coverage(paths: readonly string[]): { states: number; covered: number } {
  const states = new Set<string>()
  const seen = new Set<string>()
  for (const p of paths)
    for (let i = 0; i < p.length; i++) {
      states.add(p.slice(0, i))
      seen.add(p.slice(0, i + 1))
    }
  let covered = 0
  for (const s of states) if (seen.has(`${s}0`) && seen.has(`${s}1`)) covered++
  return { states: states.size, covered }
}
