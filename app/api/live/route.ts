import { z } from 'zod'
import { sessionActor } from '@/lib/server/api/auth'
import { type LiveEvent, subscribe } from '@/lib/server/live'
import { mayWatch } from '@/lib/server/live-access'

export const dynamic = 'force-dynamic'

const Topic = z.string().regex(/^(session|run|dataset):[\w-]{1,100}$/)

/**
 * GET /api/live?topic=session:<id>|run:<id>|dataset:<id> — server-sent events: `update` with the event
 * (message, status, delta, progress) whenever the topic changes in any process, `down` / `resync`
 * while the process's LISTEN connection is lost and once it is back (lib/server/live.ts), and a
 * comment every 15 s to keep proxies from closing the stream. The page re-reads its data on
 * `update` and polls while the listener is down. Closed when the process shuts down.
 */
export async function GET(req: Request) {
  const actor = await sessionActor(req.headers)
  if (!actor) return Response.json({ error: 'Sign in to continue.' }, { status: 401 })
  const topic = Topic.safeParse(new URL(req.url).searchParams.get('topic'))
  if (!topic.success) return Response.json({ error: 'Unknown topic.' }, { status: 400 })
  if (!(await mayWatch(actor, topic.data))) return Response.json({ error: 'Not found.' }, { status: 404 })

  const encoder = new TextEncoder()
  let cleanup = () => {}
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text))
        } catch {
          cleanup()
        }
      }
      const close = () => {
        cleanup()
        try {
          controller.close()
        } catch {}
      }
      const unsubscribe = await subscribe(
        topic.data,
        (e: LiveEvent) => send(`event: update\ndata: ${JSON.stringify(e)}\n\n`),
        // This process shuts down: end the stream, so the browser reconnects to another instance.
        { onClose: close },
      )
      const beat = setInterval(() => send(': keep-alive\n\n'), 15_000)
      cleanup = () => {
        clearInterval(beat)
        unsubscribe()
      }
      req.signal.addEventListener('abort', close)
      send(`event: ready\ndata: {}\n\n`)
    },
    cancel() {
      cleanup()
    },
  })
  return new Response(body, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store, no-transform',
      connection: 'keep-alive',
      // nginx would buffer the stream (and deliver events in bursts, or never) without this.
      'x-accel-buffering': 'no',
    },
  })
}
