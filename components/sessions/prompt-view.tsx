'use client'

import { formatCount } from '@/lib/format'
import { useState } from 'react'
import { type ChatTurn, restOf, turnsOf } from '@/components/sessions/prompt-turns'
import { ScrollRegion } from '@/components/ui/scroll-region'

/**
 * Prompts as the model received them: chat turns with their role, text as text (React escapes it:
 * model output is never injected as HTML) and images as images. Images travel by reference:
 * `asset:<name>` in contexts and `asset:<name>#sha256=<hex>` in the call log are drawn from the
 * session's dataset (`/api/assets/<datasetId>/<name>`, checked like every page); an old inlined
 * `data:` URL is drawn too, never printed as base64 text.
 */
type Part = { type?: string; text?: string; image_url?: { url?: string } | string }
function imageSrc(url: string, datasetId: string | null): { src: string | null; name: string; sha?: string } {
  if (url.startsWith('asset:')) {
    const [name = '', hash] = url.slice('asset:'.length).split('#')
    const sha = hash?.startsWith('sha256=') ? hash.slice('sha256='.length) : undefined
    return { src: datasetId ? `/api/assets/${datasetId}/${encodeURIComponent(name)}` : null, name, sha }
  }
  if (url.startsWith('data:')) return { src: url, name: `inlined ${url.slice(5, url.indexOf(';'))} image` }
  return { src: url, name: url }
}

function Image({ url, datasetId }: { url: string; datasetId: string | null }) {
  const img = imageSrc(url, datasetId)
  return (
    <figure className="my-1 inline-block">
      {img.src ? (
        <img
          src={img.src}
          alt={`Sent to the model: ${img.name}`}
          referrerPolicy="no-referrer"
          className="max-h-48 max-w-xs rounded border border-stone-200 bg-black object-contain"
        />
      ) : (
        <span className="text-xs text-stone-500">[image {img.name}: not in a dataset]</span>
      )}
      <figcaption className="text-[11px] text-stone-500">
        {img.name}
        {img.sha ? ` · sha256 ${img.sha.slice(0, 12)}…` : ''}
      </figcaption>
    </figure>
  )
}

export function TurnView({ turn, datasetId, fresh }: { turn: ChatTurn; datasetId: string | null; fresh?: boolean }) {
  const parts: Part[] =
    typeof turn.content === 'string' ? [{ type: 'text', text: turn.content }] : ((turn.content ?? []) as Part[])
  return (
    <li
      className={`rounded border p-2 text-xs ${fresh ? 'border-brand-200 bg-brand-50' : 'border-stone-200 bg-stone-50'}`}
      data-testid="prompt-turn"
    >
      <span className="mr-2 font-mono font-semibold uppercase text-stone-500">{turn.role ?? '?'}</span>
      {parts.map((p, i) =>
        p.type === 'image_url' ? (
          <Image
            key={i}
            url={typeof p.image_url === 'string' ? p.image_url : (p.image_url?.url ?? '')}
            datasetId={datasetId}
          />
        ) : p.type === 'text' || typeof p.text === 'string' ? (
          <span key={i} className="whitespace-pre-wrap break-words">
            {p.text ?? ''}
            {i < parts.length - 1 ? '\n' : ''}
          </span>
        ) : (
          <span key={i} className="text-stone-500">
            [{p.type ?? 'part'}]
          </span>
        ),
      )}
    </li>
  )
}

function Json({ value }: { value: unknown }) {
  return (
    <ScrollRegion
      as="pre"
      label="JSON"
      className="max-h-80 overflow-auto whitespace-pre-wrap break-words rounded bg-stone-50 p-2 text-xs"
    >
      {JSON.stringify(value, null, 2)}
    </ScrollRegion>
  )
}

/** A whole prompt or request: its turns (images drawn), then anything else it holds as JSON. */
export function PromptView({ value, datasetId }: { value: unknown; datasetId: string | null }) {
  const turns = turnsOf(value)
  if (!turns) return <Json value={value} />
  const rest = restOf(value)
  return (
    <div className="space-y-1.5">
      <ol className="space-y-1.5">
        {turns.map((t, i) => (
          <TurnView key={i} turn={t} datasetId={datasetId} />
        ))}
      </ol>
      {rest && <Json value={rest} />}
    </div>
  )
}

/**
 * One message's context (C), collapsed by default. Opened, it shows what is new since the same
 * sender's previous context (with carry-over every prompt repeats everything before it), with a
 * toggle to show every turn.
 */
export function ContextView({
  seq,
  value,
  fresh,
  previousSeq,
  datasetId,
}: {
  seq: number
  value: unknown
  /** Indexes of the turns not in the previous context (null: no previous context to compare). */
  fresh: number[] | null
  previousSeq: number | null
  datasetId: string | null
}) {
  const [open, setOpen] = useState(false)
  const [all, setAll] = useState(false)
  const turns = turnsOf(value)
  const rest = restOf(value)
  const isNew = new Set(fresh ?? turns?.map((_, i) => i) ?? [])
  const summary = turns
    ? `${turns.length} turn${turns.length === 1 ? '' : 's'}${
        fresh && previousSeq !== null ? `, ${fresh.length} new since message ${previousSeq}` : ''
      }`
    : 'not a chat prompt'
  return (
    <div className="text-sm">
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        className="text-left text-xs font-medium text-brand-700 underline"
      >
        {open ? '▾' : '▸'} Context of message {seq} ({summary})
      </button>
      {open && (
        <div className="mt-2 space-y-2" data-testid={`context-${seq}`}>
          {turns ? (
            <>
              {fresh && previousSeq !== null && fresh.length < turns.length && (
                <div className="flex items-center gap-3 text-xs text-stone-600">
                  <span>
                    {all
                      ? `All ${turns.length} turns; the ${fresh.length} new ones are highlighted.`
                      : `${turns.length - fresh.length} turns are the same as in message ${previousSeq}'s context and hidden.`}
                  </span>
                  <button type="button" onClick={() => setAll((a) => !a)} className="text-brand-700 underline">
                    {all ? 'Show only the new turns' : `Show all ${turns.length} turns`}
                  </button>
                </div>
              )}
              <ol className="space-y-1.5">
                {turns.map((t, i) =>
                  all || isNew.has(i) ? (
                    <TurnView key={i} turn={t} datasetId={datasetId} fresh={all && isNew.has(i) && !!fresh} />
                  ) : null,
                )}
              </ol>
              {rest && <Json value={rest} />}
            </>
          ) : (
            <Json value={value} />
          )}
        </div>
      )}
    </div>
  )
}

