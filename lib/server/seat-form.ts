import type { SeatDecl } from '@/lib/protocols/types'

/**
 * The fields the generic seat picker (components/runs/seat-picker.tsx) posts → the seats of a
 * create-run body: `seats.<seat>.kind` picks the way (llm | human | claimable | proxy |
 * program:<name>), the rest are that way's fields. Seats the form left out stay out (the engine
 * fills a seat only one program fills, and names any other missing seat). Checking is `runs.create`'s.
 */
export function seatsFromForm(decls: readonly Pick<SeatDecl, 'name'>[], f: Record<string, unknown>) {
  const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)
  const ref = (raw: unknown, overrides: Record<string, unknown> = {}) => {
    let r: Record<string, unknown> = {}
    try {
      r = JSON.parse(text(raw) ?? '{}') as Record<string, unknown>
    } catch {}
    for (const [k, v] of Object.entries(overrides)) if (v !== undefined) r[k] = v
    return r
  }
  const seats: Record<string, unknown> = {}
  for (const { name } of decls) {
    const field = (k: string) => f[`seats.${name}.${k}`]
    const way = text(field('kind'))
    if (!way) continue
    const helpers = Object.fromEntries(
      Object.entries(f)
        .filter(([k, v]) => k.startsWith(`seats.${name}.helpers.`) && text(v))
        .map(([k, v]) => [k.slice(`seats.${name}.helpers.`.length), ref(v)]),
    )
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
    else if (way === 'human') seats[name] = { kind: 'human', userId: text(field('userId')) }
    else if (way === 'claimable') seats[name] = { kind: 'human', claimable: true }
    else if (way === 'proxy') seats[name] = { kind: 'proxy', helpers }
    else if (way.startsWith('program:'))
      seats[name] = { kind: 'program', program: way.slice('program:'.length), helpers }
    else seats[name] = { kind: way }
  }
  return seats
}
