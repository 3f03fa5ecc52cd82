/**
 * The QA environment of ReHAC's HotpotQA and StrategyQA tasks (PAPER §3.1: the ReAct framework, actions
 * Search[entity] / Lookup[keyword] / Finish[answer]), over an offline corpus instead of the live Wikipedia
 * API that ReAct's `WikiEnv` (wikienv.py) called. Pure: the state after a list of actions is a function of
 * (corpus, actions), so a session's log replays to the same observations ({@link replayQa}).
 *
 * Semantics (ReAct's where it had one; the departures are marked):
 * - Actions. The keyword is matched case-insensitively (ReAct lower-cased the first letter, so `Search[` and
 *   `search[` were both accepted); the argument is everything between the first `[` and a final `]`.
 *   Anything else is `Invalid action: <action>`, the action shown with its first letter lower-cased as
 *   ReAct's log shows it (the released trajectories read `Invalid action: search[Effects`).
 *   Departure: an empty Search[] or Lookup[] is invalid too (ReAct would search for ""); Finish[] is valid
 *   (an episode cut at the step threshold is force-finished with `finish[]`, REPO).
 * - Search[entity]: a page whose title equals the entity under {@link normalizeTitle} opens, and the
 *   observation is its first paragraph (ReAct showed the page's first five sentences; pass
 *   `searchSentences: 5` for that). No such page: `Could not find <entity>. Similar: ['A', 'B'].` with up to
 *   5 titles by {@link similarTitles}, written as ReAct wrote them (a Python list's repr). A failed search
 *   leaves the open page and the lookup as they were, as in ReAct (it only replaced them on a hit).
 * - Lookup[keyword]: the sentences ({@link splitSentences}) of the open page, all paragraphs in order, that
 *   contain the keyword (case-insensitive substring). The first Lookup of a keyword shows
 *   `(Result 1 / n) <sentence>`, each repeat of the same keyword (compared trimmed, case-insensitively,
 *   whitespace collapsed) the next one, then `No more results.` (also when n = 0). Another keyword, or a
 *   successful Search, starts over. Departure: with no page open ReAct answered `No more results.`; here
 *   it is {@link NO_PAGE_OPEN}, which tells a person what to do.
 * - Finish[answer] ends the episode: `Episode finished, reward = <r>` with r from the `reward` option (ReAct
 *   showed its EM there; the released data shows F1 for StrategyQA's true/false), or `Episode finished.`
 *   without one. Any action after it is answered with {@link EPISODE_OVER} and changes nothing.
 * The step threshold (HotpotQA 7, StrategyQA 5) is the trajectory's business, not the environment's.
 */
import { z } from 'zod'
import { CORPUS_LIMITS, type CorpusPage, corpusPage, MAX_CORPUS_CHARS } from '@/lib/tasks/corpus'
import { parseJsonlRows } from '@/lib/tasks/jsonl'

/** Bounds of the inputs; a corpus or question file past them is refused with a message that names the bound. */
/**
 * Bytes of a task set's environment file (a QA corpus or a SQL schema) and of its questions file: the
 * environment data is kept in every session's snapshot, so it is bounded (server/datasets.ts).
 */
export const MAX_ENV_CHARS = MAX_CORPUS_CHARS

export const QA_LIMITS = {
  /** Characters of one action string (a model's runaway output or a pasted page is not an action). */
  maxActionChars: 1_000,
  ...CORPUS_LIMITS,
  maxQuestions: 20_000,
  maxQuestionChars: 2_000,
  maxAnswerChars: 500,
  /** Characters of a JSONL file as text (pages or questions). */
  maxFileChars: 64 * 1024 * 1024,
} as const

/** A corpus page (the shared format of lib/tasks/corpus.ts). */
export const qaPage = corpusPage
export type QaPage = CorpusPage

/**
 * A question. `type` is 'qa' (HotpotQA: a short answer, scored by F1) or 'yesno' (StrategyQA); a yes/no
 * answer is written `true` or `false`, as the released StrategyQA trajectories finish (`Finish[false]`).
 */
export const qaQuestion = z
  .object({
    id: z.string().trim().min(1).max(100),
    question: z.string().trim().min(1).max(QA_LIMITS.maxQuestionChars),
    answer: z.string().trim().min(1).max(QA_LIMITS.maxAnswerChars),
    type: z.enum(['qa', 'yesno']).default('qa'),
  })
  .refine((q) => q.type !== 'yesno' || q.answer === 'true' || q.answer === 'false', {
    message: 'a yesno answer is "true" or "false"',
    path: ['answer'],
  })
export type QaQuestion = z.infer<typeof qaQuestion>

/** A line of a JSONL file that does not parse; the message starts with "line N:". */
export class QaDataError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'QaDataError'
  }
}

function parseJsonl<T>(text: string, schema: z.ZodType<T>, what: string, max: number): T[] {
  if (text.length > QA_LIMITS.maxFileChars)
    throw new QaDataError(`the ${what} file is longer than ${QA_LIMITS.maxFileChars} characters`)
  return parseJsonlRows(text, schema, { what, max, fail: (m) => new QaDataError(m) })
}

