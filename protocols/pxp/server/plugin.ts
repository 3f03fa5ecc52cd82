import { type PxpInstance, type PxpMessage, pxp } from '@/protocols/pxp/core'
import { definePlugin } from '@/lib/server/sdk'
import { pxpSchedule } from '@/protocols/pxp/server/schedule'
import { pxpAgents, pxpSessionConfig, receiverOf } from '@/protocols/pxp/server/agents'
import { pxpDemo } from '@/protocols/pxp/server/demo'
import { PxpTurnInput, pxpTurnMessage } from '@/protocols/pxp/server/human'

export type { PxpSessionView } from '@/protocols/pxp/server/views'

/**
 * PXP / INTERACT on the engine (the protocol: protocols/pxp/core; the paper's tasks: lib/tasks). This
 * entry holds what a worker needs to step a session; set-up, pages, exports, the demo seed and the
 * operations are modules loaded on first use.
 */
function title(instance: PxpInstance, task: string): string {
  const { input } = instance
  if (task === 'rad' && typeof input.image === 'string') return input.image.replace(/\.[a-z]+$/i, '')
  if (task === 'drug' && typeof input.smiles === 'string') return input.smiles
  const first = Object.values(input).find((v): v is string => typeof v === 'string')
  return first ? (first.length > 60 ? `${first.slice(0, 59)}…` : first) : 'instance'
}

export const pxpPlugin = definePlugin(pxp, {
  sessionConfig: pxpSessionConfig,
  schedule: pxpSchedule,
  agents: pxpAgents,
  human: { input: PxpTurnInput, toMessage: pxpTurnMessage },
  project: (m: PxpMessage) => ({
    receiver: receiverOf(m.sender),
    label: m.tag,
    value: m.prediction,
    detail: m.explanation,
  }),
  projectionNames: { label: 'tag', value: 'prediction', detail: 'explanation' },
  setup: () =>
    import('@/protocols/pxp/server/setup').then((m) => ({
      config: m.PxpRunConfig,
      options: m.PxpRunOptions,
      plan: m.planPxp,
      legacy: { input: m.PxpSetupInput, toRun: m.pxpLegacyToRun },
      fromForm: m.pxpSetupFromForm,
      snapshot: m.pxpSnapshot,
      formData: (_actor, studyId) => import('@/protocols/pxp/server/templates').then((t) => t.templateChoices(studyId)),
    })),
  views: () => import('@/protocols/pxp/server/views').then((m) => m.pxpViews),
  exports: () => import('@/protocols/pxp/server/exports').then((m) => ({ tables: m.pxpExports })),
  seed: () => import('@/protocols/pxp/server/seed').then((m) => ({ seedDemo: m.seedPxpDemo })),
  ops: async () => {
    const [{ checkPxpAnswer }, { pxpDatasets }, { drawMolecule, moleculeEndpoint }, t] = await Promise.all([
      import('@/protocols/pxp/server/operations'),
      import('@/protocols/pxp/server/datasets'),
      import('@/protocols/pxp/server/molecules'),
      import('@/protocols/pxp/server/templates'),
    ])
    return {
      operations: [
        checkPxpAnswer,
        drawMolecule,
        t.createTaskTemplate,
        t.listTaskTemplates,
        t.getTaskTemplate,
        t.tryMatch,
      ],
      rest: [moleculeEndpoint],
      datasets: pxpDatasets,
    }
  },
  demo: pxpDemo,
  title,
})
