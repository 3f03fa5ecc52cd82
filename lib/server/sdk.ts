/**
 * The plugin SDK: the one module a protocol's server plugin (protocols/<id>/server/) imports from
 * the host. Besides it, a plugin imports only its own folder and the pure libraries (lib/protocols,
 * lib/tasks, lib/metrics, lib/llm …); tests/architecture.test.ts holds it to that. What is here is
 * what the plugins need and nothing of the host's internals: `definePlugin` and the types of every hook,
 * the database for a protocol's own results, the run reader with its replay cache, the session loader
 * (the seated-session lookup of a protocol's own operations), audit, study access, errors, paging.
 */

// Defining a plugin: the typed capabilities and every context a hook gets.
export * from '@/lib/server/engine/plugin'
export type { DatasetItem, DatasetKind, DatasetSource, ImportFile } from '@/lib/server/engine/datasets'
export {
  type ImportedSession,
  type SessionImport,
  SessionImportError,
} from '@/lib/server/engine/session-import'
export type { ChatMessage, LlmTools } from '@/lib/server/engine/llm'
// The recorded LLM tools outside a step: a protocol's own operation that asks a seat's model on demand
// (ReHAC's suggestion for a person's step), each call logged against the session and message it serves.
export { llmTools } from '@/lib/server/engine/llm'
export { enqueuePluginJob } from '@/lib/server/engine/plugin-jobs'
export { type LlmRef, type SeatFill, Seats } from '@/lib/server/engine/seats'
export type { Actor } from '@/lib/server/actor'
export type { CliTools, ProtocolCli } from '@/lib/cli/tools'

// Reading a run's sessions for results and exports (replayed once per version), and loading one
// session as a step sees it (a protocol's own operation on the session a person sits in).
export { replayCache, type ReplayCache, type StoredSession } from '@/lib/server/engine/run-reader'
export { loadSession, parseSession, prepare } from '@/lib/server/engine/runner'
// A fork of a session asked for by a protocol's own operation (MINT's branch from a turn): lineage, copied prefix.
export { createRunSessions } from '@/lib/server/engine/schedule'

// The database, for a protocol's own queries (its dashboard, its exports, its seed); the plain pg pool for
// statements Prisma cannot run (ReHAC's SQL environment: its own transaction, role and row cap).
export { db, sql } from '@/lib/server/db'
export {
  loadSessionTranscripts,
  type SessionTranscript,
  TRANSCRIPT_LIMITS,
  type TranscriptContext,
  type TranscriptTurn,
} from '@/lib/server/engine/transcript'
export { Prisma } from '@/lib/generated/prisma/client'

// Operations of its own: validated input, a scope and the study role, audit, rate limits.
export { defineOperation, execute, type Operation } from '@/lib/server/operation'
// Runs on behalf of a person (a plugin's job creating runs, as the prompt lab does): the operations, through `execute`.
export { createRun, retryStalled } from '@/lib/server/services/runs'
export { id, requireStudyAccess, studyAccess } from '@/lib/server/services/studies'
export { hasScope } from '@/lib/server/auth/roles'
export { mayTakePart } from '@/lib/server/auth/study-roles'
export { actorRef, writeAudit } from '@/lib/server/audit'
export { enforceRate } from '@/lib/server/rate-limit'
export { settings } from '@/lib/server/config'
export { ImportDatasetInput, startDatasetImport } from '@/lib/server/services/datasets'

// Errors, paging and form fields.
export { AppError, badRequest, isDatabaseUnavailable, notFound, tooLarge } from '@/lib/server/errors'
export { boolParam, pageInput, pageOf, skipTake } from '@/lib/server/pagination'
export { seatsFromForm } from '@/lib/server/seat-form'
export { cleanString, jsonText } from '@/lib/server/input'

// Addresses a person chose (a protocol's own outbound URL): the same public-only check and guarded
// transport as restricted LLM connections (PARLEY_ALLOWED_LLM_HOSTS names exceptions).
export { refusalForRestrictedUrl, restrictedTransport } from '@/lib/server/llm/hosts'
