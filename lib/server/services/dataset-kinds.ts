import type { DatasetKind } from '@/lib/server/engine/datasets'
import { allPlugins } from '@/lib/server/engine/plugins'
import { badRequest } from '@/lib/server/errors'

/**
 * The dataset kinds there are: those the protocols' plugins declare (`datasets`). Generic code knows
 * no kind by name; it asks here. A kind name two plugins both declare is a programming error, refused
 * when the kinds are first read.
 */
export interface KnownKind {
  kind: string
  protocol: string
  def: DatasetKind
}

export async function datasetKinds(): Promise<KnownKind[]> {
  const out = new Map<string, KnownKind>()
  for (const p of await allPlugins())
    for (const [kind, def] of Object.entries((await p.ops?.())?.datasets ?? {})) {
      const other = out.get(kind)
      if (other) throw new Error(`Dataset kind "${kind}" is declared by both ${other.protocol} and ${p.protocol.id}.`)
      out.set(kind, { kind, protocol: p.protocol.id, def })
    }
  return [...out.values()]
}

/** A kind by name, or 400 naming the kinds there are (a request's `kind`). */
export async function datasetKind(kind: string): Promise<DatasetKind> {
  const all = await datasetKinds()
  const found = all.find((k) => k.kind === kind)
  if (found) return found.def
  const names = all.map((k) => k.kind).join(', ')
  throw badRequest(`Unknown dataset kind "${kind}": choose one of ${names}.`, {
    kind: [`Choose one of ${names}.`],
  })
}

/** A kind by name for what reads stored datasets (the dataset page): null for a kind no plugin declares now. */
export async function findDatasetKind(kind: string): Promise<DatasetKind | null> {
  return (await datasetKinds()).find((k) => k.kind === kind)?.def ?? null
}

/** What the upload form needs of the kinds it offers (plain data, for a client component). */
export async function uploadFormKinds() {
  return (await datasetKinds())
    .filter((k) => !k.def.ownForm)
    .map(({ kind, def }) => ({
      kind,
      label: def.label,
      description: def.description,
      accepts: def.accepts,
      attachments: (def.attachments ?? []).map(({ field, label, accept, multiple }) => ({
        field,
        label,
        accept,
        multiple: !!multiple,
      })),
      fields: def.fields ?? [],
    }))
}
export type UploadFormKind = Awaited<ReturnType<typeof uploadFormKinds>>[number]
