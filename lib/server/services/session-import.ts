import { z } from 'zod'
import { maxUploadBytes, maxUploadMb, uploadTooLargeMessage } from '@/lib/limits.mjs'
import { db } from '@/lib/server/db'
import { importSessions, sessionImportKind, sessionImportKinds } from '@/lib/server/engine/session-import'
import { badRequest, tooLarge } from '@/lib/server/errors'
import { defineOperation, validationFailure } from '@/lib/server/operation'
import { id, requireStudyAccess } from '@/lib/server/services/studies'

/**
 * Importing finished sessions into a study as one imported run (the engine's session import,
 * lib/server/engine/session-import.ts): the kinds are what the protocols' plugins declare
 * (`sessionImports`); generic code names none. Write access to the study is needed.
 */

const fileInput = z.instanceof(File, { message: 'Choose a file.' }).refine((f) => f.size > 0, 'The file is empty.')

export const ImportRunInput = z
  .object({
    studyId: id,
    name: z.string({ error: 'Name the run.' }).trim().min(1, 'Name the run.').max(120),
    kind: z
      .string({ error: 'Choose the kind of file.' })
      .trim()
      .min(1, 'Choose the kind of file.')
      .max(60, 'Choose the kind of file.'),
    file: fileInput,
  })
  // The kind's own options are read once the kind is known.
  .catchall(z.unknown())
export type ImportRunInput = z.infer<typeof ImportRunInput>

export const ImportRunResult = z
  .object({
    runId: z.string(),
    datasetId: z.string(),
    sessions: z.number().int(),
    messages: z.number().int(),
  })
  .meta({ id: 'RunImported' })

export const RunImportKinds = z
  .array(
    z.object({
      kind: z.string(),
      protocol: z.string(),
      label: z.string(),
      description: z.string(),
      accepts: z.string(),
      fields: z.array(
        z.object({
          name: z.string(),
          label: z.string(),
          placeholder: z.string().optional(),
          multiline: z.boolean().optional(),
        }),
      ),
    }),
  )
  .meta({ id: 'RunImportKinds' })

/**
 * Import a file of finished sessions as a run of the study (status done, marked imported): every
 * message goes through the protocol's `apply`; a refused line fails the whole import (400 naming the
 * file's line) and nothing is stored.
 */
export const importRun = defineOperation({
  name: 'runs.import',
  scope: 'studies:update',
  input: ImportRunInput,
  async run(actor, input) {
    await requireStudyAccess(db, actor, input.studyId, 'write')
    const { def } = await sessionImportKind(input.kind)
    if (input.file.size > maxUploadBytes()) throw tooLarge(uploadTooLargeMessage(input.file.size, maxUploadMb()))
    const { studyId: _s, name, kind, file, ...rest } = input
    let options: unknown = {}
    if (def.options) {
      const r = def.options.safeParse(Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== '')))
      if (!r.success) {
        const f = validationFailure(r.error)
        throw badRequest(f.error, f.fieldErrors)
      }
      options = r.data
    }
    return importSessions(actor, {
      studyId: input.studyId,
      kind,
      name,
      fileName: file.name,
      text: await file.text(),
      options,
    })
  },
})

/** The session-import kinds there are, for a study's import form (plain data). */
export const listRunImportKinds = defineOperation({
  name: 'runs.import-kinds',
  scope: 'studies:read',
  input: z.object({ studyId: id }),
  async run(actor, { studyId }) {
    await requireStudyAccess(db, actor, studyId, 'read')
    return (await sessionImportKinds()).map(({ kind, plugin, def }) => ({
      kind,
      protocol: plugin.protocol.id,
      label: def.label,
      description: def.description ?? '',
      accepts: def.accepts ?? '',
      fields: def.fields ?? [],
    }))
  },
})
