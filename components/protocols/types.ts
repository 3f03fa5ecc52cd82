import type { ComponentType, ReactNode } from 'react'
import type { Operation } from '@/lib/server/operation'
import type { getRun } from '@/lib/server/services/runs'
import type { getSession } from '@/lib/server/services/sessions'

/**
 * What a protocol brings to the pages (its UI plugin), registered in components/protocols/registry.tsx.
 * The generic pages (runs, the session page, the inspector, the work queue) never name a protocol:
 * they read the session's or run's protocol id and render the components registered for it.
 */

export type OutputOf<T> = T extends Operation<any, infer O> ? O : never

/** `sessions.get`: the session, its seats, messages, whose turn it is, and the plugin's `view`. */
export type SessionData = OutputOf<typeof getSession>
/** `runs.get`: the run, its counts, exports and a page of its sessions. */
export type RunData = OutputOf<typeof getRun>

export interface Choice {
  value: string
  label: string
}

/** A model a seat may use: the JSON of {connectionId, model?, temperature?, vision?} and a label. */
export interface ModelChoice extends Choice {}

/** What the generic "New run" page hands a protocol's set-up form (the study's resources). */
export interface SetupFormProps {
  studyId: string
  /** The protocol id, posted in the hidden `protocol` field. */
  protocol: string
  datasets: Array<{ id: string; name: string; kind: string; instances: number }>
  models: ModelChoice[]
  /** Members who may sit in a person's seat (everyone but viewers). */
  experts: Choice[]
  /** What the protocol's `setup.formData` gives of the study (PXP: its task templates); {} otherwise. */
  extra: Record<string, unknown>
}

/** A protocol's card on a study page: its `views.studyPanel` data. */
export interface StudyPanelProps {
  studyId: string
  data: unknown
}

/** A protocol's page under a study (/studies/{id}/p/{protocol}/{...path}): its `views.studyPage` data. */
export interface StudyPageProps {
  study: { id: string; name: string }
  path: string[]
  title: string
  data: unknown
}

export interface SessionViewProps {
  session: SessionData
  /** The protocol's turn form when it is the viewer's turn (null otherwise); the view places it. */
  turnForm: ReactNode
  /** The live preview (page refresh on changes, the answer being written); the view places it. */
  live: ReactNode
}

export interface TurnFormProps {
  session: SessionData
}

export interface LivePreviewProps {
  sessionId: string
  /** The last stored message: a streamed draft of a later one is shown until it is stored. */
  lastSeq: number
  /** The session can still change. */
  active: boolean
}

export interface RunSummaryProps {
  run: RunData
  /** `runs.view` data of the protocol (null when its plugin has no run view). */
  data: unknown
  canRun: boolean
  params: Record<string, string | undefined>
  basePath: string
}

export interface DashboardProps {
  runId: string
  /** `runs.dashboard` data of the protocol. */
  data: unknown
  params: Record<string, string | undefined>
  basePath: string
  canInspect: boolean
}

/** Two runs of one protocol side by side (`runs.compare`). */
export interface CompareProps {
  a: { id: string; name: string; status: string }
  b: { id: string; name: string; status: string }
  /** The plugin's `views.compare(a, b)`. */
  data: unknown
}

export interface MessageBodyProps {
  body: unknown
  /** What the agent noted beside the message (raw reply, judgements behind a tag …). */
  meta?: unknown
}

export interface ProtocolUi {
  /** One or two sentences for the protocol's card on "New run". */
  description: string
  /** The heading and introduction of the protocol's set-up page. */
  newRun: { title: string; intro: string }
  SetupForm: ComponentType<SetupFormProps>
  SessionView: ComponentType<SessionViewProps>
  TurnForm: ComponentType<TurnFormProps>
  /** Shows the answer being written; the generic preview (streamed text) otherwise. */
  LivePreview?: ComponentType<LivePreviewProps>
  /** The protocol's part of the run page (results, accuracy …). */
  RunSummary?: ComponentType<RunSummaryProps>
  /** The protocol's dashboard page; the run page links to it under this title. */
  Dashboard?: ComponentType<DashboardProps>
  dashboardTitle?: string
  /** Two runs side by side on the generic compare page (/runs/compare); absent: not comparable. */
  Compare?: ComponentType<CompareProps>
  /** One message body, compactly, for the inspector's M table (JSON otherwise). */
  MessageBody?: ComponentType<MessageBodyProps>
  /** An import of the protocol's own instances on the study page (beside the dataset import). */
  DatasetImport?: ComponentType<{ studyId: string }>
  /** The protocol's card on the study page (its own resources of the study, e.g. PXP's task templates). */
  StudyPanel?: ComponentType<StudyPanelProps>
  /** The protocol's pages under a study (a template and its form …). */
  StudyPage?: ComponentType<StudyPageProps>
}
