'use client'

import { config } from 'zod/v4/core'

// zod 4 checks whether it may compile faster parsers with `Function('')`. The Content-Security-Policy
// (proxy.ts) allows no eval, so in the browser that probe is refused and reported as a violation;
// tell zod up front not to try. Loaded by the root layout, before any page code parses anything.
config({ jitless: true })

export function ZodJitless() {
  return null
}
