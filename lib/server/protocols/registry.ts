import type { ProtocolId } from '@/lib/protocols/registry'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { evincePlugin } from '@/protocols/evince/server/plugin'
import { labellingPlugin } from '@/protocols/labelling/server/plugin'
import { mintPlugin } from '@/protocols/mint/server/plugin'
import { pxpPlugin } from '@/protocols/pxp/server/plugin'
import { rehacPlugin } from '@/protocols/rehac/server/plugin'
import { scorekeepingPlugin } from '@/protocols/scorekeeping/server/plugin'

/**
 * The server plugin of every protocol (lib/protocols/registry.ts lists the ids). The engine loads
 * this on first use; nothing else in lib/server names a protocol.
 */
export const plugins: { readonly [K in ProtocolId]: ProtocolPlugin } = {
  pxp: pxpPlugin,
  evince: evincePlugin,
  scorekeeping: scorekeepingPlugin,
  rehac: rehacPlugin,
  labelling: labellingPlugin,
  mint: mintPlugin,
}
