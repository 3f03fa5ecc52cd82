import type { Metadata } from 'next'
import Link from 'next/link'
import { notFound } from 'next/navigation'
import { PromptView } from '@/components/experiments/prompt-view'
import { StatusBadge } from '@/components/experiments/status'
import { TagChip } from '@/components/pxp/tag-chip'
import { Card, PageHeader } from '@/components/ui/card'
import { formatDate, Table, Td } from '@/components/ui/table'
import { loadForPage } from '@/lib/server/page-data'
import { inspectSession } from '@/lib/server/services/experiment-views'

export const metadata: Metadata = { title: 'Session inspector' }

const json = (v: unknown) => JSON.stringify(v, null, 2)

export default async function SessionInspectorPage({
  params,
}: {
  params: Promise<{ experimentId: string; sessionId: string }>
}) {
  const { experimentId, sessionId } = await params
  const { session: s, messages, calls } = await loadForPage(inspectSession, { sessionId })
  if (s.experimentId !== experimentId) notFound()
  const instance = s.instance as { input?: Record<string, unknown>; prediction?: string; explanation?: string }
  const callsBySeq = new Map<string, typeof calls>()
  for (const c of calls) {
    const key = c.messageRef ?? '—'
    callsBySeq.set(key, [...(callsBySeq.get(key) ?? []), c])
  }
  const written = new Set(s.contexts.map((c) => String(c.seq)))
  const orphans = calls.filter((c) => !written.has(c.messageRef ?? ''))
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
            <Link href={`/experiments/${experimentId}`} className="text-brand-700 hover:underline">
              {s.experiment?.name ?? 'Experiment'}
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
            <dt className="text-stone-500">Instance id</dt>
            <dd className="font-mono text-xs">{s.instanceId ?? '—'}</dd>
            <dt className="text-stone-500">Repetition, position</dt>
            <dd>
              {s.repetition}, {s.position + 1}
              {s.experiment?.carryOver ? ' (the machine carries over the earlier sessions of this repetition)' : ''}
            </dd>
            <dt className="text-stone-500">Input x</dt>
            <dd>
              <pre className="whitespace-pre-wrap text-xs">{json(instance.input ?? {})}</pre>
            </dd>
            <dt className="text-stone-500">Ground truth y</dt>
            <dd className="whitespace-pre-wrap">{instance.prediction}</dd>
            <dt className="text-stone-500">Ground truth e</dt>
            <dd className="whitespace-pre-wrap">{instance.explanation}</dd>
            <dt className="text-stone-500">Seats</dt>
            <dd>
              <pre className="whitespace-pre-wrap text-xs">{json(s.seats)}</pre>
            </dd>
            <dt className="text-stone-500">Config</dt>
            <dd className="font-mono text-xs">{JSON.stringify(s.config)}</dd>
            <dt className="text-stone-500">Stop reason</dt>
            <dd>{s.stopReason ?? '—'}</dd>
            {s.stallError && (
              <>
                <dt className="text-stone-500">Stalled on</dt>
                <dd className="text-red-700">{s.stallError}</dd>
              </>
            )}
          </dl>
        </Card>

        <Card title="M — messages" description="Append-only; the protocol state is replayed from these rows.">
          <Table
            caption="Messages of this session"
            head={['j', 'From → to', 'Tag', 'Prediction', 'Explanation', 'Category / changed', 'Written by', 'At']}
          >
            {messages.map((m) => {
              const p = (m.payload ?? {}) as { category?: string; changed?: boolean }
              return (
                <tr key={m.id} data-testid={`m-row-${m.seq}`}>
                  <Td>{m.seq}</Td>
                  <Td>
                    {m.sender} → {m.receiver}
                  </Td>
                  <Td>
                    <TagChip tag={m.tag} />
                  </Td>
                  <Td className="max-w-xs whitespace-pre-wrap break-words">{m.prediction}</Td>
                  <Td className="max-w-md whitespace-pre-wrap break-words">{m.explanation}</Td>
                  <Td>
                    {p.category ?? '—'}
                    {p.changed !== undefined ? ` / ${p.changed ? 'changed' : 'unchanged'}` : ''}
                  </Td>
                  <Td>
                    {m.author ??
                      (m.llmCallId ? (
                        <Link href={`/calls/${m.llmCallId}`} className="text-brand-700 hover:underline">
                          LLM call
                        </Link>
                      ) : (
                        'proxy'
                      ))}
                  </Td>
                  <Td>{formatDate(m.createdAt)}</Td>
                </tr>
              )
            })}
          </Table>
        </Card>

        <Card
          title="C — contexts and LLM calls"
          description="For each message: the prompt its sender was given, then every call it took (generator and AGREE checker, retries included)."
        >
          {s.contexts.length === 0 && calls.length === 0 ? (
            <p className="text-sm text-stone-600">No message has been written yet.</p>
          ) : (
            <ol className="space-y-4">
              {s.contexts.map((c) => (
                <li key={c.seq} className="rounded-md border border-stone-200 p-3" data-testid={`c-row-${c.seq}`}>
                  <h3 className="mb-2 text-sm font-semibold">Message j = {c.seq}</h3>
                  <PromptView value={c.context} />
                  {(callsBySeq.get(String(c.seq)) ?? []).map((call) => (
                    <details key={call.id} className="mt-2 text-sm">
                      <summary className="cursor-pointer">
                        {call.purpose} · {call.modelRequested} · {call.status}
                        {call.attempt > 1 ? ` (attempt ${call.attempt})` : ''} · {call.tokensIn}+{call.tokensOut} tokens
                        · {call.latencyMs} ms{call.cached ? ' · replayed' : ''}
                      </summary>
                      <div className="mt-2 space-y-2 pl-4">
                        <p className="text-xs font-medium text-stone-500">Exact request</p>
                        <PromptView value={call.request} />
                        {call.error ? (
                          <p className="text-xs text-red-700">{call.error}</p>
                        ) : (
                          <>
                            <p className="text-xs font-medium text-stone-500">Response</p>
                            <pre className="max-h-60 overflow-auto whitespace-pre-wrap rounded bg-stone-50 p-2 text-xs">
                              {json(call.response)}
                            </pre>
                          </>
                        )}
                        <Link href={`/calls/${call.id}`} className="text-xs text-brand-700 hover:underline">
                          Open in the call log
                        </Link>
                      </div>
                    </details>
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
              <ul className="space-y-1 text-sm">
                {orphans.map((call) => (
                  <li key={call.id}>
                    <Link href={`/calls/${call.id}`} className="text-brand-700 hover:underline">
                      {call.purpose} for j = {call.messageRef ?? '?'} · {call.status}
                      {call.error ? `: ${call.error}` : ''}
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          )}
        </Card>
      </div>
    </>
  )
}
