import { z } from 'zod'
import { readBoundedText } from '@/lib/tasks/corpus'
import type { DatasetItem, DatasetKind, DatasetSource, ImportFile } from '@/lib/server/sdk'
import { MAX_ENV_CHARS, parsePagesJsonl, parseQuestionsJsonl, QaDataError } from '@/protocols/rehac/core/qa-env'
import { parseSqlTasksJsonl } from '@/protocols/rehac/core/sql-reward'

/**
 * ReHAC's task sets as datasets of a study:
 * - `rehac-qa`: the questions (JSONL `{id, question, answer, type?: qa|yesno}`) with their corpus (JSONL
 *   pages `{title, paragraphs}`) uploaded beside them;
 * - `rehac-sql`: the tasks (JSONL `{id, request, gold}`) with the SQL file of their schema beside them.
 * Each instance's input is the task (`{id, kind, question, taskSet}`) and what its environment reads
 * (`pages`, or `schemaSql`); the prediction is the gold answer or query, which no participant sees.
 * The environment data is kept in every instance (and so every session's snapshot), which bounds a corpus
 * to MAX_ENV_CHARS: a shared store for a full Wikipedia-size corpus is not built yet.
 */
export { MAX_ENV_CHARS }

export function readText(file: ImportFile, max = MAX_ENV_CHARS): Promise<string> {
  return readBoundedText(
    file,
    max,
    (m) =>
      new QaDataError(
        `${file.name} is larger than ${Math.round(m / 1024 / 1024)} MB: every session keeps its task set's corpus or schema (and the file of questions) with it, so each is at most ${Math.round(m / 1024 / 1024)} MB; split it into smaller task sets`,
      ),
  )
}

const Options = z.object({
  taskSet: z
    .string()
    .trim()
    .max(100)
    .optional()
    .transform((v) => v || undefined),
})

const taskSetOf = (source: DatasetSource<z.output<typeof Options>>, env: ImportFile | undefined) =>
  source.options.taskSet ?? env?.name.replace(/\.[^.]+$/, '') ?? 'tasks'

async function* qaItems(source: DatasetSource<z.output<typeof Options>>): AsyncIterable<DatasetItem> {
  const corpusFile = source.attachments.find((a) => a.role === 'corpus')
  if (!corpusFile) {
    yield { line: 0, problem: 'Upload the corpus (pages JSONL) beside the questions.', fatal: true }
    return
  }
  let pages: ReturnType<typeof parsePagesJsonl>
  let questions: ReturnType<typeof parseQuestionsJsonl>
  try {
    pages = parsePagesJsonl(await readText(corpusFile))
    questions = parseQuestionsJsonl(await readText(source.data))
  } catch (err) {
    yield { line: 0, problem: err instanceof Error ? err.message : String(err), fatal: true }
    return
  }
  const taskSet = taskSetOf(source, corpusFile)
  for (const [index, q] of questions.entries())
    yield {
      line: index + 1,
      row: {
        index,
        input: { id: q.id, kind: q.type, question: q.question, taskSet, pages },
        prediction: q.answer,
        explanation: '',
        meta: { kind: q.type, taskSet },
      },
    }
}

async function* sqlItems(source: DatasetSource<z.output<typeof Options>>): AsyncIterable<DatasetItem> {
  const schemaFile = source.attachments.find((a) => a.role === 'schema')
  if (!schemaFile) {
    yield { line: 0, problem: 'Upload the SQL file of the schema beside the tasks.', fatal: true }
    return
  }
  let schemaSql: string
  let tasks: ReturnType<typeof parseSqlTasksJsonl>
  try {
    schemaSql = await readText(schemaFile)
    tasks = parseSqlTasksJsonl(await readText(source.data))
  } catch (err) {
    yield { line: 0, problem: err instanceof Error ? err.message : String(err), fatal: true }
    return
  }
  const taskSet = taskSetOf(source, schemaFile)
  for (const [index, t] of tasks.entries())
    yield {
      line: index + 1,
      row: {
        index,
        input: { id: t.id, kind: 'sql', question: t.request, taskSet, schemaSql },
        prediction: t.gold,
        explanation: '',
        meta: { kind: 'sql', taskSet },
      },
    }
}

export const rehacDatasets: Record<string, DatasetKind> = {
  'rehac-qa': {
    label: 'ReHAC QA tasks',
    description:
      'Questions as JSON Lines ({"id", "question", "answer", "type": "qa" | "yesno"}) with their offline corpus beside them (JSON Lines pages {"title", "paragraphs": [...]}). The answer is the gold answer: no participant sees it.',
    accepts: '.jsonl',
    attachments: [{ field: 'corpus', label: 'Corpus (pages JSONL)', accept: '.jsonl' }],
    options: Options,
    fields: [{ name: 'taskSet', label: 'Task set name (default: the corpus file name)' }],
    parse: qaItems,
  },
  'rehac-sql': {
    label: 'ReHAC SQL tasks',
    description:
      'SQL tasks as JSON Lines ({"id", "request", "gold"}) with the SQL file of their database beside them (CREATE TABLE / INSERT, loaded into a schema of its own and read by a read-only role).',
    accepts: '.jsonl',
    attachments: [{ field: 'schema', label: 'Schema (SQL file)', accept: '.sql' }],
    options: Options,
    fields: [{ name: 'taskSet', label: 'Task set name (default: the SQL file name)' }],
    parse: sqlItems,
  },
}
