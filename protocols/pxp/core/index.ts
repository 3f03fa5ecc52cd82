/**
 * PXP INTERACT (Srinivasan et al., arXiv 2410.20600): the protocol (./protocol.ts, Procedure 1),
 * the tag logic (./agent.ts, Procedure 2), the message JSONL format (./jsonl.ts) and the authors'
 * tags.txt (./tags-file.ts). Intelligibility lives in protocols/pxp/core/intelligibility.ts.
 *
 * Parley follows the paper (and ../shared/reference/pxp.md), not the authors' Python code
 * (karannb/interact), where the two differ (docs/ARCHITECTURE.md, "PXP", lists them all):
 * - Intelligibility is computed per session from the tag sequences (Definitions 1–2: any RATIFY or
 *   REVISE and no REJECT; strong and ultra-strong too), not from each agent's last tag, and with no
 *   state carried between sessions (the code's `l_m_revision` is never reset, so after one machine
 *   REVISE every later session counted as machine one-way intelligible).
 * - Any agent's REJECT ends the session (Procedure 1's Stop after either message); the code stops
 *   only on the human's REJECT.
 * - Stop on mutual RATIFY uses each agent's latest tag (l_m, l_h), not "has ever ratified".
 * - n bounds the number of messages (the code's --num_iter n allows 2n + 1); k is configurable
 *   (k ≥ 1, default 3; the code fixes 3).
 * - MATCH/AGREE take the paper's argument order (partner's or new answer first, own previous second).
 */
export * from './agent'
export * from './jsonl'
export * from './protocol'
export * from './tags'
export * from './tags-file'
