import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { FakeRule } from '@/lib/llm/fake-server'

export interface DebateFixture {
  symptoms: string
  groundTruth: string
  k: number
  rounds: Array<{
    A: Array<{ label: string; probability: number; justification?: string }>
    B: Array<{ label: string; probability: number; justification?: string }>
  }>
}

export function loadDebateFixture(name: 'dengue' | 'jaundice'): DebateFixture {
  return JSON.parse(readFileSync(path.resolve(import.meta.dirname, `fixtures/${name}.json`), 'utf8'))
}

/**
 * Fake-LLM rules that replay a recorded debate: each debater's reply for round r is matched by its
 * model and the round line of its prompt (so cases and rounds can run in any order), the judge
 * scores every agent the same (CRIT never falls), and the report is canned. JSON-safe (strings
 * only), so e2e tests can POST it to a fake server in another process.
 */
export function debateRules(
  f: DebateFixture,
  opts: { modelA?: string; modelB?: string; judge?: string; latencyMs?: number } = {},
): FakeRule[] {
  const timing = opts.latencyMs !== undefined ? { latencyMs: opts.latencyMs } : {}
  const line = (r: number) => `Round ${r}. Information set S (the patient's symptoms): ${f.symptoms}`
  const turn = (seat: 'A' | 'B', r: number): FakeRule => {
    const predictions = f.rounds[r - 1]?.[seat] ?? []
    return {
      match: { model: seat === 'A' ? (opts.modelA ?? 'gen-a') : (opts.modelB ?? 'gen-b'), contains: line(r) },
      replies: [
        {
          json: {
            predictions: predictions.map((p) => ({ justification: '', ...p })),
            arguments: [`${seat} round ${r}: ${predictions[0]?.label} fits the symptoms best.`],
            counterArguments: r > 1 || seat === 'B' ? [`${seat} round ${r}: the other list misses key findings.`] : [],
          },
          ...timing,
        },
      ],
    }
  }
  const crit = (seat: 'A' | 'B'): FakeRule => ({
    match: { model: opts.judge ?? 'judge', contains: `Judge debater ${seat} with CRIT.` },
    replies: [
      {
        json: {
          claim: `${seat}'s distribution`,
          reasons: [{ reason: 'consistent with the symptoms', validity: 8, credibility: 7 }],
          rivals: [],
          comment: 'sound',
        },
        ...timing,
      },
    ],
  })
  return [
    ...f.rounds.flatMap((_, i) => [turn('A', i + 1), turn('B', i + 1)]),
    crit('A'),
    crit('B'),
    {
      match: { model: opts.judge ?? 'judge', contains: 'finished diagnostic debate' },
      replies: [
        {
          json: {
            conclusion: `Both debaters converge on ${f.rounds.at(-1)?.A[0]?.label}.`,
            arguments: ['the leading diagnosis explains most symptoms'],
            counterArguments: ['an overlapping condition cannot be excluded'],
            missingInformation: ['onset and duration of symptoms', 'travel history'],
            labTests: ['complete blood count', 'serology'],
          },
          ...timing,
        },
      ],
    },
  ]
}
