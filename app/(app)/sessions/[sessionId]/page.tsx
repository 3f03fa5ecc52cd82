import type { Metadata } from 'next'
import Link from 'next/link'
import { GuidelinesButton } from '@/components/pxp/guidelines'
import { ImageViewer } from '@/components/pxp/image-viewer'
import { MachineTyping } from '@/components/pxp/machine-typing'
import { Molecule } from '@/components/pxp/molecule'
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
          <span className="flex items-center gap-3">
            <GuidelinesButton guidelines={s.study.guidelines} />
            <Link href="/sessions" className="text-sm text-brand-700 underline">
              ← My sessions
            </Link>
          </span>
        }
      />
      <div className="grid gap-6 lg:grid-cols-[2fr_3fr]">
        <Card title="The instance">
          {typeof input.image === 'string' && datasetId ? (
            <ImageViewer
              src={`/api/assets/${datasetId}/${encodeURIComponent(input.image)}`}
              alt="The X-ray of this case"
            />
          ) : typeof input.smiles === 'string' ? (
            <Molecule smiles={input.smiles} label="Product" />
          ) : (
            <pre className="whitespace-pre-wrap text-sm">{JSON.stringify(input, null, 2)}</pre>
          )}
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
                  {s.task === 'drug' && m.prediction && (
                    <details className="mt-1">
                      <summary className="cursor-pointer text-xs text-stone-500">Draw the reactants</summary>
                      <Molecule smiles={m.prediction} label="Reactants" size="sm" />
                    </details>
                  )}
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
