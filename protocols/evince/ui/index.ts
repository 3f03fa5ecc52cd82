import { EvinceCompareView } from '@/protocols/evince/ui/compare'
import { DebateLive } from '@/protocols/evince/ui/debate-live'
import { EvinceMessageBody } from '@/protocols/evince/ui/message-body'
import { EvinceRunSummary } from '@/protocols/evince/ui/run-summary'
import { EvinceSessionView } from '@/protocols/evince/ui/session-view'
import { EvinceSetupForm } from '@/protocols/evince/ui/setup-form'
import { EvinceTurnForm } from '@/protocols/evince/ui/turn-form'
import type { ProtocolUi } from '@/components/protocols/types'

/** EVINCE debates in the pages (the server side: protocols/evince/server). */
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
