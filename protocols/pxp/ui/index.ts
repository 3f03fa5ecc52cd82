import { PxpCompareView } from '@/protocols/pxp/ui/compare'
import { PxpDashboard } from '@/protocols/pxp/ui/dashboard'
import { PxpMessageBody } from '@/protocols/pxp/ui/message-body'
import { PxpRunSummary } from '@/protocols/pxp/ui/run-summary'
import { PxpSessionView } from '@/protocols/pxp/ui/session-view'
import { PxpSetupForm } from '@/protocols/pxp/ui/setup-form'
import { PxpStudyPage } from '@/protocols/pxp/ui/templates/page'
import { PxpTemplatesPanel } from '@/protocols/pxp/ui/templates/panel'
import { PxpTurnForm } from '@/protocols/pxp/ui/turn-form'
import type { ProtocolUi } from '@/components/protocols/types'

/** PXP / INTERACT in the pages (the server side: protocols/pxp/server). */
export const pxpUi: ProtocolUi = {
  description:
    'A machine and a tester exchange tagged predictions and explanations (RATIFY, REFUTE, REVISE, REJECT) over a dataset, R repetitions; the dashboard measures intelligibility.',
  newRun: {
    title: 'New PXP experiment',
    intro:
      'One session per instance and repetition; the machine and the tester exchange tagged predictions and explanations until both ratify, one rejects, or n messages are written.',
  },
  SetupForm: PxpSetupForm,
  SessionView: PxpSessionView,
  TurnForm: PxpTurnForm,
  RunSummary: PxpRunSummary,
  Dashboard: PxpDashboard,
  dashboardTitle: 'Intelligibility dashboard',
  Compare: PxpCompareView,
  MessageBody: PxpMessageBody,
  StudyPanel: PxpTemplatesPanel,
  StudyPage: PxpStudyPage,
}
