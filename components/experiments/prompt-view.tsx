/**
 * A chat request's messages as the model received them. Text is rendered as text (React escapes it:
 * model output is never injected as HTML); image parts show as a placeholder with their size, not
 * the data URL itself.
 */
type Part = { type?: string; text?: string; image_url?: { url?: string } | string }
type Msg = { role?: string; content?: string | Part[] | null }

function partText(p: Part): string {
  if (p.type === 'text' || typeof p.text === 'string') return p.text ?? ''
  if (p.type === 'image_url') {
    const url = typeof p.image_url === 'string' ? p.image_url : (p.image_url?.url ?? '')
    return url.startsWith('data:') ? `[image, ${Math.round((url.length * 3) / 4 / 1024)} KB]` : `[image ${url}]`
  }
  return `[${p.type ?? 'part'}]`
}

export function messagesOf(value: unknown): Msg[] | null {
  if (Array.isArray(value)) return value as Msg[]
  if (value && typeof value === 'object' && Array.isArray((value as { messages?: unknown }).messages))
    return (value as { messages: Msg[] }).messages
  return null
}

export function PromptView({ value }: { value: unknown }) {
  const messages = messagesOf(value)
  if (!messages)
    return (
      <pre className="max-h-80 overflow-auto whitespace-pre-wrap rounded bg-stone-50 p-2 text-xs">
        {JSON.stringify(value, null, 2)}
      </pre>
    )
  return (
    <ol className="space-y-1.5">
      {messages.map((m, i) => (
        <li key={i} className="rounded border border-stone-200 bg-stone-50 p-2 text-xs">
          <span className="mr-2 font-mono font-semibold uppercase text-stone-500">{m.role ?? '?'}</span>
          <span className="whitespace-pre-wrap">
            {typeof m.content === 'string' ? m.content : (m.content ?? []).map(partText).join('\n')}
          </span>
        </li>
      ))}
    </ol>
  )
}
