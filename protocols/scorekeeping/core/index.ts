/**
 * The clembench "privateshared" scorekeeping game: the protocol with its game master, the answerer's
 * prompt and a person's replies (./protocol.ts; its module comment lists where Parley follows the
 * README rather than clembench's current code). Scores are in protocols/scorekeeping/core/clemscore.ts, instance
 * files and the generator in protocols/scorekeeping/core/clembench.ts.
 */
export * from './protocol'
