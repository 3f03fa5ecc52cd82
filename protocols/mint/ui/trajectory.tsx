import type { ReactNode } from 'react'
import type { MintSessionView, MintTurnView } from '@/protocols/mint/server/views'
import { PART_CLASS, PART_LABEL, type ReplyPart, replyParts } from '@/protocols/mint/ui/format'
import { TurnReplay } from '@/protocols/mint/ui/turn-replay'

/** One coloured block of text (always text: the model's output is never read as HTML). */
export function Part({ kind, text }: { kind: keyof typeof PART_CLASS; text: string }) {
  return (
    <div className={`rounded px-3 py-2 text-sm ${PART_CLASS[kind]}`} data-part={kind}>
      <p className="text-[11px] uppercase tracking-wide text-stone-500">{PART_LABEL[kind]}</p>
      <pre className="whitespace-pre-wrap break-words font-[inherit]">{text}</pre>
    </div>
  )
}

/** A reply's parts, coloured apart. */
export function Reply({ reply }: { reply: string }) {
  const parts: ReplyPart[] = replyParts(reply)
  if (!parts.length) return <p className="text-sm text-stone-500">(empty reply)</p>
  return (
    <div className="space-y-1">
      {parts.map((p, i) => (
        <Part key={`${i}-${p.kind}`} kind={p.kind} text={p.text} />
      ))}
    </div>
  )
}

function TurnItem({ turn, branch }: { turn: MintTurnView; branch?: ReactNode }) {
  const verdict =
    turn.action === 'propose_solution' && turn.correct !== null ? (turn.correct ? 'correct' : 'wrong') : null
  return (
    <li className="space-y-1 rounded-md border border-stone-200 p-3" data-testid="mint-turn">
      <p className="text-xs text-stone-500">
        Turn {turn.t} · {turn.action.replace('_', ' ')}
        {verdict ? (
          <span className={verdict === 'correct' ? ' text-emerald-700' : ' text-red-700'}> · {verdict}</span>
        ) : null}
      </p>
      <Reply reply={turn.reply} />
      {turn.observation ? <Part kind="output" text={turn.observation} /> : null}
      {turn.feedback ? <Part kind="feedback" text={turn.feedback} /> : null}
      {branch ? <div data-testid="mint-branch-at">{branch}</div> : null}
    </li>
  )
}

/**
 * The episode so far, turn by turn (with a step-through replay), and the countdown of its last turn; `branchAt(t)`: what a feedback
 * turn offers below it (the session page's "Branch from here").
 */
export function Trajectory({
  view,
  branchAt,
}: {
  view: Pick<MintSessionView, 'turns' | 'k' | 'p'>
  branchAt?: (t: number) => ReactNode
}) {
  const last = view.turns.at(-1)
  return (
    <div className="space-y-2">
      {view.turns.length === 0 ? <p className="text-sm text-stone-500">No turn yet.</p> : null}
      <TurnReplay
        turns={view.turns.map((t) => (
          <TurnItem key={t.t} turn={t} branch={t.feedback !== null ? branchAt?.(t.t) : undefined} />
        ))}
      />
      {last && last.stepsLeft !== null ? (
        <p className="text-sm font-medium text-stone-800" data-testid="mint-countdown">
          {last.stepsLeft} of {view.k} steps and {last.proposalsLeft} of {view.p} proposals left.
        </p>
      ) : null}
    </div>
  )
}
