import { type PxpInstance, type PxpMessage, pxp } from '@/lib/protocols/pxp'
import type { ProtocolPlugin, ViewContext } from '@/lib/server/engine/plugin'
import { pxpSchedule } from '@/lib/server/protocols/pxp/schedule'
import { pxpAgents, type PxpExtras, pxpSessionConfig, receiverOf } from '@/lib/server/protocols/pxp/agents'
import { pxpCompare, pxpDashboard } from '@/lib/server/protocols/pxp/dashboard'
import { pxpDemo } from '@/lib/server/protocols/pxp/demo'
import { pxpExports } from '@/lib/server/protocols/pxp/exports'
import { type AnswerRules, answerRules, hiddenSeats } from '@/lib/server/protocols/pxp/answer'
import { PxpTurnInput, pxpTurnMessage } from '@/lib/server/protocols/pxp/human'
import { checkPxpAnswer } from '@/lib/server/protocols/pxp/operations'
import {
  PxpRunConfig,
  PxpRunOptions,
  PxpSetupInput,
  planPxp,
  pxpLegacyToRun,
  pxpSetupFromForm,
  pxpSnapshot,
} from '@/lib/server/protocols/pxp/setup'
import { pxpDatasets } from '@/lib/server/protocols/pxp/datasets'
import { seedPxpDemo } from '@/lib/server/protocols/pxp/seed'

/**
 * PXP / INTERACT on the engine (the protocol: lib/protocols/pxp; the paper's tasks: lib/tasks).
 */
export interface PxpSessionView {
  /** x, and y and e only for those who do not sit in a seat (participants never see the ground truth). */
  instance: Partial<PxpInstance>
  config: { n: number; k: number }
  /** A generic task's label set and field names (RAD and DRUG have built-in ones). */
  template: { labels: string[]; predictionField: string; explanationField: string } | null
  /** Per message: the judgements behind a person's tag, or the category and Changed of an agent's. */
  notes: Record<number, { category?: string | null; changed?: boolean | null; derivedTag?: string; chosen?: boolean }>
  /** What a person's prediction must be (a label of the task, SMILES, or text): the form's picker and checks. */
  answer: AnswerRules
  /** The seats whose answers this viewer sees only as tags (the proxy's, when the run says tag-only). */
  hiddenSeats: string[]
}

/** A participant's view of a message: the proxy's answer blanked when the run shows only its tag. */
function participantMessage(message: PxpMessage, ctx: ViewContext): PxpMessage {
  if (!hiddenSeats(ctx).includes(message.sender)) return message
  return { ...message, prediction: '', explanation: '' }
}

function sessionView(ctx: ViewContext): PxpSessionView {
  const instance = ctx.instance as PxpInstance
  const { prediction: _y, explanation: _e, ...shown } = instance
  const template = (ctx.extras as PxpExtras).template
  return {
    instance: ctx.mySeats.length ? shown : instance,
    config: ctx.config,
    template: template
      ? {
          labels: template.labels,
          predictionField: template.predictionField,
          explanationField: template.explanationField,
        }
      : null,
    notes: {},
    answer: answerRules(ctx.session.task, template),
    hiddenSeats: hiddenSeats(ctx),
  }
}

function title(instance: unknown, task: string): string {
  const i = instance as Partial<PxpInstance> | null
  const input = (i?.input ?? {}) as Record<string, unknown>
  if (task === 'rad' && typeof input.image === 'string') return input.image.replace(/\.[a-z]+$/i, '')
  if (task === 'drug' && typeof input.smiles === 'string') return input.smiles
  const first = Object.values(input).find((v) => typeof v === 'string') as string | undefined
  return first ? (first.length > 60 ? `${first.slice(0, 59)}…` : first) : 'instance'
}

/**
 * Which PXP runs compare: runs on the same task (RAD with RAD, DRUG with DRUG, a generic dataset's
 * runs with the same task template), since their numbers measure the same task.
 */
function comparableAs(run: { task: string; config: unknown }) {
  if (run.task !== 'generic') return { key: run.task, label: run.task.toUpperCase() }
  const t = (run.config as { template?: { name?: unknown; labels?: unknown } } | null)?.template
  const name = typeof t?.name === 'string' ? t.name : 'generic'
  const labels = Array.isArray(t?.labels) ? t.labels.join('\u001f') : ''
  return { key: `generic\u001e${name}\u001e${labels}`, label: `template “${name}”` }
}

export const pxpPlugin: ProtocolPlugin<typeof pxp> = {
  protocol: pxp,
  sessionConfig: pxpSessionConfig,
  schedule: pxpSchedule,
  agents: pxpAgents,
  human: { input: PxpTurnInput, toMessage: pxpTurnMessage },
  project: (m: PxpMessage) => ({
    receiver: receiverOf(m.sender),
    tag: m.tag,
    prediction: m.prediction,
    explanation: m.explanation,
  }),
  setup: {
    config: PxpRunConfig,
    options: PxpRunOptions,
    plan: planPxp,
    legacy: { input: PxpSetupInput, toRun: pxpLegacyToRun },
    fromForm: pxpSetupFromForm,
    snapshot: pxpSnapshot,
  },
  exports: pxpExports,
  views: {
    session: sessionView,
    participantMessage: participantMessage as (m: unknown, ctx: ViewContext) => PxpMessage,
    dashboard: pxpDashboard,
    compare: pxpCompare,
    comparableAs,
  },
  operations: [checkPxpAnswer],
  seedDemo: seedPxpDemo,
  datasets: pxpDatasets,
  demo: pxpDemo,
  title,
}
