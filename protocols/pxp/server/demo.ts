import { DEMO_LABEL, type DemoRequest } from '@/lib/llm/demo-model'
import { contentText, fnv1a } from '@/lib/llm/text'

/**
 * How the offline demo model plays PXP: deterministic, plausible, and labelled as simulated.
 * - The machine (or an LLM tester) answers in the task's format: RAD a label from the five in its
 *   system prompt, DRUG reactant SMILES, a generic task its template's fields and labels. Its first
 *   answer is a guess (seeded by the whole request, the X-ray included); when its partner refutes
 *   with another answer, it adopts that answer three times in four (a model that learns from the
 *   tester), otherwise it holds its ground; after a RATIFY it repeats itself.
 * - The AGREE checker says Yes when the two explanations share most of their words.
 * Not medical or chemical knowledge.
 */

/** Words of a text (lower case, 3+ letters). */
const words = (s: string) => new Set(s.toLowerCase().match(/[a-z0-9]{3,}/g) ?? [])

/** Share of words two texts have in common (Jaccard). */
export function overlap(a: string, b: string): number {
  const x = words(a)
  const y = words(b)
  if (!x.size && !y.size) return 1
  let both = 0
  for (const w of x) if (y.has(w)) both++
  return both / (x.size + y.size - both)
}

function checkerReply(req: DemoRequest): string | undefined {
  const system = req.messages.find((m) => m.role === 'system')
  const sys = system ? contentText(system.content) : ''
  if (!/Respond only with Yes or No/i.test(sys)) return undefined
  const user = contentText(req.messages.at(-1)?.content)
  const pair = user.match(/Given A: ([\s\S]*)\nand B: ([\s\S]*)\nare A and B consistent\?/)
  if (pair) return overlap(pair[1] ?? '', pair[2] ?? '') >= 0.5 ? 'Yes' : 'No'
  // A template's own AGREE question: judged by how much its two halves share.
  const half = Math.floor(user.length / 2)
  return overlap(user.slice(0, half), user.slice(half)) >= 0.35 ? 'Yes' : 'No'
}

interface Format {
  predictionKey: string
  explanationKey: string
  labels: string[]
  kind: 'rad' | 'drug' | 'generic'
}

function formatOf(system: string): Format | undefined {
  // The answer format is two "Key: <placeholder>" lines (RAD, DRUG and every generic template).
  const keys = [...system.matchAll(/^([A-Za-z][\w -]{0,40}): <[^>\n]+>$/gm)].map((m) => (m[1] as string).trim())
  const [predictionKey, explanationKey] = keys
  if (!predictionKey || !explanationKey) return undefined
  if (system.startsWith('You are a radiology expert')) {
    const labels = system.match(/knowledge of (.+)\.\n/)?.[1]?.split(', ') ?? []
    return { predictionKey, explanationKey, labels, kind: 'rad' }
  }
  if (system.startsWith('You are a synthetic chemist'))
    return { predictionKey, explanationKey, labels: [], kind: 'drug' }
  const labels = system.match(/must be exactly one of: (.+)\.\n/)?.[1]?.split(', ') ?? []
  return { predictionKey, explanationKey, labels, kind: 'generic' }
}

/** The (prediction, explanation) in a turn, if it carries one. */
function answerIn(text: string, f: Format): { y: string; e: string } | undefined {
  const y = text.match(new RegExp(`^${f.predictionKey}:\\s*(.+)$`, 'm'))?.[1]?.trim()
  const e = text.match(new RegExp(`^${f.explanationKey}:\\s*([\\s\\S]+)$`, 'm'))?.[1]?.trim()
  return y && e ? { y, e } : undefined
}

const RAD_FINDINGS = [
  'the opacity and the silhouette of the heart border',
  'the blunted costophrenic angle and the fluid level',
  'the enlarged cardiac silhouette relative to the thorax',
  'the consolidation with air bronchograms in the lower zone',
  'the visible pleural line without lung markings beyond it',
]

function firstGuess(f: Format, seed: number, query: string): { y: string; e: string } {
  if (f.kind === 'drug') {
    const product = query.match(/pathway for (\S+?)\.?$/)?.[1] ?? ''
    const guesses = ['CC(=O)O.OCC', 'CC(=O)Cl.OCC', 'O=C(O)c1ccccc1.OC']
    return {
      y: guesses[seed % guesses.length] as string,
      e: `${DEMO_LABEL} A condensation that forms ${product || 'the product'} from an acid (or its chloride) and an alcohol.`,
    }
  }
  const labels = f.labels.length ? f.labels : ['yes', 'no']
  const y = labels[seed % labels.length] as string
  const finding = RAD_FINDINGS[(seed >>> 3) % RAD_FINDINGS.length]
  return {
    y,
    e:
      f.kind === 'rad'
        ? `${DEMO_LABEL} ${y}, judging by ${finding}.`
        : `${DEMO_LABEL} ${y}: the most likely answer from the details given.`,
  }
}

function answerReply(req: DemoRequest): string | undefined {
  const sys = contentText(req.messages.find((m) => m.role === 'system')?.content)
  const f = formatOf(sys)
  if (!f) return undefined
  const seed = fnv1a(JSON.stringify(req.messages))
  const turns = req.messages.filter((m) => m.role !== 'system')
  const query = contentText(turns.at(-1)?.content)
  // My latest answer, and the partner's latest turn before the query.
  let mine: { y: string; e: string } | undefined
  for (const t of turns.slice(0, -1)) if (t.role === 'assistant') mine = answerIn(contentText(t.content), f) ?? mine
  const partner = [...turns.slice(0, -1)].reverse().find((t) => t.role === 'user')
  const partnerText = partner ? contentText(partner.content) : ''
  const theirs = answerIn(partnerText, f)
  let answer = mine ?? firstGuess(f, seed, query)
  if (mine && theirs && /mistake|reject/i.test(partnerText) && seed % 4 !== 0)
    answer = { y: theirs.y, e: theirs.e.startsWith(DEMO_LABEL) ? theirs.e : `${DEMO_LABEL} ${theirs.e}` }
  return `${f.predictionKey}: ${answer.y}\n${f.explanationKey}: ${answer.e}`
}

/** The demo model's PXP answers (undefined when the request is not PXP's). */
export function pxpDemo(req: DemoRequest): string | undefined {
  return checkerReply(req) ?? answerReply(req)
}
