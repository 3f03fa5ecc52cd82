'use client'

import { useRef, useState } from 'react'
import { Badge } from '@/components/ui/card'

type Done = {
  model: string
  usage: { prompt_tokens: number; completion_tokens: number }
  simulated: boolean
  ttftMs: number | null
  latencyMs: number
}

/** Send one prompt through a connection and watch the reply stream in (Ctrl+Enter runs, Esc stops). */
export function Playground({ connectionId, defaultModel }: { connectionId: string; defaultModel: string }) {
  const [prompt, setPrompt] = useState('')
  const [output, setOutput] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [done, setDone] = useState<Done | null>(null)
  const [running, setRunning] = useState(false)
  const abort = useRef<AbortController | null>(null)

  async function run() {
    if (!prompt.trim() || running) return
    setOutput('')
    setError(null)
    setDone(null)
    setRunning(true)
    const ac = new AbortController()
    abort.current = ac
    try {
      const res = await fetch('/api/llm/stream', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ connectionId, prompt }),
        signal: ac.signal,
      })
      if (!res.ok || !res.body) {
        setError((await res.json().catch(() => null))?.error ?? `Request failed (${res.status}).`)
        return
      }
      const reader = res.body.getReader()
      const decoder = new TextDecoder()
      let buffer = ''
      let attempt = 1
      for (;;) {
        const { value, done: end } = await reader.read()
        if (end) break
        buffer += decoder.decode(value, { stream: true })
        let cut = buffer.indexOf('\n\n')
        while (cut >= 0) {
          const block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          cut = buffer.indexOf('\n\n')
          const event = /^event: (.*)$/m.exec(block)?.[1]
          const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null')
          if (event === 'token') {
            // A retried stream starts over: clear what the failed attempt showed.
            if (data.attempt !== attempt) {
              attempt = data.attempt
              setOutput('')
            }
            setOutput((t) => t + data.delta)
          } else if (event === 'done') setDone(data)
          else if (event === 'error') setError(data.message)
        }
      }
    } catch (e) {
      if (!ac.signal.aborted) setError(e instanceof Error ? e.message : String(e))
    } finally {
      setRunning(false)
      abort.current = null
    }
  }

  return (
    <div className="space-y-3">
      <label className="block text-sm font-medium text-stone-800" htmlFor="pg-prompt">
        Prompt <span className="font-normal text-stone-500">(model {defaultModel}; Ctrl+Enter runs, Esc stops)</span>
      </label>
      <textarea
        id="pg-prompt"
        rows={3}
        value={prompt}
        onChange={(e) => setPrompt(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) run()
          if (e.key === 'Escape') abort.current?.abort()
        }}
        className="block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm"
      />
      <div className="flex gap-2">
        <button
          type="button"
          onClick={run}
          disabled={running || !prompt.trim()}
          className="rounded-md bg-brand-600 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-60"
        >
          {running ? 'Running…' : 'Run'}
        </button>
        {running && (
          <button
            type="button"
            onClick={() => abort.current?.abort()}
            className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm"
          >
            Stop
          </button>
        )}
      </div>
      {error && (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      )}
      {(output || done) && (
        <div className="rounded-md border border-stone-200 bg-stone-50 p-3">
          {done?.simulated && (
            <p className="mb-2">
              <Badge tone="amber">simulated demo model</Badge>
            </p>
          )}
          {/* Model output is shown as plain text (React escapes it); never as HTML. */}
          <p data-testid="playground-output" aria-live="polite" className="whitespace-pre-wrap text-sm">
            {output}
          </p>
          {done && (
            <p className="mt-2 text-xs text-stone-500">
              {done.model} · {done.usage.prompt_tokens} in / {done.usage.completion_tokens} out tokens ·{' '}
              {done.latencyMs} ms
              {done.ttftMs !== null && ` · first token after ${done.ttftMs} ms`}
            </p>
          )}
        </div>
      )}
    </div>
  )
}
