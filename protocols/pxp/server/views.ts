import type { PxpInstance, PxpMessage, pxp } from '@/protocols/pxp/core'
import type { PluginViews, ViewContext } from '@/lib/server/sdk'
import type { PxpExtras } from '@/protocols/pxp/server/agents'
import { type AnswerRules, answerRules, hiddenSeats } from '@/protocols/pxp/server/answer'
import { pxpCompare, pxpDashboard } from '@/protocols/pxp/server/dashboard'
import { templatePage, templatesPanel } from '@/protocols/pxp/server/templates'

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
function participantMessage(message: PxpMessage, ctx: ViewContext<typeof pxp, PxpExtras>): PxpMessage {
  if (!hiddenSeats(ctx).includes(message.sender)) return message
  return { ...message, prediction: '', explanation: '' }
}

function sessionView(ctx: ViewContext<typeof pxp, PxpExtras>): PxpSessionView {
  const instance = ctx.instance
  const { prediction: _y, explanation: _e, ...shown } = instance
  const template = ctx.extras.template
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

/** What PXP's pages read: the session view, the dashboard, two runs compared (loaded on first use). */
export const pxpViews: PluginViews<typeof pxp, PxpExtras> = {
  session: sessionView,
  participantMessage,
  dashboard: pxpDashboard,
  compare: pxpCompare,
  comparableAs,
  studyPanel: templatesPanel,
  studyPage: templatePage,
}
