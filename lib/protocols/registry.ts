/**
 * The protocols Parley runs, in one place. Adding a protocol: its pure module under
 * protocols/<id>/core, its id here, its server plugin in lib/server/protocols/registry.ts and its UI in
 * components/protocols/registry.tsx; each registry is typed by {@link ProtocolId}, so a protocol
 * missing from any of them does not compile.
 */
import { evince } from '../../protocols/evince/core'
import { labelling } from '../../protocols/labelling/core/protocol'
import { mintProtocol } from '../../protocols/mint/core/protocol'
import { pxp } from '../../protocols/pxp/core'
import { rehac } from '../../protocols/rehac/core/protocol'
import { scorekeeping } from '../../protocols/scorekeeping/core'
import type { AnyProtocol } from './types'

export const PROTOCOL_IDS = ['pxp', 'evince', 'scorekeeping', 'rehac', 'labelling', 'mint'] as const
export type ProtocolId = (typeof PROTOCOL_IDS)[number]

export const protocols: { readonly [K in ProtocolId]: AnyProtocol } = {
  pxp,
  evince,
  scorekeeping,
  rehac,
  labelling,
  mint: mintProtocol,
}

/** Protocols a study may be set up for before Parley runs them (the seeds' next systems). */
export const PLANNED_PROTOCOLS: Readonly<Record<string, string>> = {}

export function isProtocolId(id: string): id is ProtocolId {
  return (PROTOCOL_IDS as readonly string[]).includes(id)
}

/** Every protocol a study can name, with its label (running ones first). */
export function studyProtocolChoices(): Array<{ id: string; label: string; runs: boolean }> {
  return [
    ...PROTOCOL_IDS.map((id) => ({ id, label: protocols[id].label, runs: true })),
    ...Object.entries(PLANNED_PROTOCOLS).map(([id, label]) => ({ id, label, runs: false })),
  ]
}
