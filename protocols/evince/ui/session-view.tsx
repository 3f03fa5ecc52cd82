import { DistributionBars } from '@/protocols/evince/ui/distribution'
import { MetricCharts } from '@/protocols/evince/ui/metric-charts'
import type { SessionViewProps } from '@/components/protocols/types'
import { Badge, Card } from '@/components/ui/card'
import { ScrollRegion } from '@/components/ui/scroll-region'
import { mergedPredictions } from '@/protocols/evince/core'
import type { EvinceSessionView as View } from '@/protocols/evince/server/plugin'

const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined ? '—' : x.toFixed(d))

/**
 * A debate: the case, both debaters' turns round by round (top-k bars, arguments, CRIT), the shared
 * argument pool, the moderator's metrics per round (charts and the table of every number), the final
 * distribution and the report. The ground truth is in the view only for those outside the debate.
 */
export function EvinceSessionView({ session: s, turnForm, live }: SessionViewProps) {
  const d = s.view as View
  const points = d.points
  const stopReason = s.done ?? s.stopReason
  const stopRound = d.stopLabel ? (d.rounds.filter((r) => r.metrics).at(-1)?.round ?? null) : null
  const active = s.status !== 'done' && s.status !== 'cancelled'
  const waitingFor = d.next
    ? d.next.kind === 'turn'
      ? `Debater ${d.next.seat}, round ${d.next.round}`
      : d.next.kind === 'crit'
        ? `the moderator's CRIT, round ${d.next.round}`
        : "the moderator's report"
    : null
  return (
    <div className="space-y-4">
      <Card>
        <div className="flex flex-wrap items-start justify-between gap-3 text-sm">
          <div className="flex flex-wrap items-center gap-3">
            {d.stopLabel ? (
              <span data-testid="stop-reason" data-reason={stopReason ?? ''}>
                Stopped: <strong>{d.stopLabel}</strong>
              </span>
            ) : waitingFor ? (
              <span>Next: {waitingFor}</span>
            ) : null}
            <span className="text-stone-500">
              k = {d.config.k} · max {d.config.maxRounds} rounds · τ = {d.config.tau} · ε = {d.config.epsilon}
              {d.config.crit ? '' : ' · no judge: equal weights'}
            </span>
          </div>
          {live}
        </div>
        <p className="mt-2 text-sm">
          <span className="font-medium">Case:</span> {d.symptoms}
        </p>
        {d.truth ? (
          <p className="mt-1 text-sm text-stone-600" data-testid="ground-truth">
            Ground truth (not shown to the debaters): <strong>{d.truth}</strong>
          </p>
        ) : null}
      </Card>

      <section aria-label="Rounds" className="space-y-3">
        {d.rounds.map((r) => (
          <div
            key={r.round}
            className="rounded-lg border border-stone-200 bg-white p-3"
            data-testid={`round-${r.round}`}
          >
            <div className="mb-2 flex flex-wrap items-center gap-2 text-sm">
              <h3 className="font-semibold text-stone-900">Round {r.round}</h3>
              <Badge>Δ = {r.delta.toFixed(3)}</Badge>
              {r.metrics ? (
                <span className="text-xs text-stone-500">
                  WD {(r.metrics.wd * 100).toFixed(1)}% · JSD {f(r.metrics.jsd)} · MI {f(r.metrics.mi)} bits · NMI{' '}
                  {f(r.metrics.nmi)}
                  {r.crit !== null ? ` · CRIT ${f(r.crit)}` : ''}
                </span>
              ) : null}
            </div>
            {r.metrics?.warnings.length ? (
              <ul className="mb-2 text-xs text-amber-800" data-testid={`warnings-${r.round}`}>
                {r.metrics.warnings.map((w) => (
                  <li key={w}>⚠ {w}</li>
                ))}
              </ul>
            ) : null}
            <div className="grid gap-4 md:grid-cols-2">
              {(['A', 'B'] as const).map((seat) => {
                const t = r[seat]
                const crit = seat === 'A' ? r.critA : r.critB
                return (
                  <div key={seat} data-testid={`turn-${r.round}-${seat}`}>
                    <p className="mb-1 text-xs font-medium uppercase tracking-wide text-stone-500">
                      Debater {seat} {crit ? `· CRIT Γ = ${f(crit.score)}` : ''}
                    </p>
                    {t ? (
                      <>
                        <DistributionBars
                          predictions={mergedPredictions(t.predictions, d.config.aliases)}
                          tone={seat === 'A' ? 'a' : 'b'}
                        />
                        {t.arguments.length ? (
                          <ul className="mt-2 list-disc pl-5 text-xs text-stone-700">
                            {t.arguments.map((a, i) => (
                              <li key={i}>{a}</li>
                            ))}
                          </ul>
                        ) : null}
                        {t.counterArguments.length ? (
                          <ul className="mt-1 list-disc pl-5 text-xs text-red-800">
                            {t.counterArguments.map((a, i) => (
                              <li key={i}>Against the other: {a}</li>
                            ))}
                          </ul>
                        ) : null}
                        {crit?.comment ? (
                          <p className="mt-1 text-xs italic text-stone-500">Judge: {crit.comment}</p>
                        ) : null}
                      </>
                    ) : (
                      <p className="text-sm text-stone-500">waiting…</p>
                    )}
                  </div>
                )
              })}
            </div>
          </div>
        ))}
        {d.rounds.length === 0 && active ? (
          <p className="text-sm text-stone-500">Debater A is preparing the opening prediction…</p>
        ) : null}
      </section>

      {turnForm}

      {d.pool.some((t) => t.arguments.length || t.counterArguments.length) ? (
        <Card title="Shared argument pool (R)">
          <details open={!active ? undefined : true}>
            <summary className="cursor-pointer text-sm text-stone-600">
              Every argument both debaters have made, in order; each debater sees this pool every round.
            </summary>
            <ol className="mt-2 space-y-1 text-sm" data-testid="argument-pool">
              {d.pool.flatMap((t) => [
                ...t.arguments.map((a, i) => (
                  <li key={`${t.seq}-a${i}`}>
                    <span className="mr-2 text-xs font-medium text-stone-500">
                      {t.sender} · round {t.round}
                    </span>
                    {a}
                  </li>
                )),
                ...t.counterArguments.map((a, i) => (
                  <li key={`${t.seq}-c${i}`} className="text-red-900">
                    <span className="mr-2 text-xs font-medium text-stone-500">
                      {t.sender} against {t.sender === 'A' ? 'B' : 'A'} · round {t.round}
                    </span>
                    {a}
                  </li>
                )),
              ])}
            </ol>
          </details>
        </Card>
      ) : null}

      {points.length ? (
        <Card title="Information flow per round">
          <MetricCharts points={points} stopRound={stopRound} />
          <ScrollRegion label="Metrics per round" className="mt-3 overflow-x-auto">
            <table className="w-full text-xs tabular-nums" data-testid="metrics-table">
              <thead>
                <tr className="text-left text-stone-500">
                  {[
                    'Round',
                    'Δ',
                    'H(A)',
                    'H(B)',
                    'KL(A‖B)',
                    'KL(B‖A)',
                    'H(A,B)',
                    'H(B,A)',
                    'JSD',
                    'WD %',
                    'MI',
                    'NMI',
                    'CRIT',
                  ].map((h) => (
                    <th key={h} className="pr-3 font-medium">
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {points.map((p) => (
                  <tr key={p.round} data-round={p.round} data-wd={p.wd} data-nmi={p.nmi}>
                    <td className="pr-3">{p.round}</td>
                    <td className="pr-3">{f(p.delta)}</td>
                    <td className="pr-3">{f(p.entropyA)}</td>
                    <td className="pr-3">{f(p.entropyB)}</td>
                    <td className="pr-3">{f(p.klAB)}</td>
                    <td className="pr-3">{f(p.klBA)}</td>
                    <td className="pr-3">{f(p.crossEntropyAB)}</td>
                    <td className="pr-3">{f(p.crossEntropyBA)}</td>
                    <td className="pr-3">{f(p.jsd)}</td>
                    <td className="pr-3">{(p.wd * 100).toFixed(1)}</td>
                    <td className="pr-3">{f(p.mi)}</td>
                    <td className="pr-3">{f(p.nmi)}</td>
                    <td className="pr-3">{f(p.crit)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p className="mt-1 text-xs text-stone-500">
              Bits (log base 2). Labels aligned on the union of both lists (parentheticals stripped, case-folded,
              aliases applied), each distribution renormalised; KL and cross-entropy use ε-smoothing; WD uses the 0/1
              ground metric (= total variation); MI uses the maximal-agreement coupling; NMI = MI / max(H(A), H(B)).
            </p>
          </ScrollRegion>
        </Card>
      ) : null}

      {d.final && !active ? (
        <Card title="Final distribution">
          <div className="grid gap-6 md:grid-cols-2">
            <div>
              <p className="mb-1 text-xs text-stone-500">
                CRIT-weighted P_f = (Ω_A·P_A + Ω_B·P_B)/(Ω_A + Ω_B), round {d.final.round}, Ω_A = {f(d.final.omegaA)},
                Ω_B = {f(d.final.omegaB)}
              </p>
              <DistributionBars predictions={d.final.crit} tone="final" testId="final-distribution" />
              <p className="mt-2 text-xs text-stone-600">
                Entropy {f(d.finalEntropy, 2)} bits
                {d.highEntropy ? ' — high: collect the missing information below before deciding.' : ''}
              </p>
            </div>
            <div>
              <p className="mb-1 text-xs text-stone-500">EnToPPS (appendix F), for comparison</p>
              <DistributionBars predictions={d.final.entopps} tone="final" />
            </div>
          </div>
        </Card>
      ) : null}

      {d.report ? (
        <Card title="Moderator's report">
          <div className="space-y-2 text-sm" data-testid="moderator-report">
            <p>{d.report.conclusion}</p>
            {(
              [
                ['Arguments', d.report.arguments],
                ['Counter-arguments', d.report.counterArguments],
                ['Missing information to collect', d.report.missingInformation],
                ['Recommended lab tests', d.report.labTests],
              ] as const
            ).map(([title, items]) =>
              items.length ? (
                <div key={title}>
                  <p className="font-medium text-stone-800">{title}</p>
                  <ul className="list-disc pl-5 text-stone-700">
                    {items.map((x, i) => (
                      <li key={i}>{x}</li>
                    ))}
                  </ul>
                </div>
              ) : null,
            )}
          </div>
        </Card>
      ) : null}
    </div>
  )
}
