import type { pxp } from '@/protocols/pxp/core'
import type { RunSchedule, SessionConfig } from '@/lib/server/sdk'
import type { PxpExtras } from '@/protocols/pxp/server/agents'

/** Whether a PXP run (or session) carries the machine's context over (the paper's setting). */
export const carriesOver = (config: SessionConfig<unknown, PxpExtras>) => config.extras.carryOver === true

/**
 * PXP's schedule. With carry-over the sessions of a repetition run one after another: every session
 * but a repetition's first starts waiting, and when one ends the next unfinished one of its repetition
 * starts (its machine reads the earlier dialogues, agents.ts). Without it every session runs at once.
 * Done as the engine's default: when none of the run's sessions is open.
 */
export const pxpSchedule: RunSchedule<typeof pxp, PxpExtras> = {
  waits: (config, at) => carriesOver(config) && at.position > 0,
  watches: carriesOver,
  async onSessionDone({ run, session, sessions }) {
    if (!carriesOver(run.config)) return {}
    const rest = (await sessions({ repetition: session.repetition }))
      .filter((s) => s.position > session.position && s.status !== 'done')
      .sort((a, b) => a.position - b.position)
    const next = rest[0]
    return next?.status === 'waiting' ? { start: [next.id] } : {}
  },
}
