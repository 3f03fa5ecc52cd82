import { EvinceCompareView } from '@/components/protocols/evince/compare'
import { DebateLive } from '@/components/protocols/evince/debate-live'
import { EvinceMessageBody } from '@/components/protocols/evince/message-body'
import { EvinceRunSummary } from '@/components/protocols/evince/run-summary'
import { EvinceSessionView } from '@/components/protocols/evince/session-view'
import { EvinceSetupForm } from '@/components/protocols/evince/setup-form'
import { EvinceTurnForm } from '@/components/protocols/evince/turn-form'
import type { ProtocolUi } from '@/components/protocols/types'

/** EVINCE debates in the pages (the server side: lib/server/protocols/evince). */
export const evinceUi: ProtocolUi = {
  description:
    'Two agents debate a diagnosis round by round; the moderator measures entropy, divergences, Wasserstein distance, mutual information and argument quality, and stops when the debate stops making progress.',
  newRun: {
    title: 'New EVINCE debate',
    intro:
      'Two debaters predict top-k diagnoses round by round at a falling contentiousness; the moderator scores their arguments (CRIT), combines the final distributions and reports what information is missing.',
  },
  SetupForm: EvinceSetupForm,
  SessionView: EvinceSessionView,
  TurnForm: EvinceTurnForm,
  LivePreview: DebateLive,
  RunSummary: EvinceRunSummary,
  Compare: EvinceCompareView,
  MessageBody: EvinceMessageBody,
}
