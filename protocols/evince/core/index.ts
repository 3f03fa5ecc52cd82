/**
 * EVINCE debates (Chang, arXiv 2408.14575 v1): the protocol (./protocol.ts). The metrics are in
 * protocols/evince/core/metrics.ts, the prompts in protocols/evince/core/prompts.ts, the runner in
 * lib/server/runner/evince.ts.
 */
export * from './protocol'
export * from './analysis'
