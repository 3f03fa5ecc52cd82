/**
 * FormData → plain object for zod. Empty strings become undefined (so optional fields and defaults
 * apply), "true"/"false" become booleans, Next's internal `$ACTION_*` keys are dropped. Repeated keys
 * become arrays.
 */
export function formDataToObject(fd: FormData): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, raw] of fd.entries()) {
    if (key.startsWith('$ACTION')) continue
    let value: unknown = raw
    if (typeof raw === 'string') {
      if (raw === '') continue
      if (raw === 'true') value = true
      else if (raw === 'false') value = false
    }
    if (key in out) {
      const prev = out[key]
      out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value]
    } else out[key] = value
  }
  return out
}
