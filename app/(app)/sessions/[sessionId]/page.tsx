import type { Metadata } from 'next'
import Link from 'next/link'
import { MachineTyping } from '@/components/pxp/machine-typing'
import { RespondForm } from '@/components/pxp/respond-form'
import { TagChip } from '@/components/pxp/tag-chip'
import { Alert, Card, PageHeader } from '@/components/ui/card'
import { loadForPage } from '@/lib/server/page-data'
import { getPxpSession } from '@/lib/server/services/pxp-sessions'

export const metadata: Metadata = { title: 'Session' }

const STOP: Record<string, string> = {
  'mutual-ratify': 'Both agents ratified: the session ended in agreement.',
  'human-reject': 'The human rejected the machine’s answer.',
  'machine-reject': 'The machine rejected the human’s answer.',
  bound: 'The message bound was reached.',
}

export default async function SessionPage({ params }: { params: Promise<{ sessionId: string }> }) {
  const { sessionId } = await params
  const s = await loadForPage(getPxpSession, { sessionId })
  const input = s.instance.input as Record<string, unknown>
  const datasetId = (s.instance as { datasetId?: string }).datasetId
  const own = [...s.messages].reverse().find((m) => m.sender === s.seat)
  const partner = s.seat === 'h' ? 'Machine' : 'Tester'
  return (
    <div className="max-w-5xl space-y-6">
      <PageHeader
        title={`${s.task.toUpperCase()} session`}
        description={
          <>
            {s.study.name}
            {s.experiment && <> · {s.experiment.name}</>} · message bound {s.config.n}, REJECT after message{' '}
            {s.config.k}
          </>
        }
        actions={
          <Link href="/sessions" className="text-sm text-brand-700 underline">
            ← My sessions
          </Link>
        }
      />
      <div className="grid gap-6 lg:grid-cols-[2fr_3fr]">
        <Card title="The instance">
          {typeof input.image === 'string' && datasetId ? (
            <img
              src={`/api/assets/${datasetId}/${encodeURIComponent(input.image)}`}
              alt="The X-ray of this case"
              className="w-full rounded"
            />
          ) : typeof input.smiles === 'string' ? (
            <p>
              Product: <code className="break-all">{input.smiles}</code>
            </p>
          ) : (
            <pre className="whitespace-pre-wrap text-sm">{JSON.stringify(input, null, 2)}</pre>
          )}
          <details className="mt-4 text-sm">
            <summary className="cursor-pointer font-medium">Study guidelines</summary>
            <p className="mt-2 whitespace-pre-wrap">{s.study.guidelines || 'No guidelines yet.'}</p>
          </details>
        </Card>
        <div className="space-y-4">
          <Card title="The dialogue">
            <ol className="space-y-3" aria-label="Messages">
              {s.messages.map((m) => (
                <li
                  key={m.seq}
                  className={`rounded-md border p-3 text-sm ${m.sender !== s.seat ? 'border-stone-200 bg-white' : 'border-brand-100 bg-brand-50'}`}
                >
                  <p className="mb-1 flex items-center gap-2 text-xs text-stone-500">
                    <span>
                      #{m.seq} {m.sender === s.seat ? 'You' : partner}
                    </span>
                    <TagChip tag={m.tag} />
                  </p>
                  {/* Model output is rendered as text, never as HTML. */}
                  <p>
                    <span className="font-medium">Prediction:</span> <span className="break-all">{m.prediction}</span>
                  </p>
                  <p className="mt-1 whitespace-pre-wrap">
                    <span className="font-medium">Explanation:</span> {m.explanation}
                  </p>
                </li>
              ))}
            </ol>
            {s.messages.length === 0 && !s.yourTurn && (
              <p className="text-sm text-stone-500">The {partner.toLowerCase()} has not answered yet.</p>
            )}
            <MachineTyping sessionId={s.id} lastSeq={s.messages.at(-1)?.seq ?? 0} />
          </Card>
          {s.done && <Alert tone="success">{STOP[s.done] ?? s.done}</Alert>}
          {s.status === 'stalled' && (
            <Alert>The machine could not answer: {s.stallError}. A researcher can retry the session.</Alert>
          )}
          {s.yourTurn && s.ask && (
            <Card title={`Your response (message ${s.ask.j})`}>
              <RespondForm
                sessionId={s.id}
                j={s.ask.j}
                k={s.config.k}
                ownPrev={own ? { y: own.prediction ?? '', e: own.explanation ?? '' } : undefined}
              />
            </Card>
          )}
          {!s.done && !s.yourTurn && s.status !== 'stalled' && (
            <Alert tone="info">The {partner.toLowerCase()} is thinking; this page updates by itself.</Alert>
          )}
        </div>
      </div>
    </div>
  )
}
