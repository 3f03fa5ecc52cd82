import Link from 'next/link'
import type { StudyPageProps } from '@/components/protocols/types'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { Pagination } from '@/components/ui/table'
import type { SessionImportPageData } from '@/protocols/labelling/server/session-import-page'
import { SessionPicker } from '@/protocols/labelling/ui/session-picker'

const select = 'mt-1 block rounded-md border border-stone-300 bg-white px-2 py-1 text-sm'

/**
 * The session import (server/session-import-page.ts): filter the study's sessions by protocol, run and
 * state (a plain GET form), a page at a time, tick them (or the whole page) and import them as one
 * transcript dataset to label.
 */
export function SessionImportStudyPage({ study, title, data }: StudyPageProps) {
  const d = data as SessionImportPageData
  const base = `/studies/${study.id}/p/labelling/import-sessions`
  return (
    <div className="space-y-6">
      <PageHeader
        title={title}
        description={
          <>
            <Link href={`/studies/${study.id}`} className="underline">
              {study.name}
            </Link>
            {' · '}any Parley session of the study as a transcript item, judged turn by turn.
          </>
        }
      />
      <Card title="Filter">
        <form method="get" action={base} className="flex flex-wrap items-end gap-3 text-sm">
          <label>
            Protocol
            <select name="protocol" defaultValue={d.args.protocol ?? ''} className={select}>
              <option value="">any</option>
              {d.protocols.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
          <label>
            Run
            <select name="run" defaultValue={d.args.run ?? ''} className={select}>
              <option value="">any</option>
              {d.runs.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name} ({r.protocol})
                </option>
              ))}
            </select>
          </label>
          <label>
            State
            <select name="status" defaultValue={d.args.status} className={select}>
              {['done', 'awaiting', 'running', 'stalled', 'cancelled', 'any'].map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1">
            Show
          </button>
        </form>
      </Card>
      {d.sessions.length ? (
        <Card
          title={`Sessions (${d.total})`}
          description={`Tick sessions, name the dataset and import: at most ${d.max.toLocaleString('en')} at once.`}
        >
          <SessionPicker studyId={study.id} sessions={d.sessions} />
          <Pagination
            page={d.page}
            pageCount={d.pageCount}
            total={d.total}
            basePath={base}
            params={{
              protocol: d.args.protocol,
              run: d.args.run,
              status: d.args.status,
              pageSize: String(d.pageSize),
            }}
          />
        </Card>
      ) : (
        <EmptyState title="No sessions match">Change the filter (finished sessions are shown by default).</EmptyState>
      )}
    </div>
  )
}
