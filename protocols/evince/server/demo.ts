/**
 * The offline demo model's answers in an EVINCE debate, so a debate with the simulated model reads
 * like one: debaters score a small built-in table of diagnoses by the symptoms they recognise,
 * move towards the other debater's latest distribution a little more each round, and the judge and
 * the moderator answer in the shapes the runner asks for. Deterministic and clearly simulated
 * (justifications and the conclusion carry the demo label). Not medical knowledge.
 */
import { DEMO_LABEL as DEMO_LABEL_TEXT, type DemoRequest } from '@/lib/llm/demo-model'
import { contentText, lastUserText } from '@/lib/llm/text'

const TABLE: Array<[string, string[]]> = [
  ['Dengue Fever', ['fever', 'joint', 'eyes', 'rash', 'muscle', 'headache', 'red spots']],
  ['Chikungunya', ['joint', 'rash', 'fever', 'muscle']],
  ['Zika Virus', ['rash', 'fever', 'joint', 'eyes']],
  ['Malaria', ['chills', 'sweating', 'fever', 'headache', 'nausea', 'vomiting']],
  ['Typhoid', ['fever', 'abdominal', 'headache', 'appetite', 'fatigue']],
  ['Influenza', ['fever', 'cough', 'muscle', 'fatigue', 'headache']],
  ['Pneumonia', ['cough', 'phlegm', 'chest', 'fever', 'breath']],
  ['Jaundice', ['yellow', 'dark urine', 'itching', 'abdominal', 'fatigue']],
  ['Hepatitis B', ['yellow', 'fatigue', 'abdominal', 'dark urine', 'appetite', 'vomiting']],
  ['Hepatitis C', ['yellow', 'fatigue', 'dark urine', 'itching', 'weight loss']],
  ['Diabetes', ['thirst', 'urination', 'vision', 'weight loss', 'fatigue']],
  ['Urinary Tract Infection', ['burning', 'urination', 'urine', 'abdominal']],
  ['Heart Attack', ['chest', 'arm', 'breath', 'sweating']],
  ['Psoriasis', ['patches', 'scales', 'itchy', 'joint']],
  ['Gastroenteritis', ['vomiting', 'diarrhea', 'abdominal', 'nausea']],
  ['Migraine', ['headache', 'nausea', 'light', 'vision']],
]

type Dist = Array<{ label: string; probability: number }>

function normalise(d: Dist): Dist {
  const s = d.reduce((a, x) => a + x.probability, 0) || 1
  const rounded = d.map((x) => ({ ...x, probability: Math.round((x.probability / s) * 100) / 100 }))
  const diff = Math.round((1 - rounded.reduce((a, x) => a + x.probability, 0)) * 100) / 100
  if (rounded[0]) rounded[0].probability = Math.round((rounded[0].probability + diff) * 100) / 100
  return rounded.filter((x) => x.probability > 0)
}

/** "1. Dengue Fever: 60%" lines after `heading` in the prompt. */
function parseDistribution(text: string, heading: string): Dist {
  const at = text.indexOf(heading)
  if (at < 0) return []
  const out: Dist = []
  for (const line of text.slice(at).split('\n').slice(1)) {
    const m = line.match(/^\d+\.\s+(.+?):\s+([\d.]+)%/)
    if (!m) break
    out.push({ label: m[1] as string, probability: Number(m[2]) / 100 })
  }
  return out
}

export function demoDebateReply(system: string, user: string): unknown | undefined {
  if (system.includes('structured diagnostic debate (EVINCE)')) {
    const seat = system.match(/You are debater ([AB])/)?.[1] ?? 'A'
    const other = seat === 'A' ? 'B' : 'A'
    const k = Number(system.match(/top-(\d+) probability/)?.[1] ?? 3)
    const round = Number(user.match(/^Round (\d+)\./)?.[1] ?? 1)
    const symptoms = (user.match(/Information set S \(the patient's symptoms\): (.*)/)?.[1] ?? '').toLowerCase()
    const allowed = system.match(/Choose labels only from this list: (.*)\./)?.[1]?.split('; ')
    // Debater A is sharp (squared scores), B spreads its belief (a flat prior added).
    const scored = TABLE.filter(([l]) => !allowed || allowed.includes(l))
      .map(([label, keys]) => {
        const hits = keys.filter((w) => symptoms.includes(w)).length
        return { label, probability: seat === 'A' ? hits * hits : hits + 1 }
      })
      .filter((x) => x.probability > 0)
      .sort((a, b) => b.probability - a.probability)
      .slice(0, k)
    const own = normalise(scored.length ? scored : [{ label: allowed?.[0] ?? 'Viral Infection', probability: 1 }])
    const theirs = parseDistribution(user, `Debater ${other}'s latest distribution`)
    const w = Math.min(0.6, 0.3 * (round - 1) + (theirs.length && round === 1 ? 0.15 : 0))
    const merged = new Map<string, number>()
    for (const x of own) merged.set(x.label, (1 - w) * x.probability)
    for (const x of theirs) merged.set(x.label, (merged.get(x.label) ?? 0) + w * x.probability)
    const predictions = normalise(
      [...merged]
        .map(([label, probability]) => ({ label, probability }))
        .sort((a, b) => b.probability - a.probability)
        .slice(0, k),
    ).map((x) => ({
      ...x,
      justification: `${DEMO_LABEL_TEXT} matched ${
        TABLE.find(([l]) => l === x.label)?.[1]
          .filter((s) => symptoms.includes(s))
          .join(', ') || 'the other debater’s reasoning'
      }.`,
    }))
    return {
      predictions,
      arguments: [`${DEMO_LABEL_TEXT} ${predictions[0]?.label} explains the most listed symptoms.`],
      counterArguments: theirs.length
        ? [`${DEMO_LABEL_TEXT} ${theirs[0]?.label} leaves some symptoms unexplained.`]
        : [],
    }
  }
  if (system.includes('judging argument quality with CRIT')) {
    const args = [...user.matchAll(/^- (.+)$/gm)].map((m) => m[1] as string)
    const score = (s: string, i: number) => 5 + ((s.length + i) % 5)
    return {
      claim: 'the debater’s distribution',
      reasons: args
        .slice(0, 3)
        .map((reason, i) => ({ reason, validity: score(reason, i), credibility: score(reason, i + 1) })),
      rivals: [],
      comment: `${DEMO_LABEL_TEXT} scored by rule, not by a model.`,
    }
  }
  if (system.includes('finished diagnostic debate')) {
    const combined = parseDistribution(user, 'Combined distribution')
    return {
      conclusion: `${DEMO_LABEL_TEXT} The debaters lean towards ${combined[0]?.label ?? 'the leading diagnosis'}${combined[1] ? `, with ${combined[1].label} as the main alternative` : ''}.`,
      arguments: ['the leading diagnosis explains most of the listed symptoms'],
      counterArguments: ['several listed symptoms are shared by the alternatives'],
      missingInformation: ['onset and duration of the symptoms', 'travel and exposure history', 'vital signs'],
      labTests: ['complete blood count', 'targeted serology or antigen tests for the top candidates'],
    }
  }
  return undefined
}

/** The demo model's EVINCE answers (JSON), undefined when the request is not a debate's. */
export function evinceDemo(req: DemoRequest): string | undefined {
  const format = req.response_format as { type?: string } | undefined
  if (format?.type !== 'json_object') return undefined
  const system = req.messages
    .filter((m) => m.role === 'system')
    .map((m) => contentText(m.content))
    .join('\n')
  const reply = demoDebateReply(system, lastUserText(req.messages))
  return reply === undefined ? undefined : JSON.stringify(reply)
}