/** Pages from JSONL text (`{"title", "paragraphs": [...]}` a line; blank lines skipped). */
export function parsePagesJsonl(text: string): QaPage[] {
  return parseJsonl(text, qaPage, 'pages', QA_LIMITS.maxPages)
}

/** Questions from JSONL text (`{"id", "question", "answer", "type"?}` a line); ids must be unique. */
export function parseQuestionsJsonl(text: string): QaQuestion[] {
  const qs = parseJsonl(text, qaQuestion, 'questions', QA_LIMITS.maxQuestions)
  const seen = new Set<string>()
  for (const q of qs) {
    if (seen.has(q.id)) throw new QaDataError(`question id "${q.id}" appears twice`)
    seen.add(q.id)
  }
  return qs
}

/**
 * The key two titles are compared by: Unicode NFKC, lower case, underscores as spaces (Wikipedia's URL
 * form `Grand_Canal` is the title `Grand Canal`), runs of whitespace as one space, trimmed.
 */
export function normalizeTitle(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/_/g, ' ').replace(/\s+/g, ' ').trim()
}

/**
 * The sentences of a paragraph. A sentence ends at `.`, `!` or `?` (optionally followed by a closing
 * quote or bracket) when whitespace and then an upper-case letter, a digit, or an opening quote or bracket
 * follow; the whitespace is dropped and each sentence keeps its own punctuation. ReAct split on ". " and
 * appended "."; this rule keeps "?" and "!" and does not split "e.g. the" (lower case follows), but it
 * does split after an abbreviation followed by a capital ("Mt. Orr"): corpus text should avoid those.
 * Paragraphs never share a sentence.
 */
