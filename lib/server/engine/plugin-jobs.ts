import { allPlugins, pluginFor } from '@/lib/server/engine/plugins'
import { bulkJobOptions, queue, wakeWorkers } from '@/lib/server/jobs/queue'
import { log } from '@/lib/server/log'

/**
 * A protocol's own background jobs (`ops.jobs` of its plugin): one queue per (protocol, job name),
 * worked with the bulk queues (lib/server/jobs/bulk.ts) in the web server and `parley worker`. The
 * engine names no protocol here: it reads the kinds off the registered plugins.
 */

/** The queue of a plugin's job kind (pg-boss: letters, digits, `_` and `-`). */
export function pluginJobQueue(protocol: string, name: string): string {
  const q = `plugin-${protocol}-${name}`
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(q)) throw new Error(`Not a job name: "${protocol}" / "${name}".`)
  return q
}

async function jobOf(protocol: string, name: string) {
  const plugin = await pluginFor(protocol)
  const job = (await plugin.ops?.())?.jobs?.[name]
  if (!job) throw new Error(`The protocol "${protocol}" has no job "${name}".`)
  return job
}

/**
 * Put a job of a plugin's kind on its queue: the data is checked by the kind's schema first (a bad
 * payload throws here, never reaches a worker). `startAfterSeconds` delays it (a job that polls
 * something re-enqueues itself this way). Resolves with the queue's job id.
 */
export async function enqueuePluginJob(
  protocol: string,
  name: string,
  data: unknown,
  opts: { startAfterSeconds?: number } = {},
): Promise<string | null> {
  const job = await jobOf(protocol, name)
  const payload = job.data.parse(data)
  const q = pluginJobQueue(protocol, name)
  const b = await queue(q)
  const id = await b.send(q, payload as object, {
    ...bulkJobOptions(),
    ...(opts.startAfterSeconds ? { startAfter: Math.max(1, Math.round(opts.startAfterSeconds)) } : {}),
  })
  if (!opts.startAfterSeconds) await wakeWorkers(q)
  return id
}

/** Every registered plugin's job kinds as (queue, handler); a payload that no longer parses is logged and dropped. */
export async function pluginJobHandlers(): Promise<Array<[string, (data: unknown) => Promise<void>]>> {
  const out: Array<[string, (data: unknown) => Promise<void>]> = []
  for (const plugin of await allPlugins()) {
    const jobs = (await plugin.ops?.())?.jobs ?? {}
    for (const [name, job] of Object.entries(jobs)) {
      const q = pluginJobQueue(plugin.protocol.id, name)
      out.push([
        q,
        async (data) => {
          const parsed = job.data.safeParse(data)
          if (!parsed.success) {
            log().error(
              { queue: q, issues: parsed.error.issues.slice(0, 5) },
              'dropped a plugin job whose data does not parse',
            )
            return
          }
          await job.run(parsed.data)
        },
      ])
    }
  }
  return out
}
