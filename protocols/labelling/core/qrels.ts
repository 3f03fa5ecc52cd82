/**
 * TREC qrels from labels: one line `topic 0 docid rel` per (topic, document) with a label. The overall
 * answer of each label counts; an LLM's multiple-judges label counts with its mean. Several labels of one
 * (topic, document) (N annotators) are averaged. The rule from a mean to a relevance grade:
 * - graded (default): round half up (1.5 → 2, 0.4 → 0), so a single label keeps its grade;
 * - binary at threshold t: rel = 1 when the mean ≥ t, else 0 (e.g. t = 1: "relevant" or better).
 * The paper (Thomas et al. 2024) does not say how it binarised a mean of five judges; this is our rule.
 */
export interface QrelLabel {
  topicId: string
  docId: string
  /** The overall answer (a mean for a multiple-judges label). */
  value: number
}

export type QrelRule = { kind: 'graded' } | { kind: 'binary'; threshold: number }

export function relevanceOf(mean: number, rule: QrelRule): number {
  if (rule.kind === 'binary') return mean >= rule.threshold ? 1 : 0
  return Math.floor(mean + 0.5)
}

/** The qrels lines, sorted by topic then document (as strings), one per pair. */
export function qrelsLines(labels: QrelLabel[], rule: QrelRule = { kind: 'graded' }): string[] {
  const pairs = new Map<string, { topicId: string; docId: string; values: number[] }>()
  for (const l of labels) {
    const key = `${l.topicId}\u0000${l.docId}`
    const p = pairs.get(key) ?? { topicId: l.topicId, docId: l.docId, values: [] }
    p.values.push(l.value)
    pairs.set(key, p)
  }
  return [...pairs.values()]
    .sort((a, b) => (a.topicId === b.topicId ? cmp(a.docId, b.docId) : cmp(a.topicId, b.topicId)))
    .map((p) => {
      const mean = p.values.reduce((x, y) => x + y, 0) / p.values.length
      return `${p.topicId} 0 ${p.docId} ${relevanceOf(mean, rule)}`
    })
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
