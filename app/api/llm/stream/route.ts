import { z } from 'zod'
import { sessionActor } from '@/lib/server/api/auth'
import { cookieMutationRefusal } from '@/lib/server/api/csrf'
import { hasScope } from '@/lib/server/auth/roles'
import { AppError } from '@/lib/server/errors'
import { LlmError, recordedChat } from '@/lib/server/llm/runtime'
import { inputProblem } from '@/lib/server/input'
import { MAX_INPUT_BYTES } from '@/lib/server/operation'
import { usableConnection } from '@/lib/server/services/connections'
import { describeLlmError, promptMessages } from '@/lib/server/services/llm'

export const dynamic = 'force-dynamic'

const Input = z.object({
  connectionId: z.string().min(1).max(100),
  model: z.string().trim().max(200).optional(),
  system: z.string().max(100_000).optional(),
  prompt: z.string().trim().min(1, 'Write a prompt.').max(100_000),
})

const fail = (status: number, error: string) => Response.json({ error }, { status })

/**
 * Streams a model's reply to the browser as server-sent events: `token` {delta, attempt},
 * then `done` {model, usage, callIds, simulated} or `error` {message}. Closing the request
 * (the person navigates away or presses Stop) aborts the model call.
 */
export async function POST(req: Request) {
  const refusal = cookieMutationRefusal(req)
  if (refusal) return fail(refusal.status, refusal.error)
  const actor = await sessionActor(req.headers)
  if (!actor) return fail(401, 'Sign in to continue.')
  if (!hasScope(actor.role, 'connections:manage')) return fail(403, 'You do not have permission to do that.')
  const text = await req.text()
  if (Buffer.byteLength(text) > MAX_INPUT_BYTES) return fail(413, 'Input too large.')
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return fail(400, 'The request body is not valid JSON.')
  }
  const problem = inputProblem(raw)
  if (problem) return fail(400, `Invalid input. ${problem.path.join('.')}: ${problem.message}`)
  const parsed = Input.safeParse(raw)
  if (!parsed.success) return fail(400, `Invalid input. ${parsed.error.issues[0]?.message ?? ''}`)
  const input = parsed.data
  // A study's connection spends its key: only members who may write in that study use it.
  let row: Awaited<ReturnType<typeof usableConnection>>
  try {
    row = await usableConnection(actor, input.connectionId)
  } catch (err) {
    if (err instanceof AppError) return fail(err.status, err.message)
    throw err
  }

  const encoder = new TextEncoder()
  const stream = new ReadableStream({
    async start(controller) {
      const send = (event: string, data: unknown) =>
        controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`))
      try {
        const result = await recordedChat(
          row,
          {
            model: input.model || row.defaultModel,
            messages: promptMessages(input.prompt, input.system),
          },
          {
            purpose: 'playground',
            userId: actor.userId,
            studyId: row.studyId,
            signal: req.signal,
            // Tokens go to a browser: the key (e.g. echoed by the model) is redacted as in the call log.
            redactOutput: true,
            onToken: (delta, info) => send('token', { delta, attempt: info.attempt }),
          },
        )
        send('done', {
          model: result.model,
          usage: result.usage,
          callIds: result.callIds,
          simulated: result.simulated,
          ttftMs: result.ttftMs === undefined ? null : Math.round(result.ttftMs),
          latencyMs: Math.round(result.latencyMs),
        })
      } catch (err) {
        if (!req.signal.aborted) {
          send('error', {
            message:
              err instanceof LlmError
                ? describeLlmError(err, { restricted: row.restrictedHosts })
                : 'The model call failed.',
          })
        }
      } finally {
        try {
          controller.close()
        } catch {}
      }
    },
  })
  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    },
  })
}
