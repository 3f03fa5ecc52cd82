import type { MessageBodyProps } from '@/components/protocols/types'
import type { MintMessage } from '@/protocols/mint/core/protocol'
import { Part, Reply } from '@/protocols/mint/ui/trajectory'

/** One message of an episode in the inspector: a turn (thought, code, proposal), the tool's output, a verdict, feedback. */
export function MintMessageBody({ body, meta }: MessageBodyProps) {
  const m = body as MintMessage
  const elapsed = (meta as { elapsedMs?: number } | undefined)?.elapsedMs
  switch (m.sender) {
    case 'agent':
      return m.error !== null ? (
        <Part kind="text" text={`The model call failed: ${m.error}`} />
      ) : (
        <Reply reply={m.content} />
      )
    case 'tool':
      return <Part kind="output" text={m.output} />
    case 'env':
      return (
        <p className={`text-sm font-medium ${m.correct ? 'text-emerald-700' : 'text-red-700'}`}>
          {m.correct ? 'Correct solution' : 'Your answer is wrong.'}
        </p>
      )
    case 'feedback':
      return (
        <div>
          <Part kind="feedback" text={m.text || '(no feedback)'} />
          {elapsed !== undefined ? (
            <p className="text-xs text-stone-500">written in {(elapsed / 1000).toFixed(1)} s</p>
          ) : null}
        </div>
      )
  }
}
