import type { SeatDecl } from '@/lib/protocols/types'

/**
 * The fields the generic seat picker (components/runs/seat-picker.tsx) posts → the seats of a
 * create-run body: `seats.<seat>.kind` picks the way (llm | human | claimable | proxy |
 * program:<name>), the rest are that way's fields. Several `.userId`s (a round-robin picker) are a
 * list of fills the sessions take in turn. A helper shared by seats (`SeatHelpers`: `helpers.<helper>`
 * and its `.modelName`) goes to every seat whose way uses it (the declaration's `for`) and that names
 * none of its own. Seats the form left out stay out (the engine fills a seat only one program fills,
 * and names any other missing seat). Checking is `runs.create`'s.
 */
export function seatsFromForm(decls: readonly Pick<SeatDecl, 'name' | 'helpers'>[], f: Record<string, unknown>) {
  const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)
  const ref = (raw: unknown, overrides: Record<string, unknown> = {}) => {
    let r: Record<string, unknown> = {}
    try {
      r = JSON.parse(text(raw) ?? '{}') as Record<string, unknown>
    } catch {}
    for (const [k, v] of Object.entries(overrides)) if (v !== undefined) r[k] = v
    return r
  }
  /** The helpers asked once for several seats. */
  const shared = (helper: string) => {
    const model = text(f[`helpers.${helper}`])
    return model ? ref(model, { model: text(f[`helpers.${helper}.modelName`]) }) : undefined
  }
  const seats: Record<string, unknown> = {}
  for (const { name, helpers: declared = [] } of decls) {
    const field = (k: string) => f[`seats.${name}.${k}`]
    const way = text(field('kind'))
    if (!way) continue
    const kind = way.startsWith('program:') ? 'program' : way
    const person = way === 'human' || way === 'claimable'
    const helpers: Record<string, unknown> = Object.fromEntries(
      Object.entries(f)
        .filter(([k, v]) => k.startsWith(`seats.${name}.helpers.`) && text(v))
        .map(([k, v]) => [k.slice(`seats.${name}.helpers.`.length), ref(v)]),
    )
    for (const h of declared) {
      if (person || h.name in helpers || (h.for && !(h.for as readonly string[]).includes(kind))) continue
      const model = shared(h.name)
      if (model) helpers[h.name] = model
    }
    const temperature = text(field('temperature'))
    if (way === 'llm')
      seats[name] = {
        kind: 'llm',
        model: ref(field('model'), {
          model: text(field('modelName')),
          temperature: temperature === undefined ? undefined : Number(temperature),
        }),
        helpers,
      }
    else if (way === 'human') {
      const people = (Array.isArray(field('userId')) ? (field('userId') as unknown[]) : [field('userId')])
        .map(text)
        .filter((u): u is string => !!u)
      seats[name] =
        people.length > 1 ? people.map((userId) => ({ kind: 'human', userId })) : { kind: 'human', userId: people[0] }
    } else if (way === 'claimable') seats[name] = { kind: 'human', claimable: true }
    else if (way === 'proxy') seats[name] = { kind: 'proxy', helpers }
    else if (way.startsWith('program:'))
      seats[name] = { kind: 'program', program: way.slice('program:'.length), helpers }
    else seats[name] = { kind: way }
  }
  return seats
}
