import type { SessionViewProps } from '@/components/protocols/types'
import { Badge, Card } from '@/components/ui/card'
import { Markdown } from '@/components/ui/markdown'
import { ScrollRegion } from '@/components/ui/scroll-region'
import type { LabellingSessionView as View } from '@/protocols/labelling/server/views'

const longText = 'max-h-[60vh] overflow-y-auto whitespace-pre-wrap rounded-md bg-stone-50 p-3 text-sm leading-relaxed'

/**
 * One item to label: a text (plain or Markdown), a query with its document (the query, description and
 * narrative above the document, which scrolls on its own), or a transcript by turn. Beside it the run's
 * progress, then the label form when it is the viewer's turn, or the label once sent.
 */
export function LabellingSessionView({ session: s, turnForm, live }: SessionViewProps) {
  const v = s.view as View
  const { item, label, progress } = v
  return (
    <div className="space-y-4">
      <Card>
        <div className="flex flex-wrap items-center justify-between gap-3 text-sm">
          <p className="text-stone-600">
            Item <span className="font-mono">{item.id}</span>
            {progress ? (
              <span data-testid="label-progress">
                {' '}
                · {progress.done} of {progress.total} labels done, {progress.remaining} to go
              </span>
            ) : null}
          </p>
          {live}
        </div>
        <div className="mt-3 space-y-3" data-scrolls>
          {item.kind === 'text' ? (
            <>
              {item.title ? <h2 className="text-base font-semibold">{item.title}</h2> : null}
              <ScrollRegion label="The text to label" className={longText}>
                {item.format === 'markdown' ? <Markdown>{item.text}</Markdown> : item.text}
              </ScrollRegion>
            </>
          ) : item.kind === 'query-doc' ? (
            <>
              <dl className="space-y-1 text-sm">
                <div>
                  <dt className="text-xs uppercase tracking-wide text-stone-500">Query (topic {item.topicId})</dt>
                  <dd className="text-base font-medium">{item.query}</dd>
                </div>
                {item.description ? (
                  <div>
                    <dt className="text-xs uppercase tracking-wide text-stone-500">Description</dt>
                    <dd>{item.description}</dd>
                  </div>
                ) : null}
                {item.narrative ? (
                  <div>
                    <dt className="text-xs uppercase tracking-wide text-stone-500">Narrative</dt>
                    <dd>{item.narrative}</dd>
                  </div>
                ) : null}
              </dl>
              <h3 className="text-xs uppercase tracking-wide text-stone-500">Document {item.docId}</h3>
              <ScrollRegion label={`Document ${item.docId}`} className={longText}>
                {item.document}
              </ScrollRegion>
            </>
          ) : (
            <>
              <h2 className="text-base font-semibold">{item.title}</h2>
              <p className="text-xs text-stone-500">
                A {item.protocol} session ({item.sessionId}), {item.turns.length} turns
              </p>
              <ScrollRegion label="The transcript" className="max-h-[60vh] overflow-y-auto">
                <ol className="space-y-2">
                  {item.turns.map((t) => (
                    <li key={t.index} className="rounded-md bg-stone-50 px-3 py-2 text-sm">
                      <span className="block text-xs text-stone-500">
                        Turn {t.index} · {t.who}
                      </span>
                      <span className="whitespace-pre-wrap">{t.text}</span>
                    </li>
                  ))}
                </ol>
              </ScrollRegion>
            </>
          )}
        </div>
      </Card>
      {turnForm}
      {label ? (
        <Card title="The label">
          {label.kind === 'unparseable' ? (
            <p className="text-sm">
              <Badge>unparseable</Badge> {label.reason}
            </p>
          ) : (
            <dl className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4" data-testid="label-answers">
              {Object.entries(label.answers).map(([q, a]) => (
                <div key={q}>
                  <dt className="text-xs text-stone-500">{q}</dt>
                  <dd className="font-medium">{String(a)}</dd>
                </div>
              ))}
              {label.rationale ? (
                <div className="col-span-full">
                  <dt className="text-xs text-stone-500">Rationale</dt>
                  <dd className="whitespace-pre-wrap">{label.rationale}</dd>
                </div>
              ) : null}
            </dl>
          )}
        </Card>
      ) : null}
    </div>
  )
}