export interface CallRow {
  id: string
  purpose: string
  modelRequested: string
  status: string
  errorKind: string | null
  attempt: number
  error: string | null
  request: unknown
  response: unknown
  tokensIn: number
  tokensOut: number
  latencyMs: number
  cached: boolean
}

/** A call's outcome in words: a reply that failed the format check is a failure, not "ok". */
export function callOutcome(c: Pick<CallRow, 'status' | 'errorKind'>): { label: string; failed: boolean } {
  if (c.status === 'ok') return { label: 'ok', failed: false }
  if (c.errorKind === 'invalid_output')
    return { label: 'failed: the reply did not pass the format check', failed: true }
  return { label: `failed${c.errorKind ? `: ${c.errorKind}` : ''}`, failed: true }
}

/** One LLM call, collapsed: the exact request (images drawn), the response or the error. */
export function CallView({ call, datasetId }: { call: CallRow; datasetId: string | null }) {
  const [open, setOpen] = useState(false)
  const outcome = callOutcome(call)
  return (
    <div className="mt-2 text-sm" data-testid="call" data-status={outcome.failed ? 'failed' : 'ok'}>
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        className="text-left text-xs hover:underline"
      >
        {open ? '▾' : '▸'} {call.purpose} · {call.modelRequested} ·{' '}
        <span className={outcome.failed ? 'font-medium text-red-700' : 'text-green-800'}>{outcome.label}</span>
        {call.attempt > 1 ? ` (attempt ${call.attempt})` : ''} · {formatCount(call.tokensIn)}+
        {formatCount(call.tokensOut)} tokens · {call.latencyMs} ms{call.cached ? ' · replayed' : ''}
      </button>
      {open && (
        <div className="mt-2 space-y-2 pl-4">
          <p className="text-xs font-medium text-stone-500">Exact request</p>
          <PromptView value={call.request} datasetId={datasetId} />
          {call.error && <p className="text-xs text-red-700">{call.error}</p>}
          {call.response !== null && call.response !== undefined && (
            <>
              <p className="text-xs font-medium text-stone-500">Response</p>
              <Json value={call.response} />
            </>
          )}
          <a href={`/calls/${call.id}`} className="text-xs text-brand-700 underline">
            Open in the call log
          </a>
        </div>
      )}
    </div>
  )
}

export interface ProgramRunRow {
  id: string
  seq: number
  program: string
  callIndex: number
  input: unknown
  output: unknown
  exitStatus: number | null
  limitsHit: string | null
  error: string | null
  interrupted: boolean
  attempts: number
  durationMs: number | null
}

/** A program run's outcome in words: running, ok, exited with a status, or stopped by a limit. */
export function programOutcome(r: ProgramRunRow): { label: string; failed: boolean } {
  if (r.durationMs === null) return { label: 'started, no result (running, or its worker died)', failed: true }
  if (r.limitsHit)
    return { label: `stopped: ${r.limitsHit}${r.interrupted ? ' (runs again with the step)' : ''}`, failed: true }
  if (r.exitStatus === 0) return { label: 'exit 0', failed: false }
  return { label: `exit ${r.exitStatus ?? '—'}`, failed: true }
}

/**
 * One program run of a step (ctx.exec), collapsed like an LLM call: its input, output and error as
 * text (React escapes it: a program's output is shown like model output, never as HTML).
 */
export function ProgramRunView({ run }: { run: ProgramRunRow }) {
  const [open, setOpen] = useState(false)
  const outcome = programOutcome(run)
  return (
    <div className="mt-2 text-sm" data-testid="program-run" data-status={outcome.failed ? 'failed' : 'ok'}>
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        className="text-left text-xs hover:underline"
      >
        {open ? '▾' : '▸'} program {run.program}
        {run.callIndex > 0 ? ` (call ${run.callIndex + 1})` : ''} ·{' '}
        <span className={outcome.failed ? 'font-medium text-red-700' : 'text-green-800'}>{outcome.label}</span>
        {run.durationMs !== null ? ` · ${run.durationMs} ms` : ''}
        {run.attempts > 1 ? ` · started ${run.attempts}×` : ''}
      </button>
      {open && (
        <div className="mt-2 space-y-2 pl-4">
          <p className="text-xs font-medium text-stone-500">Input</p>
          <Json value={run.input} />
          {run.error && <p className="whitespace-pre-wrap break-words text-xs text-red-700">{run.error}</p>}
          {run.output !== null && run.output !== undefined && (
            <>
              <p className="text-xs font-medium text-stone-500">Output</p>
              <Json value={run.output} />
            </>
          )}
        </div>
      )}
    </div>
  )
}
