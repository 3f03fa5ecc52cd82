import type { Metadata } from 'next'
import Link from 'next/link'
import { notFound } from 'next/navigation'
import { uiFor } from '@/components/protocols/registry'
import { sessionState, StatusBadge } from '@/components/runs/status'
import { InstanceFields, SeatsTable } from '@/components/sessions/inspector-d'
import { freshTurns, turnsOf } from '@/components/sessions/prompt-turns'
import { CallView, ContextView, ProgramRunView } from '@/components/sessions/prompt-view'
import { Card, PageHeader } from '@/components/ui/card'
import { ScrollRegion } from '@/components/ui/scroll-region'
import { formatDate, Table, Td } from '@/components/ui/table'
import { loadForPage } from '@/lib/server/page-data'
import { inspectSession } from '@/lib/server/services/sessions'

export const metadata: Metadata = { title: 'Session inspector' }

const json = (v: unknown) => JSON.stringify(v, null, 2)

/**
 * The inspector of any protocol's session: D (the session and its instance snapshot), M (every
 * message, drawn by the protocol's renderer when it has one) and C (what each sender was conditioned
 * on, collapsed, showing what is new since its previous prompt) with every LLM call it took.
 */
export default async function SessionInspectorPage({
  params,
}: {
  params: Promise<{ runId: string; sessionId: string }>
}) {
  const { runId, sessionId } = await params
  const {
    session: s,
    messages,
    calls,
    programRuns,
    seatDecls,
    connections,
    assets,
  } = await loadForPage(inspectSession, {
    sessionId,
  })
  if (s.runId !== runId) notFound()
  const ui = uiFor(s.protocol)
  const instance = (s.instance ?? {}) as { datasetId?: unknown }
  const datasetId = typeof instance.datasetId === 'string' ? instance.datasetId : null
  const callsBySeq = new Map<string, typeof calls>()
  for (const c of calls) {
    const key = c.messageRef ?? '—'
    callsBySeq.set(key, [...(callsBySeq.get(key) ?? []), c])
  }
  const runsBySeq = new Map<number, typeof programRuns>()
  for (const r of programRuns) runsBySeq.set(r.seq, [...(runsBySeq.get(r.seq) ?? []), r])
  const senderOf = new Map(messages.map((m) => [m.seq, m.sender]))
  // What is new in each prompt: compared with the same sender's previous chat prompt.
  const lastPrompt = new Map<string, { seq: number; turns: NonNullable<ReturnType<typeof turnsOf>> }>()
  const contexts = s.contexts.map((c) => {
    const turns = turnsOf(c.context)
    const sender = senderOf.get(c.seq) ?? '?'
    const prev = lastPrompt.get(sender)
    const fresh = turns && prev ? freshTurns(turns, prev.turns) : null
    if (turns) lastPrompt.set(sender, { seq: c.seq, turns })
    return { ...c, fresh, previousSeq: fresh ? (prev?.seq ?? null) : null }
  })
  const written = new Set(s.contexts.map((c) => String(c.seq)))
  const orphans = calls.filter((c) => !written.has(c.messageRef ?? ''))
  const orphanRuns = programRuns.filter((r) => !written.has(String(r.seq)))
  const Body = ui?.MessageBody
  return (
    <>
      <PageHeader
        title={
          <>
            Session {s.repetition}.{s.position + 1} <StatusBadge status={s.status} />
          </>
        }
        description={
          <>
            {s.protocolLabel} ·{' '}
            <Link href={`/runs/${runId}`} className="text-brand-700 underline">
              {s.run?.name ?? 'Run'}
            </Link>{' '}
            ·{' '}
            <Link href={`/sessions/${s.id}`} className="text-brand-700 underline">
              the session page
            </Link>{' '}
            · the blackboard of this session: D (the data instance), M (the messages) and C (what each sender was
            conditioned on), with the exact request of every LLM call.
          </>
        }
      />
      <div className="space-y-6">
        <Card title="D — the session and its instance">
          <dl className="grid grid-cols-[10rem_1fr] gap-y-1.5 text-sm">
            <dt className="text-stone-500">Session id</dt>
            <dd className="font-mono text-xs">{s.id}</dd>
            <dt className="text-stone-500">Protocol</dt>
            <dd>
              {s.protocolLabel} (version {s.protocolVersion}), task {s.task}
            </dd>
            <dt className="text-stone-500">State</dt>
            <dd>
              {sessionState(s)}
              {s.retryCount ? ` · retried ${s.retryCount}×` : ''}
            </dd>
            <dt className="text-stone-500">Instance id</dt>
            <dd className="font-mono text-xs">{s.instanceId ?? '—'}</dd>
            <dt className="text-stone-500">Repetition, position</dt>
            <dd>
              {s.repetition}, {s.position + 1}
            </dd>
            <dt className="text-stone-500">Key</dt>
            <dd className="font-mono text-xs" data-testid="session-key">
              {s.key}
              {s.parentId ? (
                <>
                  {' '}
                  · forked from <Link href={`/runs/${runId}/sessions/${s.parentId}`}>{s.parentId}</Link> after its first{' '}
                  {s.forkSeq} message{s.forkSeq === 1 ? '' : 's'}
                </>
              ) : null}
            </dd>
            <dt className="text-stone-500">People</dt>
            <dd>
              {s.people.length
                ? s.people.map((p) => `${p.seat}: ${p.user?.email ?? (p.claimable ? 'unclaimed' : '—')}`).join(', ')
                : '—'}
            </dd>
            <dt className="text-stone-500">Instance snapshot</dt>
            <dd>
              <InstanceFields instance={s.instance} assets={assets} />
            </dd>
            <dt className="text-stone-500">Config</dt>
            <dd className="break-all font-mono text-xs">{JSON.stringify(s.config)}</dd>
          </dl>
          <h3 className="mt-4 mb-2 text-sm font-semibold">Seats</h3>
          <SeatsTable seats={s.seats} decls={seatDecls} people={s.people} connections={connections} calls={calls} />
        </Card>

        <Card title="M — messages" description="Append-only; the protocol state is replayed from these rows.">
          <Table caption="Messages of this session" head={['j', 'From → to', 'Message', 'Written by', 'At']}>
            {messages.map((m) => (
              <tr key={m.id} data-testid={`m-row-${m.seq}`}>
                <Td>{m.seq}</Td>
                <Td className="whitespace-nowrap">
                  {m.sender} → {m.receiver}
                </Td>
                <Td className="max-w-2xl">
                  {Body ? (
                    <Body body={m.body} meta={m.payload} />
                  ) : (
                    <ScrollRegion
                      as="pre"
                      label={`Message ${m.seq}`}
                      className="max-h-60 overflow-auto whitespace-pre-wrap break-words text-xs"
                    >
                      {json(m.body)}
                    </ScrollRegion>
                  )}
                </Td>
                <Td>
                  {m.author ??
                    (m.llmCallId ? (
                      <Link href={`/calls/${m.llmCallId}`} className="text-brand-700 underline">
                        LLM call
                      </Link>
                    ) : (
                      'proxy / program'
                    ))}
                </Td>
                <Td className="whitespace-nowrap">{formatDate(m.createdAt)}</Td>
              </tr>
            ))}
          </Table>
        </Card>

        <Card
          title="C — contexts and LLM calls"
          description="For each message: the prompt its sender was given (collapsed; opened, it shows what is new since the sender's previous prompt), then every call it took, retries included, and every program it ran."
        >
          {contexts.length === 0 && calls.length === 0 && programRuns.length === 0 ? (
            <p className="text-sm text-stone-600">No message has been written yet.</p>
          ) : (
            <ol className="space-y-3">
              {contexts.map((c) => (
                <li key={c.seq} className="rounded-md border border-stone-200 p-3" data-testid={`c-row-${c.seq}`}>
                  <h3 className="mb-1 text-sm font-semibold">
                    Message j = {c.seq}
                    {senderOf.has(c.seq) ? ` (${senderOf.get(c.seq)})` : ''}
                  </h3>
                  <ContextView
                    seq={c.seq}
                    value={c.context}
                    fresh={c.fresh}
                    previousSeq={c.previousSeq}
                    datasetId={datasetId}
                  />
                  {(callsBySeq.get(String(c.seq)) ?? []).map((call) => (
                    <CallView key={call.id} call={call} datasetId={datasetId} />
                  ))}
                  {(runsBySeq.get(c.seq) ?? []).map((r) => (
                    <ProgramRunView key={r.id} run={r} />
                  ))}
                </li>
              ))}
            </ol>
          )}
          {orphans.length > 0 && (
            <div className="mt-4">
              <h3 className="mb-1 text-sm font-semibold">Calls that produced no message</h3>
              <p className="mb-2 text-xs text-stone-600">
                A step that failed (the session stalls and nothing is appended) or is still in flight.
              </p>
              {orphans.map((call) => (
                <div key={call.id}>
                  <p className="text-xs text-stone-500">For j = {call.messageRef ?? '?'}</p>
                  <CallView call={call} datasetId={datasetId} />
                </div>
              ))}
            </div>
          )}
          {orphanRuns.length > 0 && (
            <div className="mt-4">
              <h3 className="mb-1 text-sm font-semibold">Programs run by a step that wrote no message</h3>
              <p className="mb-2 text-xs text-stone-600">
                A step that was stopped (paused, cancelled, past its seat&apos;s time limit), failed, or is still in
                flight.
              </p>
              {orphanRuns.map((r) => (
                <div key={r.id}>
                  <p className="text-xs text-stone-500">For j = {r.seq}</p>
                  <ProgramRunView run={r} />
                </div>
              ))}
            </div>
          )}
        </Card>
      </div>
    </>
  )
}
