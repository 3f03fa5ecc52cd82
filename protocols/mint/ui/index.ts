import type { ProtocolUi } from '@/components/protocols/types'
import { MintLeaderboardPage, MintStudyPanel } from '@/protocols/mint/ui/leaderboard'
import { MintMessageBody } from '@/protocols/mint/ui/message-body'
import { MintRunSummary } from '@/protocols/mint/ui/run-summary'
import { MintSessionView } from '@/protocols/mint/ui/session-view'
import { MintSetupForm } from '@/protocols/mint/ui/setup-form'
import { MintTurnForm } from '@/protocols/mint/ui/turn-form'

/** MINT in the pages (the server side: protocols/mint/server). */
export const mintUi: ProtocolUi = {
  description:
    'A model solves a task over several turns with a sandboxed Python tool, and gets language feedback after its turns from an expert (a person or an LLM) or none. Success rate per turn budget k.',
  newRun: {
    title: 'New MINT run',
    intro:
      'Episodes of MINT (Wang et al.): each turn the model thinks, then runs <execute> code in its Python session or proposes a <solution>; it has k turns and p proposals. After a turn the feedback seat may comment, as an expert who never discloses the answer.',
  },
  SetupForm: MintSetupForm,
  SessionView: MintSessionView,
  TurnForm: MintTurnForm,
  MessageBody: MintMessageBody,
  RunSummary: MintRunSummary,
  StudyPage: MintLeaderboardPage,
  StudyPanel: MintStudyPanel,
}
