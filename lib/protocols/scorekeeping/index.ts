/**
 * The clembench "privateshared" scorekeeping game: the protocol with its game master, the answerer's
 * prompt and a person's replies (./protocol.ts; its module comment lists where Parley follows the
 * README rather than clembench's current code). Scores are in lib/metrics/clembench.ts, instance
 * files and the generator in lib/tasks/clembench.ts.
 */
export * from './protocol'
