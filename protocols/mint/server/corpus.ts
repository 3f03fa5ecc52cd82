import { createHash } from 'node:crypto'
import { chmodSync, existsSync, lstatSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'
import { CORPUS_LIMITS, type CorpusPage, corpusPage } from '@/lib/tasks/corpus'

/**
 * The offline corpus of a MINT reasoning task set for `wikipedia_search` (issue 26: "reasoning gets
 * wikipedia_search(query) over an offline corpus in Parley"). The corpus is the one format of
 * lib/tasks/corpus.ts (ReHAC's QA corpus: `{title, paragraphs}` per line), uploaded beside a `mint-tasks`
 * file and kept in each instance, so in each session's snapshot (bounded to 4 MB, as ReHAC's).
 *
 * The sandbox reads it from a file the server writes once per content (`<tmpdir>/parley-mint-corpora-<uid>/
 * <sha256>.jsonl`, a directory only this user may use, pages as `{title, text}` with the paragraphs joined by a blank line, so the driver's
 * summary is the first paragraph). Node opens that file and passes the sandbox only the open descriptor,
 * which the driver reads whole and closes before any user code runs: the sandbox sees neither the path
 * nor the database, and has no network.
 */
export const mintEnvData = z.object({ pages: z.array(corpusPage).max(CORPUS_LIMITS.maxPages).optional() })

/** The directory of the corpus files, one per OS user (private to it: see {@link ensureCorpusDir}). */
export function corpusDir(): string {
  return path.join(os.tmpdir(), `parley-mint-corpora-${process.getuid?.() ?? 'user'}`)
}

/**
 * Creates the directory, or checks the one there: a real directory of this user that no one else may
 * write or read (in a shared /tmp another user could otherwise plant a corpus file under a hash's name).
 */
function ensureCorpusDir(): string {
  const dir = corpusDir()
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const st = lstatSync(dir)
  const uid = process.getuid?.()
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0)
    throw new Error(`${dir} is not a private directory of this user: remove it, or set TMPDIR to another folder`)
  return dir
}

/** A corpus file's path from its id (the sha256 of its content). */
export function corpusPathOf(id: string): string {
  if (!/^[0-9a-f]{64}$/.test(id)) throw new Error('a corpus id is a sha256 in hex')
  return path.join(corpusDir(), `${id}.jsonl`)
}

/** The pages as the sandbox's search reads them: JSONL `{title, text}` (paragraphs joined by a blank line). */
export function searchLines(pages: readonly CorpusPage[]): string {
  return pages.map((p) => JSON.stringify({ title: p.title, text: p.paragraphs.join('\n\n') })).join('\n')
}

/** Writes the corpus file (once per content, atomically) and returns its id. */
export function writeCorpus(pages: readonly CorpusPage[]): string {
  const text = searchLines(pages)
  const id = createHash('sha256').update(text).digest('hex')
  ensureCorpusDir()
  const file = corpusPathOf(id)
  if (existsSync(file)) return id
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`
  writeFileSync(tmp, text, { mode: 0o400 })
  chmodSync(tmp, 0o400)
  renameSync(tmp, file)
  return id
}
