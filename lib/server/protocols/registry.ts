import type { ProtocolId } from '@/lib/protocols/registry'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { evincePlugin } from '@/lib/server/protocols/evince/plugin'
import { pxpPlugin } from '@/lib/server/protocols/pxp/plugin'
import { scorekeepingPlugin } from '@/lib/server/protocols/scorekeeping/plugin'

/**
 * The server plugin of every protocol (lib/protocols/registry.ts lists the ids). The engine loads
 * this on first use; nothing else in lib/server names a protocol.
 */
export const plugins: { readonly [K in ProtocolId]: ProtocolPlugin } = {
  pxp: pxpPlugin,
  evince: evincePlugin,
  scorekeeping: scorekeepingPlugin,
}