export function splitSentences(paragraph: string): string[] {
  return paragraph
    .split(/(?<=[.!?]["'”’)\]]?)\s+(?=["'“‘([]?[\p{Lu}\p{N}])/u)
    .map((s) => s.trim())
    .filter(Boolean)
}

/** Words of a title or query for {@link similarTitles}: runs of letters or digits, lower-cased. */
function words(s: string): string[] {
  return normalizeTitle(s).match(/[\p{L}\p{N}]+/gu) ?? []
}
/** Words too common to make two titles similar. */
const STOPWORDS = new Set(['a', 'an', 'the', 'of', 'and', 'or', 'in', 'on', 'at', 'to', 'for', 'by', 'with', 'from'])

interface IndexedPage {
  title: string
  paragraphs: string[]
  sentences: string[]
  words: Set<string>
  position: number
}

/** A corpus ready for the environment: pages by normalised title, their sentences split once. */
export interface QaCorpus {
  pages: ReadonlyMap<string, IndexedPage>
  ordered: readonly IndexedPage[]
}

/** Index pages; two titles equal under {@link normalizeTitle} are refused (a Search could not choose). */
export function buildCorpus(pages: readonly QaPage[]): QaCorpus {
  if (pages.length > QA_LIMITS.maxPages) throw new QaDataError(`more than ${QA_LIMITS.maxPages} pages`)
  const map = new Map<string, IndexedPage>()
  const ordered: IndexedPage[] = []
  pages.forEach((raw, position) => {
    const p = qaPage.parse(raw)
    const key = normalizeTitle(p.title)
    const previous = map.get(key)
    if (previous) throw new QaDataError(`the titles "${previous.title}" and "${p.title}" are the same page`)
    const page: IndexedPage = {
      title: p.title,
      paragraphs: p.paragraphs,
      sentences: p.paragraphs.flatMap(splitSentences),
      words: new Set(words(p.title).filter((w) => !STOPWORDS.has(w))),
      position,
    }
    map.set(key, page)
    ordered.push(page)
  })
  return { pages: map, ordered }
}

/**
 * Up to `limit` titles similar to a query that matched none: those sharing at least one word (not a
 * stopword) with it, most shared words first, then fewer words in the title (the closer match), then
 * corpus order. Deterministic for a given corpus.
 */
export function similarTitles(corpus: QaCorpus, query: string, limit = 5): string[] {
  const q = new Set(words(query).filter((w) => !STOPWORDS.has(w)))
  if (q.size === 0) return []
  const scored: { page: IndexedPage; shared: number }[] = []
  for (const page of corpus.ordered) {
    let shared = 0
    for (const w of q) if (page.words.has(w)) shared++
    if (shared > 0) scored.push({ page, shared })
  }
  scored.sort(
    (a, b) => b.shared - a.shared || a.page.words.size - b.page.words.size || a.page.position - b.page.position,
  )
  return scored.slice(0, limit).map((s) => s.page.title)
}

/** A string as Python's repr() writes it (ReAct printed the Similar list as a Python list). */
export function pythonRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  const body = s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote
}

export type QaAction =
  | { kind: 'search'; arg: string }
  | { kind: 'lookup'; arg: string }
  | { kind: 'finish'; arg: string }
  | { kind: 'invalid'; text: string }

/** Parse one action string (see the header for the rules). */
export function parseQaAction(action: string): QaAction {
  const text = action.trim()
  if (text.length > QA_LIMITS.maxActionChars) return { kind: 'invalid', text }
  const m = /^(search|lookup|finish)\[([\s\S]*)\]$/i.exec(text)
  if (!m) return { kind: 'invalid', text }
  const kind = (m[1] as string).toLowerCase() as 'search' | 'lookup' | 'finish'
  const arg = (m[2] as string).trim()
  if (!arg && kind !== 'finish') return { kind: 'invalid', text }
  return { kind, arg }
}

/** The environment's state after some actions: plain data (JSON), so it can be stored or compared. */
export interface QaState {
  /** Title of the open page, or null before the first successful Search. */
  page: string | null
  /** The current lookup: its keyword (as compared) and how many results were shown. */
  lookup: { keyword: string; shown: number } | null
  /** Set by Finish. */
  finished: { answer: string } | null
}

export const QA_INITIAL_STATE: QaState = { page: null, lookup: null, finished: null }
export const NO_PAGE_OPEN = 'No page is open: use Search[entity] first.'
export const NO_MORE_RESULTS = 'No more results.'
export const EPISODE_OVER = 'The episode has finished; no more actions are taken.'

export interface QaEnvOptions {
  /** The reward Finish shows, from the answer (e.g. EM or F1 against the gold answer); omitted: no number. */
  reward?: (answer: string) => number
  /** Show the first N sentences of the page on a hit (ReAct: 5) instead of its first paragraph. */
  searchSentences?: number
}

export interface QaStep {
  state: QaState
  observation: string
  done: boolean
  action: QaAction
}

function invalid(text: string): string {
  const shown =
    text.length > QA_LIMITS.maxActionChars
      ? `${text.slice(0, 200)}… (longer than ${QA_LIMITS.maxActionChars} characters)`
      : text
  return `Invalid action: ${shown.charAt(0).toLowerCase()}${shown.slice(1)}`
}

const lookupKey = (k: string) => k.trim().replace(/\s+/g, ' ').toLowerCase()

/** One action from `state` (not changed: a new state is returned). */
export function stepQa(corpus: QaCorpus, state: QaState, action: string, options: QaEnvOptions = {}): QaStep {
  const parsed = parseQaAction(action)
  if (state.finished) return { state, observation: EPISODE_OVER, done: true, action: parsed }
  switch (parsed.kind) {
    case 'invalid':
      return { state, observation: invalid(parsed.text), done: false, action: parsed }
    case 'search': {
      const page = corpus.pages.get(normalizeTitle(parsed.arg))
      if (!page) {
        const similar = similarTitles(corpus, parsed.arg)
        const observation = `Could not find ${parsed.arg}. Similar: [${similar.map(pythonRepr).join(', ')}].`
        return { state, observation, done: false, action: parsed }
      }
      const n = options.searchSentences
      const observation = n && n > 0 ? page.sentences.slice(0, n).join(' ') : (page.paragraphs[0] as string)
      return { state: { page: page.title, lookup: null, finished: null }, observation, done: false, action: parsed }
    }
    case 'lookup': {
      const page = state.page === null ? undefined : corpus.pages.get(normalizeTitle(state.page))
      if (!page) return { state, observation: NO_PAGE_OPEN, done: false, action: parsed }
      const keyword = lookupKey(parsed.arg)
      const results = page.sentences.filter((s) => s.toLowerCase().includes(keyword))
      const shown = state.lookup?.keyword === keyword ? state.lookup.shown : 0
      const next: QaState = { ...state, lookup: { keyword, shown: Math.min(shown + 1, results.length) } }
      const observation =
        shown >= results.length ? NO_MORE_RESULTS : `(Result ${shown + 1} / ${results.length}) ${results[shown]}`
      return { state: next, observation, done: false, action: parsed }
    }
    case 'finish': {
      const r = options.reward?.(parsed.arg)
      const observation = r === undefined ? 'Episode finished.' : `Episode finished, reward = ${r}`
      return { state: { ...state, finished: { answer: parsed.arg } }, observation, done: true, action: parsed }
    }
  }
}

/** Every step of `actions` from the initial state: what a replayed log shows, step by step. */
export function replayQa(corpus: QaCorpus, actions: readonly string[], options: QaEnvOptions = {}): QaStep[] {
  const steps: QaStep[] = []
  let state = QA_INITIAL_STATE
  for (const a of actions) {
    const s = stepQa(corpus, state, a, options)
    steps.push(s)
    state = s.state
  }
  return steps
}

/** The state after `actions` (the initial state for none). */
export function qaStateAfter(corpus: QaCorpus, actions: readonly string[], options: QaEnvOptions = {}): QaState {
  return replayQa(corpus, actions, options).at(-1)?.state ?? QA_INITIAL_STATE
}
