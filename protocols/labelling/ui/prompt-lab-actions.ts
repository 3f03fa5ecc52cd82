'use server'

import { revalidatePath } from 'next/cache'
import { z } from 'zod'
import { runFormAction } from '@/lib/server/form-action'
import { createRun } from '@/lib/server/services/runs'
import { paraphraseName, paraphraseSchema, variantCode } from '@/protocols/labelling/core/variants'

const Input = z.object({
  studyId: z.string().min(1).max(40),
  datasetId: z.string().min(1).max(40),
  connectionId: z.string().min(1, 'Choose an LLM connection.').max(40),
  model: z.string().trim().max(200).optional(),
  prompts: z
    .array(z.object({ variant: variantCode, paraphrase: paraphraseSchema.optional() }))
    .min(1, 'Pick at least one variant.')
    .max(64, 'At most 64 prompts at once.'),
})
export type PromptLabRunInput = z.input<typeof Input>
export type PromptLabRunAnswer = { created: Array<{ prompt: string; runId: string }>; errors: string[] }

/**
 * "Run" on the prompt lab: one LLM-labeller run per picked variant or paraphrase over the dataset, each
 * through the ordinary `runs.create` (checked, planned and started on the job queue like any run; the
 * operation checks the actor's write access). A prompt whose run is refused is reported, the others go on.
 */
export async function startPromptLabRuns(raw: PromptLabRunInput): Promise<PromptLabRunAnswer> {
  const parsed = Input.safeParse(raw)
  if (!parsed.success) return { created: [], errors: [parsed.error.issues[0]?.message ?? 'Bad input.'] }
  const { studyId, datasetId, connectionId, model, prompts } = parsed.data
  const created: PromptLabRunAnswer['created'] = []
  const errors: string[] = []
  for (const p of prompts) {
    const prompt = p.paraphrase ? paraphraseName(p.paraphrase) : p.variant
    const { state, data } = await runFormAction(
      createRun,
      {
        studyId,
        protocol: 'labelling',
        name: `Prompt lab ${prompt}`,
        datasetId,
        config: {
          preset: 'relevance-0-2',
          labeller: { variant: p.variant, ...(p.paraphrase ? { paraphrase: p.paraphrase } : {}) },
        },
        seats: { annotator: { kind: 'llm', model: { connectionId, ...(model ? { model } : {}) } } },
        start: true,
      },
      'Created.',
    )
    if (data) created.push({ prompt, runId: data.id })
    else errors.push(`${prompt}: ${state?.error ?? 'refused'}`)
  }
  revalidatePath(`/studies/${studyId}/p/labelling/prompt-lab`)
  return { created, errors }
}
