import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { DEMO_CONNECTION_ID } from '@/lib/server/llm/runtime'
import { executeOrThrow } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'

/**
 * What a protocol's demo seed gets (lib/server/seed.ts calls every plugin's `seedDemo`): the demo
 * study, its people, the offline demo model's connection, and helpers to create a run and play it to
 * the end with the demo model, so a new install opens on finished runs with their dashboards, and
 * on sessions waiting for the demo experts.
 */
export interface DemoSeed {
  studyId: string
  researcher: Actor
  /** The demo people by email. */
  people: Record<string, Actor>
  demoConnectionId: string
  /** A run of the protocol unless one of that name exists in the study; returns its id and whether it is new. */
  run(protocol: string, input: Record<string, unknown>): Promise<{ id: string; created: boolean }>
  /** Play a run to the end (or until people are needed) with the demo model, in this process. */
  play(runId: string): Promise<void>
}

export function demoSeed(studyId: string, researcher: Actor, people: Record<string, Actor>): DemoSeed {
  return {
    studyId,
    researcher,
    people,
    demoConnectionId: DEMO_CONNECTION_ID,
    async run(protocol, input) {
      const name = String(input.name)
      const existing = await db.experiment.findFirst({ where: { studyId, name, protocol } })
      if (existing) return { id: existing.id, created: false }
      const r = await executeOrThrow(createRun, researcher, { studyId, protocol, ...input })
      return { id: r.id, created: true }
    },
    async play(runId) {
      await runHeadless(runId, { concurrency: 4 })
    },
  }
}
