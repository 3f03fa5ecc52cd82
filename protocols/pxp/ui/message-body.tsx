import { TagChip } from '@/protocols/pxp/ui/tag-chip'
import type { MessageBodyProps } from '@/components/protocols/types'
import type { PxpMessage } from '@/protocols/pxp/core'

type Meta = {
  category?: string | null
  changed?: boolean | null
  matchPrev?: boolean
  agreePrev?: boolean
  derivedTag?: string
  chosen?: boolean
}

/**
 * One PXP message in the inspector: tag, prediction, explanation, and what the tag came from. An
 * agent's Changed is evaluated only when the tag depends on it (Procedure 2): otherwise it says so.
 */
export function PxpMessageBody({ body, meta }: MessageBodyProps) {
  const m = body as Partial<PxpMessage>
  const p = (meta ?? {}) as Meta
  const judged = p.matchPrev !== undefined || p.agreePrev !== undefined
  return (
    <div className="space-y-1 text-sm">
      <p className="flex flex-wrap items-center gap-2">
        <TagChip tag={m.tag ?? null} />
        <span className="break-all">
          <span className="font-medium">y:</span> {m.prediction}
        </span>
      </p>
      <p className="whitespace-pre-wrap break-words">
        <span className="font-medium">e:</span> {m.explanation}
      </p>
      {judged ? (
        <p className="text-xs text-stone-600" data-testid="tag-basis">
          A person: prediction {p.matchPrev ? 'matches' : 'does not match'}, explanation{' '}
          {p.agreePrev ? 'agrees' : 'does not agree'}; derived {p.derivedTag ?? '—'}
          {p.chosen ? `, sent ${m.tag} instead` : ''}
        </p>
      ) : p.category !== undefined || p.changed !== undefined ? (
        <p className="text-xs text-stone-600" data-testid="tag-basis">
          Category {p.category ?? '—'} · changed:{' '}
          {p.changed === true ? 'yes' : p.changed === false ? 'no' : 'not evaluated (the tag does not depend on it)'}
        </p>
      ) : null}
    </div>
  )
}
