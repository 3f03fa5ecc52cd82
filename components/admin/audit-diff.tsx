import diff from 'microdiff'

const show = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v))

function asObject(v: unknown): Record<string, unknown> | unknown[] {
  if (v && typeof v === 'object') return v as Record<string, unknown>
  return v === null || v === undefined ? {} : { value: v }
}

/**
 * An audit row's before and after as a diff: one line per changed path, the old value struck out in
 * red, the new one in green (microdiff walks nested objects and arrays). Keys that did not change are
 * left out; a creation or deletion lists every field as added or removed.
 */
export function AuditDiff({ before, after }: { before: unknown; after: unknown }) {
  if (before == null && after == null) return <span className="text-stone-500">—</span>
  const changes = diff(asObject(before), asObject(after))
  if (changes.length === 0) return <span className="text-xs text-stone-500">no change</span>
  return (
    <ul className="max-w-md space-y-0.5 font-mono text-xs" data-testid="audit-diff">
      {changes.map((c) => {
        const path = c.path.join('.')
        return (
          <li key={`${c.type}:${path}`} className="break-all">
            <span className="text-stone-600">{path}: </span>
            {c.type !== 'CREATE' && (
              <del className="rounded bg-red-50 px-0.5 text-red-800" data-change="removed">
                {show(c.oldValue)}
              </del>
            )}
            {c.type === 'CHANGE' && ' → '}
            {c.type !== 'REMOVE' && (
              <ins className="rounded bg-green-50 px-0.5 text-green-800 no-underline" data-change="added">
                {show(c.value)}
              </ins>
            )}
          </li>
        )
      })}
    </ul>
  )
}
