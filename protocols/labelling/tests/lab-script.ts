import type { FakeRule } from '@/lib/llm/fake-server'
import { ASPECT_LINES, ROLE_LINE } from '@/protocols/labelling/core/prompt'
import { FIXTURE_ITEMS } from '@/protocols/labelling/fixture'

/**
 * The prompt-lab tests' script (shared by the page's test and the lab-run job's): four variants told
 * apart by their prompts, each with scripted labels for the five fixture items, and κ/MAE by hand.
 */
// A distinctive bit of each fixture item's document (gold 2, 0, 2, 1, 2).
export const DOCS = ['Forager bees', 'honey cake', 'Tides rise', 'harbour café', 'Sunlight is scattered']
export const GOLD = FIXTURE_ITEMS.map((i) => i.gold)
// Four variants told apart by the role line (R) and the first aspect line (A); null = an unreadable reply.
export const SCRIPT: Record<string, Array<number | null>> = {
  '-----': [2, 0, 2, 1, 2],
  'R----': [2, 1, 0, 1, 2],
  '---A-': [1, 2, 0, 0, null],
  'R--A-': [0, 0, 2, 0, 1],
}
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
export function rules(): FakeRule[] {
  const out: FakeRule[] = []
  for (const [variant, labels] of Object.entries(SCRIPT)) {
    const role = variant[0] === 'R' ? `(?=[\\s\\S]*${esc(ROLE_LINE)})` : `(?![\\s\\S]*${esc(ROLE_LINE)})`
    const asp = variant[3] === 'A' ? `(?=[\\s\\S]*${esc(ASPECT_LINES[0])})` : `(?![\\s\\S]*${esc(ASPECT_LINES[0])})`
    labels.forEach((l, i) => {
      const text =
        l === null ? 'I would rather not say.' : variant[3] === 'A' ? `"M": 1, "T": 1, "O": ${l}}]` : `"O": ${l}}]`
      out.push({
        match: { model: 'gen', contains: new RegExp(`^${role}${asp}(?=[\\s\\S]*${esc(DOCS[i]!)})`) },
        replies: [{ text }],
      })
    })
  }
  return out
}

/** κ and MAE of binarised labels, by hand (label ≥ 1 → 1). */
export function byHand(gold: number[], model: Array<number | null>) {
  const pairs = gold.map((g, i) => [g >= 1 ? 1 : 0, model[i]] as const).filter(([, m]) => m !== null)
  const b = pairs.map(([g, m]) => [g, (m as number) >= 1 ? 1 : 0])
  const n = b.length
  const po = b.filter(([g, m]) => g === m).length / n
  const pg = b.filter(([g]) => g === 1).length / n
  const pm = b.filter(([, m]) => m === 1).length / n
  const pe = pg * pm + (1 - pg) * (1 - pm)
  return { n, kappa: pe === 1 ? null : (po - pe) / (1 - pe), mae: 1 - po }
}
