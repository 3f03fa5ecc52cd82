import { z } from 'zod'
import type { DatasetItem, DatasetKind, DatasetSource } from '@/lib/server/sdk'
import { DATASETS, TASK_TYPE_OF } from '@/protocols/mint/core/protocol'
import { parseTaskLines, referenceText } from '@/protocols/mint/core/results'

/**
 * MINT's task sets as datasets of a study: `mint-tasks` imports one of the authors' released
 * `data/processed/<dataset>/test_prompts.json` files as it is (JSON Lines: `{id, prompt, reference, …}`;
 * TheoremQA adds `answer_type`; HumanEval's reference is its test code ending with check(<entry point>),
 * MBPP's its asserts). The data set is named at the import (the file name is the same for all of them).
 * Each instance's input is the task (`{id, dataset, prompt, answerType?}`); the prediction is the
 * reference, which the evaluated model never sees (the feedback provider only when the run says so).
 * ALFWorld is refused: its game files are not installed here.
 */
export const MAX_TASKS_BYTES = 50 * 1024 * 1024

const Options = z.object({
  dataset: z
    .string({ error: 'Name the data set of the file (gsm8k, hotpotqa, math, mmlu, theoremqa, humaneval or mbpp).' })
    .trim()
    .toLowerCase()
    .pipe(
      z.enum(DATASETS, {
        error: 'Name the data set of the file: gsm8k, hotpotqa, math, mmlu, theoremqa, humaneval or mbpp.',
      }),
    )
    .refine((d) => d !== 'alfworld', {
      message: 'ALFWorld: environment not installed (its game files are not available here).',
    }),
})
type Options = z.output<typeof Options>

async function* taskItems(source: DatasetSource<Options>): AsyncIterable<DatasetItem> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const c of source.data.read()) {
    size += c.length
    if (size > MAX_TASKS_BYTES) {
      yield { line: 0, problem: `${source.data.name} is larger than 50 MB.`, fatal: true }
      return
    }
    chunks.push(c)
  }
  const dataset = source.options.dataset
  let lines: ReturnType<typeof parseTaskLines>
  try {
    lines = parseTaskLines(Buffer.concat(chunks).toString('utf8'), source.data.name)
  } catch (err) {
    yield { line: 0, problem: err instanceof Error ? err.message : String(err), fatal: true }
    return
  }
  for (const [index, t] of lines.entries()) {
    if (dataset === 'theoremqa' && !t.answer_type) {
      yield { line: index + 1, problem: `task ${t.id}: a TheoremQA task needs its answer_type.` }
      continue
    }
    yield {
      line: index + 1,
      row: {
        index,
        input: {
          id: String(t.id),
          dataset,
          prompt: t.prompt,
          ...(t.answer_type ? { answerType: t.answer_type } : {}),
        },
        prediction: referenceText(t.reference),
        explanation: '',
        meta: { dataset, taskType: TASK_TYPE_OF[dataset], ...(t.task_id !== undefined ? { taskId: t.task_id } : {}) },
      },
    }
  }
}

export const mintDatasets: Record<string, DatasetKind> = {
  'mint-tasks': {
    label: 'MINT tasks',
    description:
      'One of the MINT authors\u2019 test_prompts.json files as released (JSON Lines {"id", "prompt", "reference", …}; TheoremQA adds "answer_type"). Name its data set: gsm8k, hotpotqa, math, mmlu, theoremqa (reasoning), humaneval or mbpp (code, checked by their tests in the sandbox). The reference is the ground truth: the evaluated model never sees it.',
    accepts: '.json,.jsonl',
    options: Options,
    fields: [{ name: 'dataset', label: 'Data set (gsm8k, hotpotqa, math, mmlu, theoremqa, humaneval, mbpp)' }],
    parse: taskItems,
  },
}
