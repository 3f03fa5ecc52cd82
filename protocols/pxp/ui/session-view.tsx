import { ImageViewer } from '@/components/media/image-viewer'
import { Molecule } from '@/protocols/pxp/ui/molecule'
import { TagChip } from '@/protocols/pxp/ui/tag-chip'
import type { SessionViewProps } from '@/components/protocols/types'
import { Alert, Card } from '@/components/ui/card'
import type { PxpMessage } from '@/protocols/pxp/core'
import type { PxpSessionView as View } from '@/protocols/pxp/server/plugin'

const STOP: Record<string, string> = {
  'mutual-ratify': 'Both agents ratified: the session ended in agreement.',
  'human-reject': 'The human rejected the machine’s answer.',
  'machine-reject': 'The machine rejected the human’s answer.',
  bound: 'The message bound was reached.',
}

/** The PXP session: the instance (X-ray, molecule or fields) beside the dialogue of tagged answers. */
export function PxpSessionView({ session: s, turnForm, live }: SessionViewProps) {
  const view = s.view as View
  const input = (view.instance.input ?? {}) as Record<string, unknown>
  const datasetId = view.instance.datasetId
  const mine = new Set(s.mySeats)
  const label = (seat: string) => s.seats.find((x) => x.name === seat)?.label ?? seat
  const messages = s.messages.map((m) => m.body as PxpMessage)
  const researcher = !s.mySeats.length
  return (
    <div className="grid gap-6 lg:grid-cols-[2fr_3fr]">
      {/* The instance stays in view beside a long dialogue. */}
      <div
        className="lg:sticky lg:top-4 lg:max-h-[calc(100vh-2rem)] lg:self-start lg:overflow-y-auto"
        data-testid="instance-panel"
      >
        <Card
          title="The instance"
          description={`Message bound n = ${view.config.n}, REJECT only after message ${view.config.k}.`}
        >
          {typeof input.image === 'string' && datasetId ? (
            <ImageViewer
              src={`/api/assets/${datasetId}/${encodeURIComponent(input.image)}`}
              alt="The X-ray of this case"
              label="X-ray viewer"
            />
          ) : view.instance.imageUrl ? (
            <ImageViewer src={view.instance.imageUrl} alt="The image of this case" />
          ) : typeof input.smiles === 'string' ? (
            <Molecule smiles={input.smiles} label="Product" />
          ) : (
            <pre className="whitespace-pre-wrap text-sm">{JSON.stringify(input, null, 2)}</pre>
          )}
          {researcher && view.instance.prediction !== undefined && (
            <dl className="mt-3 grid grid-cols-[8rem_1fr] gap-y-1 text-sm" data-testid="ground-truth">
              <dt className="text-stone-500">Ground truth y</dt>
              <dd className="break-all">{view.instance.prediction}</dd>
              <dt className="text-stone-500">Ground truth e</dt>
              <dd className="whitespace-pre-wrap">{view.instance.explanation}</dd>
            </dl>
          )}
        </Card>
      </div>
      <div className="space-y-4">
        <Card title="The dialogue" actions={live}>
          <ol className="space-y-3" aria-label="Messages">
            {messages.map((m) => (
              <li
                key={m.seq}
                className={`rounded-md border p-3 text-sm ${mine.has(m.sender) ? 'border-brand-100 bg-brand-50' : 'border-stone-200 bg-white'}`}
              >
                <p className="mb-1 flex items-center gap-2 text-xs text-stone-500">
                  <span>
                    #{m.seq} {mine.has(m.sender) ? 'You' : label(m.sender)}
                  </span>
                  <TagChip tag={m.tag} />
                </p>
                {/* Model output is rendered as text, never as HTML. */}
                {view.hiddenSeats?.includes(m.sender) ? (
                  <p className="text-stone-600" data-testid="hidden-answer">
                    Only the tag is shown: this run hides the {label(m.sender).toLowerCase()}’s answer from you (it is
                    the reference answer).
                  </p>
                ) : (
                  <>
                    <p>
                      <span className="font-medium">{view.template?.predictionField ?? 'Prediction'}:</span>{' '}
                      <span className="break-all">{m.prediction}</span>
                    </p>
                    {s.task === 'drug' && m.prediction && (
                      <details className="mt-1">
                        <summary className="cursor-pointer text-xs text-stone-500">Draw the reactants</summary>
                        <Molecule smiles={m.prediction} label="Reactants" size="sm" />
                      </details>
                    )}
                    <p className="mt-1 whitespace-pre-wrap">
                      <span className="font-medium">{view.template?.explanationField ?? 'Explanation'}:</span>{' '}
                      {m.explanation}
                    </p>
                  </>
                )}
              </li>
            ))}
          </ol>
          {messages.length === 0 && !s.yourTurn && <p className="text-sm text-stone-500">Nobody has written yet.</p>}
        </Card>
        {s.done && <Alert tone="success">{STOP[s.done] ?? s.done}</Alert>}
        {turnForm}
      </div>
    </div>
  )
}
