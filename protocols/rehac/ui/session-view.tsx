import type { SessionViewProps } from '@/components/protocols/types'
import { Badge, Card } from '@/components/ui/card'
import type { RehacSessionView as View } from '@/protocols/rehac/server/views'
import { actionLabel, pct } from '@/protocols/rehac/ui/format'

/**
 * One ReHAC episode: the task (for SQL the schema), "Step t of ≤ threshold", the history with Agent /
 * Human badges and each Observation, and once the episode ended its answer, the gold answer and T / EM /
 * C / R. The turn form (a person's step or decision) comes after the history.
 */
export function RehacSessionView({ session: s, turnForm, live }: SessionViewProps) {
  const v = s.view as View
  return (
    <div className="space-y-4">
      <Card>
        <div className="flex flex-wrap items-start justify-between gap-3 text-sm">
          <div>
            <p className="text-xs uppercase tracking-wide text-stone-500">
              {v.task.kind === 'sql' ? 'SQL task' : v.task.kind === 'yesno' ? 'Yes/no question' : 'Question'}{' '}
              {v.task.id}
              {v.task.taskSet ? ` · ${v.task.taskSet}` : ''}
            </p>
            {v.task.preamble ? <p className="whitespace-pre-wrap text-stone-600">{v.task.preamble}</p> : null}
            <p className="text-base font-medium" data-testid="rehac-question">
              {v.task.question}
            </p>
          </div>
          <div className="text-right">
            <p data-testid="rehac-step">{v.ended ? `Ended after step ${v.t}` : `Step ${v.t} of ≤ ${v.threshold}`}</p>
            {v.simulatedHuman ? <Badge tone="amber">human simulated by an LLM</Badge> : null}
            {live}
          </div>
        </div>
        {v.task.schema ? (
          <details className="mt-2 text-sm">
            <summary className="cursor-pointer text-stone-700">Database schema</summary>
            <pre className="mt-1 max-h-64 overflow-auto whitespace-pre-wrap rounded bg-stone-50 p-2 text-xs">
              {v.task.schema}
            </pre>
          </details>
        ) : null}
      </Card>
      <Card title="History">
        {v.steps.length === 0 ? <p className="text-sm text-stone-500">No step yet.</p> : null}
        <ol className="space-y-3" aria-label="Steps">
          {v.steps.map((step) => (
            <li
              key={step.t}
              className="rounded-md border border-stone-200 p-3 text-sm"
              data-testid="rehac-history-step"
            >
              <div className="mb-1 flex items-center gap-2">
                <span className="text-xs text-stone-500">Step {step.t}</span>
                <Badge tone={step.solver === 'human' ? 'brand' : 'stone'}>
                  {step.solver === 'human' ? (v.simulatedHuman ? 'Human (simulated)' : 'Human') : 'Agent'}
                </Badge>
                {step.pHuman !== null ? (
                  <span className="text-xs text-stone-500">p(human) {step.pHuman.toFixed(2)}</span>
                ) : null}
              </div>
              {step.thought ? <p className="whitespace-pre-wrap">Thought: {step.thought}</p> : null}
              {step.action ? (
                <p className="whitespace-pre-wrap font-mono text-xs">Action: {actionLabel(step.action)}</p>
              ) : (
                <p className="text-xs text-stone-500">Writing the step…</p>
              )}
              {step.observation !== null ? (
                <p className="mt-1 whitespace-pre-wrap rounded bg-stone-50 p-2 text-stone-800">
                  Observation: {step.observation}
                </p>
              ) : null}
            </li>
          ))}
        </ol>
      </Card>
      {turnForm}
      {v.result ? (
        <Card title="Result">
          <dl className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-3" data-testid="rehac-result">
            <div>
              <dt className="text-xs text-stone-500">Answer</dt>
              <dd>{v.result.answer || '(none)'}</dd>
            </div>
            <div>
              <dt className="text-xs text-stone-500">Gold</dt>
              <dd>{v.gold}</dd>
            </div>
            <div>
              <dt className="text-xs text-stone-500">T ({v.task.kind === 'sql' ? 'IoU' : 'F1'}, ×100)</dt>
              <dd>{pct(v.result.T)}</dd>
            </div>
            <div>
              <dt className="text-xs text-stone-500">EM</dt>
              <dd>{v.result.em ? 'yes' : 'no'}</dd>
            </div>
            <div>
              <dt className="text-xs text-stone-500">C (human steps)</dt>
              <dd>
                {v.result.humanSteps} of {v.result.steps}
              </dd>
            </div>
            <div>
              <dt className="text-xs text-stone-500">R = T − λC at λ = 0.08 (×100)</dt>
              <dd>{pct(v.result.R)}</dd>
            </div>
          </dl>
        </Card>
      ) : null}
    </div>
  )
}
