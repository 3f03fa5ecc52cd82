/**
 * The order the demo seed runs the plugins' seeds in: registry order, except that a seed runs after
 * every seed its `after` names (a protocol whose seed imports another's demo sessions). Pure. An id
 * in `after` that no seed has is ignored (that protocol seeds nothing); a cycle is an error naming it.
 */
export function seedOrder<T extends { id: string; after?: readonly string[] }>(seeds: readonly T[]): T[] {
  const byId = new Map(seeds.map((s) => [s.id, s]))
  const done = new Set<string>()
  const out: T[] = []
  const visit = (s: T, path: string[]) => {
    if (done.has(s.id)) return
    if (path.includes(s.id)) throw new Error(`The demo seeds wait for each other: ${[...path, s.id].join(' → ')}.`)
    for (const dep of s.after ?? []) {
      const d = byId.get(dep)
      if (d) visit(d, [...path, s.id])
    }
    done.add(s.id)
    out.push(s)
  }
  for (const s of seeds) visit(s, [])
  return out
}
