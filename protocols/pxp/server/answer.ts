import type { PxpMessage } from '@/protocols/pxp/core'
import { canonicalSet, depictSvg, smilesProblem } from '@/lib/tasks/chem'
import { RAD_LABELS } from '@/protocols/pxp/core/datasets'
import type { TaskTemplate } from '@/lib/tasks/generic'
import { SandboxError } from '@/lib/tasks/sandbox'
import type { Seats } from '@/lib/server/sdk'
import { matcher, type PxpExtras } from '@/protocols/pxp/server/agents'

/**
 * What a person's PXP prediction must be, by task: one of the task's labels (RAD's five, or a generic
 * template's label set), reactant SMILES that RDKit parses (DRUG), or any text. The same rules serve
 * the form while the person types (`pxp.check-answer`) and the turn itself (`sessions.submit`).
 */
export type AnswerRules = { kind: 'labels'; labels: string[] } | { kind: 'smiles' } | { kind: 'text' }

export function answerRules(task: string, template?: TaskTemplate): AnswerRules {
  if (template) return template.labels.length ? { kind: 'labels', labels: template.labels } : { kind: 'text' }
  if (task === 'rad') return { kind: 'labels', labels: [...RAD_LABELS] }
  if (task === 'drug') return { kind: 'smiles' }
  return { kind: 'text' }
}

const fold = (s: string) => s.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase()

export type PredictionCheck = { ok: true; value: string } | { ok: false; error: string }

/**
 * Checks a prediction against the rules: a label is accepted in any case and spacing and stored as
 * the task writes it; SMILES must stay within RDKit's limits (SMILES_LIMITS) and parse, every
 * '.'-separated part of them. SMILES RDKit runs out of time on or breaks on are refused like
 * unparsable ones; RDKit being unavailable is thrown (a 503 at the boundary).
 */
export async function checkPrediction(rules: AnswerRules, raw: string): Promise<PredictionCheck> {
  const y = raw.trim()
  if (!y) return { ok: false, error: 'Write your prediction.' }
  if (rules.kind === 'labels') {
    const label = rules.labels.find((l) => fold(l) === fold(y))
    return label
      ? { ok: true, value: label }
      : { ok: false, error: `“${y.slice(0, 80)}” is not one of this task’s labels: ${rules.labels.join(', ')}.` }
  }
  if (rules.kind === 'smiles') {
    const problem = smilesProblem(y)
    if (problem) return { ok: false, error: problem }
    let checked: Awaited<ReturnType<typeof canonicalSet>>
    try {
      checked = await canonicalSet(y)
    } catch (err) {
      if (err instanceof SandboxError && (err.kind === 'timeout' || err.kind === 'crashed'))
        return { ok: false, error: `RDKit could not check these SMILES: ${err.message}` }
      throw err
    }
    const { set, invalid } = checked
    if (invalid.length)
      return {
        ok: false,
        error: `RDKit cannot parse ${invalid.map((p) => `“${p.slice(0, 60)}”`).join(', ')} as SMILES.`,
      }
    if (!set.size) return { ok: false, error: 'Write the reactants as SMILES (separated by “.”).' }
  }
  return { ok: true, value: y }
}

/**
 * RDKit's drawing of the person's own reactants (DRUG), sanitised like every molecule drawing; null
 * when RDKit cannot draw them in time (the check already said they parse).
 */
export async function drawPrediction(rules: AnswerRules, y: string): Promise<string | null> {
  if (rules.kind !== 'smiles' || !y.trim()) return null
  try {
    return await depictSvg(y, 260, 170)
  } catch (err) {
    if (err instanceof SandboxError && (err.kind === 'timeout' || err.kind === 'crashed')) return null
    throw err
  }
}

/**
 * Parley's own MATCH for "Does the prediction match yours?" at message j (Procedure 2's MATCH(y', y'')):
 * the partner's prediction of message j−1 against the person's own previous one (j−2), or at j = 2
 * against the prediction they are sending. Null when there is nothing to compare (j = 1, no answer).
 * It is a hint and a record beside the person's own judgement, which stays the protocol's input;
 * null too when RDKit or the regex worker ran out of time on the predictions.
 */
export async function computedMatch(input: {
  j: number
  task: string
  template?: TaskTemplate
  messages: PxpMessage[]
  prediction: string
}): Promise<boolean | null> {
  if (input.j < 2) return null
  const partner = input.messages.find((m) => m.seq === input.j - 1)
  const own = input.j === 2 ? input.prediction : input.messages.find((m) => m.seq === input.j - 2)?.prediction
  if (!partner || !own?.trim()) return null
  return matchOrNull(input.task, input.template, partner.prediction, own)
}

/** The task's MATCH, or null when RDKit or the regex worker ran out of time on (or broke on) the predictions. */
async function matchOrNull(task: string, template: TaskTemplate | undefined, a: string, b: string) {
  try {
    return await (await matcher(task, template))(a, b)
  } catch (err) {
    if (err instanceof SandboxError && (err.kind === 'timeout' || err.kind === 'crashed')) return null
    throw err
  }
}

/**
 * The hint beside "Does the prediction match yours?" while the person writes message j: Parley's
 * MATCH of the partner's prediction (message j−1) and the prediction in the person's field, the text
 * on their screen, at every j (the form shows it only for the very text it was computed for). Null
 * when there is nothing to compare (j = 1, an empty or unacceptable prediction). At j > 2 Procedure 2's
 * own MATCH compares the partner's prediction with the person's previous one (`computedMatch`, stored
 * beside the turn); the two agree whenever the person keeps their answer. Null too when RDKit or
 * the regex worker ran out of time on the predictions.
 */
export async function hintMatch(input: {
  j: number
  task: string
  template?: TaskTemplate
  messages: PxpMessage[]
  prediction: string
}): Promise<boolean | null> {
  if (input.j < 2 || !input.prediction.trim()) return null
  const partner = input.messages.find((m) => m.seq === input.j - 1)
  if (!partner) return null
  return matchOrNull(input.task, input.template, partner.prediction, input.prediction)
}

/**
 * Seats whose answers a participant sees only as a tag: the ground-truth proxy's, when experts play
 * the machine against it and the run was set up to show them only the tester's tag.
 */
export function hiddenSeats(ctx: { extras: PxpExtras; seats: Seats; mySeats: string[] }): string[] {
  if (ctx.extras.proxyAnswer !== 'tag-only' || !ctx.mySeats.length) return []
  return Object.entries(ctx.seats)
    .filter(([name, fill]) => fill?.kind === 'proxy' && !ctx.mySeats.includes(name))
    .map(([name]) => name)
}
