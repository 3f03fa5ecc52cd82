import type { RunSummaryProps } from '@/components/protocols/types'
import { Card } from '@/components/ui/card'

/** The PXP part of the run page: the protocol's parameters in the paper's terms. */
export function PxpRunSummary({ run }: RunSummaryProps) {
  const config = run.run.config as { n?: number; k?: number; template?: { name?: string }; carryOver?: boolean }
  return (
    <Card title="PXP set-up">
      <dl className="grid grid-cols-[12rem_1fr] gap-y-1.5 text-sm">
        <dt className="text-stone-500">Task</dt>
        <dd>{run.run.task.toUpperCase()}</dd>
        <dt className="text-stone-500">Message bound n</dt>
        <dd>{config.n ?? '—'}</dd>
        <dt className="text-stone-500">REJECT only after k</dt>
        <dd>{config.k ?? '—'}</dd>
        <dt className="text-stone-500">Repetitions R</dt>
        <dd>{run.run.repetitions}</dd>
        <dt className="text-stone-500">Context carry-over</dt>
        <dd>{config.carryOver === true ? 'On (as in the paper): sessions of a repetition run in order' : 'Off'}</dd>
      </dl>
    </Card>
  )
}
