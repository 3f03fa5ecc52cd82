'use client'

import { useEffect, useRef, useState } from 'react'
import { saveDraftAction } from '@/app/actions/sessions'
import {
  browserDraftStore,
  DRAFT_STATUS_TEXT,
  type DraftStatus,
  keepDraft,
  restoreDraft,
} from '@/components/sessions/turn-draft'

/**
 * A turn form's draft (turn-draft.ts): restored once on load (a later refresh of the live page must
 * not overwrite what is being typed), then kept on every change once the person has `touched` the
 * form. Returns the status line to show ('' until something happened).
 */
export function useTurnDraft<D>(o: {
  sessionId: string
  seq: number
  serverDraft: unknown
  draft: D
  touched: boolean
  /** Puts a restored draft into the form (the first one given is used). */
  restore: (d: D) => void
  /** The server's draft or this browser's copy (JSON), checked; null when neither is usable. */
  read: (serverDraft: unknown, local: string | null) => D | null
  /** Remove this browser's drafts of the session's earlier messages on load. */
  pruneEarlier?: boolean
}): string {
  const { sessionId, seq, serverDraft, touched, pruneEarlier } = o
  const [status, setStatus] = useState<DraftStatus>('')
  const restoreRef = useRef(o.restore)
  const readRef = useRef(o.read)
  const once = useRef(false)
  useEffect(() => {
    if (once.current) return
    once.current = true
    const d = restoreDraft({
      store: browserDraftStore(),
      sessionId,
      seq,
      serverDraft,
      read: readRef.current,
      pruneEarlier,
    })
    if (d) {
      restoreRef.current(d)
      setStatus('restored')
    }
  }, [sessionId, seq, serverDraft, pruneEarlier])
  const json = JSON.stringify(o.draft)
  useEffect(() => {
    if (!touched) return
    return keepDraft({ store: browserDraftStore(), sessionId, seq, json, save: saveDraftAction, setStatus })
  }, [json, touched, sessionId, seq])
  return DRAFT_STATUS_TEXT[status]
}
