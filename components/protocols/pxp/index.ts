import { PxpCompareView } from '@/components/protocols/pxp/compare'
import { PxpDashboard } from '@/components/protocols/pxp/dashboard'
import { PxpMessageBody } from '@/components/protocols/pxp/message-body'
import { PxpRunSummary } from '@/components/protocols/pxp/run-summary'
import { PxpSessionView } from '@/components/protocols/pxp/session-view'
import { PxpSetupForm } from '@/components/protocols/pxp/setup-form'
import { PxpStudyPage } from '@/components/protocols/pxp/templates/page'
import { PxpTemplatesPanel } from '@/components/protocols/pxp/templates/panel'
import { PxpTurnForm } from '@/components/protocols/pxp/turn-form'
import type { ProtocolUi } from '@/components/protocols/types'

/** PXP / INTERACT in the pages (the server side: lib/server/protocols/pxp). */
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
