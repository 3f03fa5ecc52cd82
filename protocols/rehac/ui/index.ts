import type { ProtocolUi } from '@/components/protocols/types'
import { RehacMessageBody } from '@/protocols/rehac/ui/message-body'
import { RehacRunSummary } from '@/protocols/rehac/ui/run-summary'
import { RehacSessionView } from '@/protocols/rehac/ui/session-view'
import { RehacSetupForm } from '@/protocols/rehac/ui/setup-form'
import { RehacStudyPage, RehacStudyPanel } from '@/protocols/rehac/ui/study-pages'
import { RehacTurnForm } from '@/protocols/rehac/ui/turn-form'

/** ReHAC in the pages (the server side: protocols/rehac/server). */
export const rehacUi: ProtocolUi = {
  description:
    'An LLM agent and a person solve a task together step by step (ReAct over an offline corpus, or SQL on a read-only database); before each step a decider chooses who acts. The trajectories train and evaluate that decider.',
  newRun: {
    title: 'New ReHAC run',
    intro:
      'Episodes of ReHAC (Feng et al.): at each step the decider chooses the agent or the human; the chosen seat writes a Thought and an Action; the environment answers with the Observation. T is token F1 (QA) or the IoU of the rows (SQL); R = T − λ·C with C the human steps.',
  },
  SetupForm: RehacSetupForm,
  SessionView: RehacSessionView,
  TurnForm: RehacTurnForm,
  RunSummary: RehacRunSummary,
  MessageBody: RehacMessageBody,
  StudyPanel: RehacStudyPanel,
  StudyPage: RehacStudyPage,
}
