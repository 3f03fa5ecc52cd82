import { evinceUi } from '@/protocols/evince/ui'
import { labellingUi } from '@/protocols/labelling/ui'
import { mintUi } from '@/protocols/mint/ui'
import { pxpUi } from '@/protocols/pxp/ui'
import { rehacUi } from '@/protocols/rehac/ui'
import { scorekeepingUi } from '@/protocols/scorekeeping/ui'
import type { ProtocolUi } from '@/components/protocols/types'
import { isProtocolId, type ProtocolId, protocols } from '@/lib/protocols/registry'

/**
 * The UI of every protocol (lib/protocols/registry.ts lists the ids; the server plugins are in
 * lib/server/protocols/registry.ts). Typed by ProtocolId, so a protocol without its UI does not
 * compile. The generic pages look a protocol up here by the id stored on the run or session and
 * never name one themselves.
 */
export const protocolUis: { readonly [K in ProtocolId]: ProtocolUi } = {
  pxp: pxpUi,
  evince: evinceUi,
  scorekeeping: scorekeepingUi,
  rehac: rehacUi,
  labelling: labellingUi,
  mint: mintUi,
}

/** The UI of a protocol id, or null for an id Parley does not run. */
export function uiFor(id: string): ProtocolUi | null {
  return isProtocolId(id) ? protocolUis[id] : null
}

/** Every protocol that can run, with its label and UI (the cards of "New run"). */
export function runnableProtocols(): Array<{ id: ProtocolId; label: string; ui: ProtocolUi }> {
  return (Object.keys(protocolUis) as ProtocolId[]).map((id) => ({
    id,
    label: protocols[id].label,
    ui: protocolUis[id],
  }))
}

/** A protocol's label by id (the id itself for one Parley does not run). */
export function protocolLabel(id: string): string {
  return isProtocolId(id) ? protocols[id].label : id
}
