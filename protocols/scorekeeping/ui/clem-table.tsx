import type { ModelRow } from '@/protocols/scorekeeping/core/clemscore'

const n2 = (x: number) => (Number.isNaN(x) ? '—' : x.toFixed(2))

/** clemcore's table: per player % Played, Quality Score and clemscore (and per game or experiment). */
export function ClemTable({ rows, unit, testId }: { rows: ModelRow[]; unit: string; testId: string }) {
  if (!rows.length) return <p className="text-sm text-stone-500">Appears when episodes have finished.</p>
  return (
    <table className="w-full text-sm tabular-nums" data-testid={testId}>
      <thead>
        <tr className="text-left text-xs text-stone-500">
          <th className="pb-1 font-medium">Player (model or person)</th>
          <th className="pb-1 font-medium">{unit}</th>
          <th className="pb-1 font-medium">% Played</th>
          <th className="pb-1 font-medium">Quality Score</th>
          <th className="pb-1 font-medium">clemscore</th>
        </tr>
      </thead>
      <tbody>
        {rows.flatMap((r) =>
          r.games.map((g, i) => (
            <tr key={`${r.model}/${g.game}`} data-player={r.model} data-clemscore={r.clemscore}>
              <td className="py-0.5">{i === 0 ? r.model : ''}</td>
              <td>{g.game}</td>
              <td>{n2(g.played)}</td>
              <td>{n2(g.quality)}</td>
              <td className="font-medium">{i === 0 ? n2(r.clemscore) : ''}</td>
            </tr>
          )),
        )}
      </tbody>
    </table>
  )
}
