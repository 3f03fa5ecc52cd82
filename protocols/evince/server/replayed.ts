import { type EvinceMessage, evince, evinceConfig } from '@/protocols/evince/core'
import { replayAccepted } from '@/lib/protocols/types'

/**
 * Replays one stored debate for the results and exports: up to the first message the rules refuse
 * (`refused`; a log written before a rule existed may hold one), so such a debate is excluded and
 * named instead of being counted or failing the page.
 */
export function replayed(s: { config: unknown; instance: unknown; messages: unknown[] }) {
  const config = evinceConfig.parse(s.config)
  const instance = evince.instance.parse(s.instance)
  const { state, refused } = replayAccepted(evince, config, instance, s.messages as EvinceMessage[])
  return { config, instance, state, refused }
}
