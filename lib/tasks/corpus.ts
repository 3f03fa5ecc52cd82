import { z } from 'zod'
import { parseJsonlRows } from '@/lib/tasks/jsonl'

/**
 * An offline corpus of pages, the one format every protocol that searches text imports (ReHAC's QA
 * environment: Search / Lookup; MINT's reasoning tool: `wikipedia_search`): JSON Lines, one page a line,
 * `{"title", "paragraphs": [...]}`. A corpus travels with the tasks it serves (in each instance, so in each
 * session's snapshot: a session replays on what it ran on), which bounds it to {@link MAX_CORPUS_CHARS}.
 */

/** Bytes of a corpus file (and of the tasks file beside it): kept in every session's snapshot, so bounded. */
export const MAX_CORPUS_CHARS = 4 * 1024 * 1024

export const CORPUS_LIMITS = {
  maxPages: 20_000,
  maxParagraphsPerPage: 200,
  maxParagraphChars: 10_000,
  maxTitleChars: 300,
} as const

export const corpusPage = z.object({
  title: z.string().trim().min(1).max(CORPUS_LIMITS.maxTitleChars),
  paragraphs: z
    .array(z.string().trim().min(1).max(CORPUS_LIMITS.maxParagraphChars))
    .min(1)
    .max(CORPUS_LIMITS.maxParagraphsPerPage),
})
export type CorpusPage = z.infer<typeof corpusPage>

/** Pages from JSONL text (blank lines skipped); the first bad line throws `fail("line N: …")`. */
export function parseCorpusJsonl(text: string, fail?: (message: string) => Error): CorpusPage[] {
  return parseJsonlRows(text, corpusPage, { what: 'pages', max: CORPUS_LIMITS.maxPages, fail })
}

/** An uploaded file as an import reads it (the engine's ImportFile, structurally). */
export interface ReadableUpload {
  name: string
  read(): AsyncIterable<Uint8Array>
}

/**
 * The whole text of an upload of at most `max` bytes; a larger one throws `tooLarge(max)` as soon as it
 * passes the bound (nothing past it is read).
 */
export async function readBoundedText(
  file: ReadableUpload,
  max: number,
  tooLarge: (max: number) => Error,
): Promise<string> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const c of file.read()) {
    size += c.length
    if (size > max) throw tooLarge(max)
    chunks.push(c)
  }
  return Buffer.concat(chunks).toString('utf8')
}
