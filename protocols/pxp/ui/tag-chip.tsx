const TONES: Record<string, string> = {
  INIT: 'bg-stone-100 text-stone-700',
  RATIFY: 'bg-green-100 text-green-800',
  REFUTE: 'bg-amber-100 text-amber-900',
  REVISE: 'bg-sky-100 text-sky-800',
  REJECT: 'bg-red-100 text-red-800',
}

export function TagChip({ tag }: { tag: string | null }) {
  if (!tag) return null
  return (
    <span className={`inline-flex rounded px-1.5 py-0.5 font-mono text-xs font-semibold ${TONES[tag] ?? TONES.INIT}`}>
      {tag}
    </span>
  )
}
