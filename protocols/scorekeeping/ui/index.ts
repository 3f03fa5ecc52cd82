import { ScorekeepingDashboard } from '@/protocols/scorekeeping/ui/dashboard'
import { ImportClembenchForm } from '@/protocols/scorekeeping/ui/import-form'
import { ScorekeepingMessageBody } from '@/protocols/scorekeeping/ui/message-body'
import { ScorekeepingRunSummary } from '@/protocols/scorekeeping/ui/run-summary'
import { ScorekeepingSessionView } from '@/protocols/scorekeeping/ui/session-view'
import { ScorekeepingSetupForm } from '@/protocols/scorekeeping/ui/setup-form'
import { ScorekeepingTurnForm } from '@/protocols/scorekeeping/ui/turn-form'
import type { ProtocolUi } from '@/components/protocols/types'

/** The clembench scorekeeping game in the pages (the server side: protocols/scorekeeping/server). */
export const scorekeepingUi: ProtocolUi = {
  description:
    'A slot-filling game with a programmatic questioner: after every answer the game master asks side questions about what has become shared. Scored exactly as clembench scores it (κ, slot filling, clemscore), for models and people alike.',
  newRun: {
    title: 'New scorekeeping run',
    intro:
      "Episodes of clembench's privateshared game: the game master (a program) asks for each slot and probes the answerer's common ground; the answerer is a model or a person.",
  },
  SetupForm: ScorekeepingSetupForm,
  SessionView: ScorekeepingSessionView,
  TurnForm: ScorekeepingTurnForm,
  RunSummary: ScorekeepingRunSummary,
  Dashboard: ScorekeepingDashboard,
  dashboardTitle: 'Results across runs',
  MessageBody: ScorekeepingMessageBody,
  DatasetImport: ImportClembenchForm,
}
