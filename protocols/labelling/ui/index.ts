import { createElement } from 'react'
import type { ProtocolUi, StudyPageProps } from '@/components/protocols/types'
import { LabellingMessageBody } from '@/protocols/labelling/ui/message-body'
import { LabellingSessionView } from '@/protocols/labelling/ui/session-view'
import { PromptLabStudyPage } from '@/protocols/labelling/ui/prompt-lab'
import { SessionImportStudyPage } from '@/protocols/labelling/ui/session-import'
import { LabellingSetupForm } from '@/protocols/labelling/ui/setup-form'
import { LabellingStudyPage, LabellingStudyPanel } from '@/protocols/labelling/ui/study-pages'
import { LabellingTurnForm } from '@/protocols/labelling/ui/turn-form'

/** Labelling in the pages (the server side: protocols/labelling/server). */
export const labellingUi: ProtocolUi = {
  description:
    'People and LLMs label items (texts, query–document pairs, transcripts) with a versioned label schema; N annotators per item, one slot each, keyboard first.',
  newRun: {
    title: 'New labelling run',
    intro:
      'A labelling project: each item gets N annotators (one session per item and slot), each answering the label schema once. People claim slots from My work (never two slots of one item); an LLM may label the whole project.',
  },
  SetupForm: LabellingSetupForm,
  SessionView: LabellingSessionView,
  TurnForm: LabellingTurnForm,
  MessageBody: LabellingMessageBody,
  StudyPanel: LabellingStudyPanel,
  // The prompt lab (ui/prompt-lab.tsx) has its own path; the other pages are study-pages.tsx's.
  StudyPage: (props: StudyPageProps) =>
    createElement(
      props.path[0] === 'prompt-lab'
        ? PromptLabStudyPage
        : props.path[0] === 'import-sessions'
          ? SessionImportStudyPage
          : LabellingStudyPage,
      props,
    ),
}
