import type { SessionViewProps } from '@/components/protocols/types'
import { Badge, Card } from '@/components/ui/card'
import type { ScorekeepingSessionView as View } from '@/protocols/scorekeeping/server/results'

const yesNo = (v: number | null) => (v === 1 ? 'yes' : v === 0 ? 'no' : v === 2 ? 'not parsed' : '—')

/**
 * One episode of the scorekeeping game: the slots the answerer knows, the dialogue (requests and
 * answers), and beside it the probing rounds as side questions that are not part of the conversation
 * (each probe's tries and the parsed answer; its ground truth once the game is over, or for those
 * outside it), then clembench's scores.
 */
export function ScorekeepingSessionView({ session: s, turnForm, live }: SessionViewProps) {
  const v = s.view as View
  const scores = v.scores?.['episode scores']
  return (
    <div className="space-y-4">
      <Card>
        <div className="flex flex-wrap items-start justify-between gap-3 text-sm">
          <p>
            <span className="font-medium">{v.experiment ?? 'Game'}</span>
            {v.gameId !== null ? <span className="text-stone-500"> · instance {v.gameId}</span> : null}
            <span className="text-stone-500"> · the questioner is the {v.tag}</span>
            {v.outcomeLabel ? (
              <span className="ml-2" data-testid="outcome" data-outcome={v.outcome ?? ''}>
                · <strong>{v.outcomeLabel}</strong>
              </span>
            ) : null}
          </p>
          {live}
        </div>
        <dl
          className="mt-2 grid grid-cols-2 gap-x-4 gap-y-1 text-sm sm:grid-cols-3"
          aria-label="What the answerer knows"
        >
          {v.slots.map((slot) => (
            <div key={slot.name}>
              <dt className="text-xs uppercase tracking-wide text-stone-500">{slot.name}</dt>
              <dd>{slot.value}</dd>
            </div>
          ))}
        </dl>
      </Card>

      <div className="grid gap-4 lg:grid-cols-2">
        <section aria-label="The conversation" className="space-y-2">
          <h2 className="text-sm font-semibold text-stone-900">The conversation</h2>
          {v.dialogue.length === 0 ? <p className="text-sm text-stone-500">No request yet.</p> : null}
          <ol className="space-y-2">
            {v.dialogue.map((d) => (
              <li
                key={d.seq}
                className={
                  d.kind === 'request'
                    ? 'rounded-md bg-stone-100 px-3 py-2 text-sm'
                    : 'ml-6 rounded-md border border-brand-200 bg-white px-3 py-2 text-sm'
                }
              >
                <span className="block text-xs text-stone-500">
                  {d.kind === 'request' ? `Request, round ${d.round}` : 'Answer'}
                </span>
                {d.text}
              </li>
            ))}
          </ol>
          {turnForm}
        </section>

        <section aria-label="Side questions" className="space-y-2">
          <h2 className="text-sm font-semibold text-stone-900">
            Side questions <span className="font-normal text-stone-500">(not part of the conversation)</span>
          </h2>
          {v.probing.map((r) => (
            <details key={r.round} open={!r.played} className="rounded-md border border-stone-200 bg-white p-2 text-sm">
              <summary className="cursor-pointer">
                Probing round {r.round} {r.played ? <Badge tone="green">played</Badge> : null}
              </summary>
              <table className="mt-2 w-full text-xs">
                <thead>
                  <tr className="text-left text-stone-500">
                    <th className="font-medium">Slot</th>
                    <th className="font-medium">Answer</th>
                    <th className="font-medium">Truth</th>
                    <th className="font-medium">Tries</th>
                  </tr>
                </thead>
                <tbody>
                  {r.probes.map((p) => (
                    <tr key={p.slot} data-testid={`probe-${r.round}-${p.slot}`}>
                      <td>{p.slot}</td>
                      <td>{yesNo(p.value)}</td>
                      <td>{p.gt === null ? 'hidden' : p.gt === 1 ? 'yes' : 'no'}</td>
                      <td title={p.tries.map((t) => `${t.question} → ${t.answer ?? '…'}`).join('\n')}>
                        {p.tries.length}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </details>
          ))}
        </section>
      </div>

      {scores ? (
        <Card title="Scores (clembench)">
          <dl className="grid grid-cols-2 gap-2 text-sm tabular-nums sm:grid-cols-4" data-testid="episode-scores">
            {(
              [
                ['Main Score', scores['Main Score']],
                ['Accuracy', scores.Accuracy],
                ['Kappa', scores.Kappa],
                ['Slot-Filling-Accuracy', scores['Slot-Filling-Accuracy']],
                ['Middle-Accuracy', scores['Middle-Accuracy'] ?? null],
                ['Success', scores.Success],
                ['Aborted', scores.Aborted],
                ['Request Success Ratio', scores['Request Success Ratio']],
              ] as const
            ).map(([k, x]) => (
              <div key={k}>
                <dt className="text-xs text-stone-500">{k}</dt>
                <dd data-score={k}>{x === null || x === undefined ? '—' : Number.isInteger(x) ? x : x.toFixed(3)}</dd>
              </div>
            ))}
          </dl>
        </Card>
      ) : null}
    </div>
  )
}
