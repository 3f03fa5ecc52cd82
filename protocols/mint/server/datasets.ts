import { z } from 'zod'
import type { DatasetItem, DatasetKind, DatasetSource } from '@/lib/server/sdk'
import { type CorpusPage, MAX_CORPUS_CHARS, parseCorpusJsonl, readBoundedText } from '@/lib/tasks/corpus'
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
 *
 * A reasoning set may bring its offline corpus for `wikipedia_search` (the `corpus` upload beside it, the
 * pages JSONL `{"title", "paragraphs"}` of lib/tasks/corpus.ts, the file a ReHAC QA set is imported with):
 * its pages go into every instance (`pages`, at most 4 MB, so every session's snapshot has what it searched;
 * server/corpus.ts). Without one, a reasoning episode's `wikipedia_search` says the run has no corpus. Code
 * tasks refuse a corpus (the paper gives them the interpreter only).
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
  const dataset = source.options.dataset
  const corpusFile = source.attachments.find((a) => a.role === 'corpus')
  if (corpusFile && TASK_TYPE_OF[dataset] !== 'reasoning') {
    yield {
      line: 0,
      problem: `A corpus serves wikipedia_search, the reasoning tasks' tool; ${dataset} tasks get the Python interpreter only. Import them without the corpus.`,
      fatal: true,
    }
    return
  }
  let lines: ReturnType<typeof parseTaskLines>
  let pages: CorpusPage[] | undefined
  try {
    const text = await readBoundedText(
      source.data,
      MAX_TASKS_BYTES,
      () => new Error(`${source.data.name} is larger than 50 MB.`),
    )
    lines = parseTaskLines(text, source.data.name)
    if (corpusFile) {
      const corpus = await readBoundedText(
        corpusFile,
        MAX_CORPUS_CHARS,
        (max) =>
          new Error(
            `${corpusFile.name} is larger than ${max / 1024 / 1024} MB: every session keeps its corpus with it; use a smaller corpus.`,
          ),
      )
      pages = parseCorpusJsonl(corpus, (m) => new Error(`${corpusFile.name}: ${m}`))
      if (!pages.length) throw new Error(`${corpusFile.name} has no pages.`)
    }
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
          ...(pages ? { pages } : {}),
        },
        prediction: referenceText(t.reference),
        explanation: '',
        meta: {
          dataset,
          taskType: TASK_TYPE_OF[dataset],
          ...(t.task_id !== undefined ? { taskId: t.task_id } : {}),
          ...(pages ? { corpusPages: pages.length } : {}),
        },
      },
    }
  }
}

export const mintDatasets: Record<string, DatasetKind> = {
  'mint-tasks': {
    label: 'MINT tasks',
    description:
      'One of the MINT authors\u2019 test_prompts.json files as released (JSON Lines {"id", "prompt", "reference", …}; TheoremQA adds "answer_type"). Name its data set: gsm8k, hotpotqa, math, mmlu, theoremqa (reasoning), humaneval or mbpp (code, checked by their tests in the sandbox). The reference is the ground truth: the evaluated model never sees it. A reasoning set may bring its offline corpus for wikipedia_search beside it (JSON Lines pages {"title", "paragraphs": [...]}, as ReHAC\u2019s QA corpus; at most 4 MB); without one, reasoning runs have no search.',
    accepts: '.json,.jsonl',
    attachments: [{ field: 'corpus', label: 'Corpus (pages JSONL)', accept: '.jsonl' }],
    options: Options,
    fields: [{ name: 'dataset', label: 'Data set (gsm8k, hotpotqa, math, mmlu, theoremqa, humaneval, mbpp)' }],
    parse: taskItems,
  },
}
