import Link from 'next/link'
import type { SessionViewProps } from '@/components/protocols/types'
import { Badge, Card } from '@/components/ui/card'
import type { MintSessionView as View } from '@/protocols/mint/server/views'
import { BranchButton } from '@/protocols/mint/ui/branch-button'
import { ToolUnavailable } from '@/protocols/mint/ui/tool-unavailable'
import { Trajectory } from '@/protocols/mint/ui/trajectory'

const REASONS: Record<string, string> = {
  task_success: 'solved',
  max_steps: 'out of steps',
  max_propose_steps: 'out of proposals',
  error: 'the model call failed',
}

function feedbackLabel(v: View): string {
  const f = v.feedback
  if (f.mode === 'none') return 'no feedback'
  return `${f.mode} feedback, ${f.frequency}, ${f.groundTruth ? 'with' : 'without'} the ground truth`
}

/**
 * One MINT episode: the task, the budget and feedback settings, the trajectory turn by turn (thought,
 * code, output, proposal and feedback coloured apart, the countdown), the outcome once it ended, and the
 * turn form (the model's turn written by a person, or the expert's feedback) where it is the viewer's turn.
 * Staff who may change the study branch it at a feedback turn (other feedback from there on); a branch
 * links to the episode it came from and names the turn, an episode lists its branches.
 */
export function MintSessionView({ session: s, turnForm, live }: SessionViewProps) {
  const v = s.view as View
  return (
    <div className="space-y-4">
      {!v.sandbox.available ? <ToolUnavailable sandbox={v.sandbox} /> : null}
      <Card>
        <div className="flex flex-wrap items-start justify-between gap-3 text-sm">
          <div className="min-w-0 flex-1">
            <p className="text-xs uppercase tracking-wide text-stone-500">
              {v.dataset} · {v.taskType.replace('_', ' ')}
            </p>
            <pre className="whitespace-pre-wrap break-words font-[inherit] text-base" data-testid="mint-task">
              {v.task}
            </pre>
          </div>
          <div className="text-right">
            <p>
              k = {v.k}, p = {v.p}
            </p>
            <p className="text-stone-600">{feedbackLabel(v)}</p>
            {v.finished ? (
              <Badge tone={v.success ? 'green' : 'red'}>{REASONS[v.reason ?? ''] ?? v.reason}</Badge>
            ) : null}
            {live}
          </div>
        </div>
        {v.groundTruth !== null && !turnForm ? (
          <details className="mt-2 text-sm">
            <summary className="cursor-pointer text-stone-700">Reference (never shown to the model)</summary>
            <pre className="mt-1 max-h-64 overflow-auto whitespace-pre-wrap rounded bg-stone-50 p-2 text-xs">
              {v.groundTruth}
            </pre>
          </details>
        ) : null}
      </Card>
      {v.branchOf || v.branches.length ? (
        <Card>
          {v.branchOf ? (
            <p className="text-sm" data-testid="mint-branch-of">
              A branch of{' '}
              <Link className="text-brand-700 underline" href={`/sessions/${v.branchOf.sessionId}`}>
                the episode it was forked from
              </Link>{' '}
              at turn {v.branchOf.turn}: turns 1–{v.branchOf.turn} are its, the feedback of turn {v.branchOf.turn} on is
              this branch's own.
            </p>
          ) : null}
          {v.branches.length ? (
            <div className="text-sm" data-testid="mint-branches">
              <p className="font-medium">Branches of this episode</p>
              <ul className="list-inside list-disc">
                {v.branches.map((b, i) => (
                  <li key={b.sessionId}>
                    <Link className="text-brand-700 underline" href={`/sessions/${b.sessionId}`}>
                      Branch {i + 1}
                    </Link>{' '}
                    at turn {b.turn} ({b.status})
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </Card>
      ) : null}
      <Card title="Trajectory">
        <Trajectory
          view={v}
          branchAt={(t) => (v.branchable.includes(t) ? <BranchButton sessionId={s.id} turn={t} /> : null)}
        />
      </Card>
      {turnForm}
      {v.finished ? (
        <p className="text-sm text-stone-700" data-testid="mint-outcome">
          {v.success ? 'Solved' : 'Not solved'} ({v.reason}); actions: {v.counts.use_tool} tool,{' '}
          {v.counts.propose_solution} proposals, {v.counts.invalid_action} invalid.
        </p>
      ) : null}
    </div>
  )
}
