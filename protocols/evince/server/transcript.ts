import type { TranscriptContext, TranscriptTurn } from '@/lib/server/sdk'
import type { evince } from '@/protocols/evince/core/protocol'

const pct = (p: number) => `${Math.round(p * 100)}%`
const list = (head: string, xs: readonly string[]) => (xs.length ? [`${head}:`, ...xs.map((x) => `- ${x}`)] : [])

/**
 * An EVINCE debate as a transcript: each agent's diagnoses with probabilities and its arguments and
 * counter-arguments, the moderator's critique (score, reasons) and its final report. The generic
 * rendering would show only a turn's top diagnosis.
 */
export function evinceTranscript(ctx: TranscriptContext<typeof evince>): TranscriptTurn[] {
  return ctx.messages.map(({ body: m }, index) => {
    const who = ctx.seatLabel(m.sender)
    if (m.kind === 'turn') {
      const lines = [
        `Round ${m.round}: ${m.predictions.map((p) => `${p.label} (${pct(p.probability)})`).join(', ')}`,
        ...list('Arguments', m.arguments),
        ...list('Against the other', m.counterArguments),
      ]
      return { index, who, text: lines.join('\n') }
    }
    if (m.kind === 'crit') {
      const lines = [
        `Round ${m.round}, critique of ${ctx.seatLabel(m.target)}: score ${m.score.toFixed(2)}`,
        ...list(
          'Reasons',
          m.reasons.map((r) => `${r.reason} (validity ${r.validity}, credibility ${r.credibility})`),
        ),
        ...(m.comment ? [m.comment] : []),
      ]
      return { index, who, text: lines.join('\n') }
    }
    const lines = [
      `Conclusion: ${m.conclusion}`,
      ...list('Arguments', m.arguments),
      ...list('Counter-arguments', m.counterArguments),
      ...list('Missing information', m.missingInformation),
      ...list('Lab tests', m.labTests),
    ]
    return { index, who, text: lines.join('\n') }
  })
}
