import { type ConnectionNames, connectionOf, modelLabel } from '@/components/runs/model-label'
import { ScrollRegion } from '@/components/ui/scroll-region'
import { Table, Td } from '@/components/ui/table'
import { type LlmRef, Seats } from '@/lib/server/engine/seats'

const json = (v: unknown) => JSON.stringify(v, null, 2)

/**
 * The instance a session runs on, field by field: its input's fields (a name of an image of the
 * dataset, e.g. the X-ray, drawn as the image from `/api/assets/…`), then the ground truth and the
 * rest; the snapshot's JSON one click away.
 */
export function InstanceFields({
  instance,
  assets,
}: {
  instance: unknown
  /** Names in the input that are images of the instance's dataset. */
  assets: readonly string[]
}) {
  const inst = (instance ?? {}) as Record<string, unknown>
  const datasetId = typeof inst.datasetId === 'string' ? inst.datasetId : null
  const input =
    inst.input && typeof inst.input === 'object' && !Array.isArray(inst.input)
      ? Object.entries(inst.input as Record<string, unknown>)
      : []
  const rest = Object.entries(inst).filter(([k]) => k !== 'input' && k !== 'datasetId')
  const value = (v: unknown, image?: string) =>
    image && typeof v === 'string' && datasetId ? (
      <figure>
        <img
          src={`/api/assets/${datasetId}/${encodeURIComponent(v)}`}
          alt={`The instance's ${image} (${v})`}
          className="max-h-80 max-w-full rounded border border-stone-200 bg-black object-contain"
        />
        <figcaption className="mt-1 text-xs text-stone-500">{v}</figcaption>
      </figure>
    ) : typeof v === 'string' ? (
      <span className="whitespace-pre-wrap break-words">{v || '—'}</span>
    ) : (
      <ScrollRegion as="pre" label="Value" className="max-h-60 overflow-auto whitespace-pre-wrap break-words text-xs">
        {json(v)}
      </ScrollRegion>
    )
  return (
    <div data-testid="instance-fields">
      <dl className="grid grid-cols-[8rem_1fr] gap-x-3 gap-y-1.5 text-sm">
        {input.map(([k, v]) => (
          <div key={`input-${k}`} className="contents">
            <dt className="text-stone-500">input · {k}</dt>
            <dd>{value(v, typeof v === 'string' && assets.includes(v) ? k : undefined)}</dd>
          </div>
        ))}
        {rest.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="text-stone-500">{k}</dt>
            <dd>{value(v)}</dd>
          </div>
        ))}
      </dl>
      <details className="mt-2 text-xs">
        <summary className="cursor-pointer text-stone-500">The snapshot as JSON</summary>
        <ScrollRegion
          as="pre"
          label="The snapshot as JSON"
          className="max-h-80 overflow-auto whitespace-pre-wrap break-words"
        >
          {json(instance)}
        </ScrollRegion>
      </details>
    </div>
  )
}

type Call = { connectionId: string | null; modelRequested: string; modelReported: string | null; status: string }

/** "4 calls (reported as gpt-4o-2024-08-06), 1 failed" for the calls of one model. */
function callsLabel(calls: readonly Call[]): string {
  if (!calls.length) return 'no call yet'
  const reported = [...new Set(calls.map((c) => c.modelReported).filter((m): m is string => !!m))].filter(
    (m) => !calls.every((c) => c.modelRequested === m),
  )
  const failed = calls.filter((c) => c.status !== 'ok').length
  return `${calls.length} call${calls.length === 1 ? '' : 's'}${reported.length ? ` (reported as ${reported.join(', ')})` : ''}${failed ? `, ${failed} failed` : ''}`
}

/**
 * Who fills each seat, as a table: the person, or the LLM with its model and connection (each helper
 * on its own row), and the calls of that model in this session's call log; calls of models the seats
 * no longer name (before Change model) are listed after them.
 */
export function SeatsTable({
  seats,
  decls,
  people,
  connections,
  calls,
}: {
  seats: unknown
  decls: ReadonlyArray<{ name: string; label: string }>
  people: ReadonlyArray<{ seat: string; claimable: boolean; user: { email: string } | null }>
  connections: ConnectionNames
  calls: readonly Call[]
}) {
  const parsed = Seats.safeParse(seats)
  if (!parsed.success) return <pre className="whitespace-pre-wrap text-xs">{json(seats)}</pre>
  const fills = parsed.data
  const label = (seat: string) => decls.find((d) => d.name === seat)?.label ?? seat
  const order = [
    ...decls.map((d) => d.name).filter((n) => fills[n]),
    ...Object.keys(fills).filter((n) => !decls.some((d) => d.name === n)),
  ]
  const used = new Set<Call>()
  const callsOf = (ref: LlmRef) => {
    const model = ref.model || connections[ref.connectionId]?.defaultModel
    const mine = calls.filter((c) => c.connectionId === ref.connectionId && c.modelRequested === model)
    for (const c of mine) used.add(c)
    return mine
  }
  const rows: Array<{ key: string; seat: string; by: string; model: string; log: string }> = []
  for (const name of order) {
    const fill = fills[name]
    if (!fill) continue
    if (fill.kind === 'human') {
      const p = people.find((x) => x.seat === name)
      rows.push({
        key: name,
        seat: label(name),
        by: p?.user ? p.user.email : p?.claimable || fill.claimable ? 'a person (unclaimed)' : 'a person',
        model: '—',
        log: '—',
      })
      continue
    }
    const by =
      fill.kind === 'llm' ? 'an LLM' : fill.kind === 'proxy' ? 'the ground-truth proxy' : `program ${fill.program}`
    rows.push({
      key: name,
      seat: label(name),
      by,
      model: fill.kind === 'llm' ? modelLabel(fill.model, connections) : '—',
      log: fill.kind === 'llm' ? callsLabel(callsOf(fill.model)) : '—',
    })
    for (const [helper, ref] of Object.entries(fill.helpers))
      rows.push({
        key: `${name}/${helper}`,
        seat: `${label(name)} · ${helper}`,
        by: 'an LLM (helper)',
        model: modelLabel(ref, connections),
        log: callsLabel(callsOf(ref)),
      })
  }
  const others = new Map<string, Call[]>()
  for (const c of calls) {
    if (used.has(c)) continue
    const key = `${c.modelRequested} on ${c.connectionId ? connectionOf({ connectionId: c.connectionId }, connections) : 'a removed connection'}`
    others.set(key, [...(others.get(key) ?? []), c])
  }
  return (
    <Table caption="Seats of this session" head={['Seat', 'Filled by', 'Model', 'In the call log']}>
      {rows.map((r) => (
        <tr key={r.key} data-testid={`seat-row-${r.key}`}>
          <Td className="whitespace-nowrap">{r.seat}</Td>
          <Td>{r.by}</Td>
          <Td className="break-words">{r.model}</Td>
          <Td>{r.log}</Td>
        </tr>
      ))}
      {[...others].map(([key, cs]) => (
        <tr key={`other-${key}`} data-testid="seat-row-other">
          <Td className="whitespace-nowrap text-stone-500">earlier model</Td>
          <Td className="text-stone-500">no seat names it now</Td>
          <Td className="break-words">{key}</Td>
          <Td>{callsLabel(cs)}</Td>
        </tr>
      ))}
    </Table>
  )
}
