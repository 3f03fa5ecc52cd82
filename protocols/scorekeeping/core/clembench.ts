/**
 * clembench "privateshared" files → scorekeeping instances (pure: strings in, objects out).
 *
 * - `privateSharedResources(files)`: the game's resource texts from a map of file paths to contents
 *   (as read from the `privateshared` folder or a zip of it; paths may start with `resources/`,
 *   `privateshared/resources/` or any folder before `resources/`).
 * - `fromClembenchInstance(raw, {experiment, resources})`: one clembench game instance object
 *   (`{game_id, tag, lang?, slots, request_order, requests, probes, initial_prompt}`) → the protocol's
 *   instance, every order read from the parsed JSON's key order (slots; each probes[r]) and written as
 *   arrays, the texts resolved from the resources when given (requests.json[slot][requests[slot]],
 *   probing_questions.json[slot][probes[r][slot]], the words of `<lang>_words.json`, reprompts.json).
 * - `parseInstancesFile(text, resources)`: instances.json and the older instances_v0.9.json,
 *   instances_v0.9extended.json, instances_v1.0.json (no `lang`: read as "en") and instances_v1.6.json.
 * - `generateClembenchInstances(spec, {count, seed})`: new instances as clembench's generator makes
 *   them (values drawn uniformly per slot, a random request order, uniform request and probe variants,
 *   the template filled with $INSTANCE$, $QUESTIONER$, $ANSWER$, $ASIDE$, $ME$), from a seeded PRNG
 *   (pure-rand's xoroshiro128+; the same seed gives the same instances, not Python's).
 * - `replayCase(json)`: `parley scorekeeping replay`, a scripted answerer through the protocol → scores.json.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import { z } from 'zod'
import { type ScoresJson, scoresJson } from './clemscore'
import {
  episodeOf,
  playGame,
  type ScorekeepingInstance,
  type ScorekeepingState,
  type ScorekeepingWords,
  scorekeepingInstance,
} from './protocol'
import { crossCopy } from '../../../lib/cross-copy'

/** A file or instance that does not fit; the message names the file, or the experiment and game_id. */
export class ClembenchError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ClembenchError'
  }
}
crossCopy(ClembenchError, 'ClembenchError')

/** The five experiments of the released game: the questioner's tag and the `WHAT:` line of the prompt. */
export const PRIVATESHARED_EXPERIMENTS = {
  'travel-booking': { tag: 'TRAVEL-AGENT', what: 'Travel' },
  'job-interview': { tag: 'RECRUITER', what: 'Job Application' },
  restaurant: { tag: 'WAITER', what: 'Restaurant' },
  'things-places': { tag: 'QUESTIONER', what: 'Things at places' },
  'letter-number': { tag: 'QUESTIONER', what: 'Numbered letters' },
} as const satisfies Record<string, { tag: string; what: string }>

/** Zod issues as one line: "path: message" (no path when the message starts by naming its field). */
const issuesText = (e: z.ZodError) =>
  e.issues
    .map((i) => {
      const at = i.path.join('.')
      return at && !i.message.startsWith(String(i.path[0])) ? `${at}: ${i.message}` : i.message
    })
    .join('; ')

// ---- resources ----

const variants = z.record(z.string(), z.array(z.string()))
const wordsFile = z.object({
  ANSWER: z.string(),
  ASIDE: z.string(),
  ME: z.string(),
  PROBE: z.string(),
  OK: z.string(),
  YES: z.string(),
  NO: z.string(),
  DUMMY_PROMPT: z.string().optional(),
  tags: z.record(z.string(), z.string()).optional(),
})
const repromptsFile = z.object({ suffixes: z.array(z.string()).min(1) })

export interface ExperimentTexts {
  /** requests.json: slot → request variants. */
  requests?: Record<string, string[]>
  /** probing_questions.json: slot → probe question variants. */
  probingQuestions?: Record<string, string[]>
  /** slot_values.json in its key order (the generator's slot order). */
  slotValues?: { slot: string; values: string[] }[]
  /** initial_prompts/<experiment>_<id>.template by id ("1"). */
  templates: Record<string, string>
}

export interface PrivateSharedResources {
  /** <lang>_words.json by language, as the protocol's words, with the experiment tags. */
  words: Record<string, ScorekeepingWords & { tags: Record<string, string> }>
  /** reprompts.json's suffixes. */
  reprompts?: string[]
  experiments: Record<string, ExperimentTexts>
}

/** "privateshared/resources/texts/x.json", "./resources/…", "a\\b\\resources\\…" → "resources/…" (else null). */
function resourcePath(p: string): string | null {
  const s = p.replace(/\\/g, '/')
  const m = /(?:^|\/)(resources\/.+)$/.exec(s)
  return m ? m[1]! : null
}

function parseJsonFile<T>(path: string, text: string, schema: z.ZodType<T>): T {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    throw new ClembenchError(`${path} is not JSON: ${(e as Error).message}`)
  }
  const r = schema.safeParse(json)
  if (!r.success) throw new ClembenchError(`${path}: ${issuesText(r.error)}`)
  return r.data
}

/**
 * The game's resource texts from `files` (path → content): `resources/<lang>_words.json`,
 * `resources/texts/reprompts.json`, `resources/texts/<experiment>/{requests,probing_questions,slot_values}.json`
 * and `resources/initial_prompts/<experiment>_<id>.template`. Other files are ignored.
 */
export function privateSharedResources(
  files: Record<string, string> | ReadonlyMap<string, string>,
): PrivateSharedResources {
  const entries = files instanceof Map ? [...files.entries()] : Object.entries(files)
  const out: PrivateSharedResources = { words: {}, experiments: {} }
  const experiment = (name: string) => {
    out.experiments[name] ??= { templates: {} }
    return out.experiments[name]
  }
  for (const [original, text] of entries) {
    const p = resourcePath(original)
    if (!p) continue
    const words = /^resources\/([^/]+)_words\.json$/.exec(p)
    const texts = /^resources\/texts\/([^/]+)\/(requests|probing_questions|slot_values)\.json$/.exec(p)
    const template = /^resources\/initial_prompts\/(.+)_([^_/]+)\.template$/.exec(p)
    if (words) {
      const w = parseJsonFile(original, text, wordsFile)
      out.words[words[1]!] = {
        answer: w.ANSWER,
        aside: w.ASIDE,
        me: w.ME,
        probe: w.PROBE,
        ok: w.OK,
        yes: w.YES,
        no: w.NO,
        ...(w.DUMMY_PROMPT === undefined ? {} : { dummyPrompt: w.DUMMY_PROMPT }),
        tags: w.tags ?? {},
      }
    } else if (p === 'resources/texts/reprompts.json')
      out.reprompts = parseJsonFile(original, text, repromptsFile).suffixes
    else if (texts) {
      const data = parseJsonFile(original, text, variants)
      const e = experiment(texts[1]!)
      if (texts[2] === 'requests') e.requests = data
      else if (texts[2] === 'probing_questions') e.probingQuestions = data
      else e.slotValues = Object.entries(data).map(([slot, values]) => ({ slot, values }))
    } else if (template) experiment(template[1]!).templates[template[2]!] = text
  }
  return out
}

// ---- clembench's instance format ----

const indexRecord = z.record(z.string(), z.number().int().min(0))

/** One game instance as clembench writes it (instances*.json). */
export const clembenchGameInstance = z.object({
  game_id: z.number().int(),
  tag: z.string().min(1),
  lang: z.string().optional(),
  slots: z.record(z.string(), z.string()),
  request_order: z.array(z.string()),
  requests: indexRecord,
  probes: z.record(z.string().regex(/^\d+$/, 'probing rounds are numbered "0", "1", …'), indexRecord),
  initial_prompt: z.string().optional(),
})
export type ClembenchGameInstance = z.output<typeof clembenchGameInstance>

export const clembenchInstancesFile = z.object({
  experiments: z.array(z.object({ name: z.string().min(1), game_instances: z.array(z.unknown()) })),
})

/** Keys JavaScript objects put first, in numeric order, whatever the JSON said ("0", "17"). */
const arrayIndexKey = (k: string) => /^(0|[1-9]\d*)$/.test(k) && Number(k) < 2 ** 32 - 1

function where(experiment: string | undefined, gameId: unknown) {
  const parts = [
    experiment === undefined ? null : `experiment ${experiment}`,
    typeof gameId === 'number' ? `game_id ${gameId}` : null,
  ].filter(Boolean)
  return parts.length ? parts.join(', ') : 'the instance'
}

export interface FromClembenchOptions {
  experiment?: string
  /** With resources, the texts (requests, probe questions, words, reprompts) are filled in. */
  resources?: PrivateSharedResources
}

/** One clembench game instance object → the protocol's instance (see the module comment). */
export function fromClembenchInstance(raw: unknown, opts: FromClembenchOptions = {}): ScorekeepingInstance {
  const { experiment, resources } = opts
  const at = where(experiment, (raw as { game_id?: unknown } | null)?.game_id)
  const fail = (message: string): never => {
    throw new ClembenchError(`${at}: ${message}`)
  }
  const parsed = clembenchGameInstance.safeParse(raw)
  if (!parsed.success) fail(issuesText(parsed.error))
  const inst = parsed.data!
  const names = Object.keys(inst.slots)
  const numeric = names.filter(arrayIndexKey)
  if (numeric.length)
    fail(
      `slot names that are whole numbers (${numeric.join(', ')}) lose their order in JavaScript objects; rename them.`,
    )
  const lang = inst.lang ?? 'en'
  const texts = resources ? resources.experiments[experiment ?? ''] : undefined
  if (resources && !texts) fail(`the resources have no texts for experiment "${experiment}".`)
  const words = resources ? resources.words[lang] : undefined
  if (resources && !words) fail(`the resources have no resources/${lang}_words.json.`)
  const variant = (kind: 'requests' | 'probingQuestions', file: string, slot: string, index: number) => {
    if (!texts) return undefined
    const list = texts[kind] ?? fail(`the resources have no resources/texts/${experiment}/${file}.`)
    const v = list[slot]?.[index]
    return v ?? fail(`${file} has no variant ${index} for slot "${slot}".`)
  }
  const n = names.length
  const roundKeys = Object.keys(inst.probes)
  const expected = Array.from({ length: n + 1 }, (_, r) => String(r))
  if (roundKeys.length !== n + 1 || roundKeys.some((k, i) => k !== expected[i]))
    fail(`probes must have the rounds "0" … "${n}" (one more than the ${n} slots), not ${JSON.stringify(roundKeys)}.`)
  const requests = names.map((slot) => {
    const index = inst.requests[slot]
    if (index === undefined) return fail(`requests has no variant for slot "${slot}".`)
    return { slot, index, text: variant('requests', 'requests.json', slot, index) }
  })
  const probes = expected.map((r) =>
    Object.entries(inst.probes[r]!).map(([slot, index]) => ({
      slot,
      index,
      question: variant('probingQuestions', 'probing_questions.json', slot, index),
    })),
  )
  const candidate = {
    experiment,
    gameId: inst.game_id,
    lang,
    tag: inst.tag,
    slots: Object.entries(inst.slots).map(([name, value]) => ({ name, value })),
    requestOrder: inst.request_order,
    requests,
    probes,
    initialPrompt: inst.initial_prompt,
    ...(words
      ? {
          words: {
            answer: words.answer,
            aside: words.aside,
            me: words.me,
            probe: words.probe,
            ok: words.ok,
            yes: words.yes,
            no: words.no,
            ...(words.dummyPrompt === undefined ? {} : { dummyPrompt: words.dummyPrompt }),
          },
        }
      : {}),
    reprompts: resources
      ? (resources.reprompts ?? fail('the resources have no resources/texts/reprompts.json.'))
      : undefined,
  }
  const checked = scorekeepingInstance.safeParse(candidate)
  if (!checked.success) fail(issuesText(checked.error))
  return checked.data!
}

export interface ParsedInstancesFile {
  experiments: { name: string; instances: ScorekeepingInstance[] }[]
}

/**
 * A clembench instances file (any version) → protocol instances per experiment. Every instance is
 * checked; the error lists the first ten problems, each naming its experiment and game_id.
 */
export function parseInstancesFile(
  text: string,
  resources?: PrivateSharedResources | Record<string, string>,
): ParsedInstancesFile {
  const res =
    resources === undefined || isResources(resources)
      ? resources
      : privateSharedResources(resources as Record<string, string>)
  const file = parseJsonFile('the instances file', text, clembenchInstancesFile)
  const problems: string[] = []
  const experiments = file.experiments.map((e) => ({
    name: e.name,
    instances: e.game_instances.flatMap((raw) => {
      try {
        return [fromClembenchInstance(raw, { experiment: e.name, resources: res })]
      } catch (err) {
        if (!(err instanceof ClembenchError)) throw err
        problems.push(err.message)
        return []
      }
    }),
  }))
  if (problems.length)
    throw new ClembenchError(
      `${problems.length} instance(s) do not fit:\n${problems.slice(0, 10).join('\n')}${problems.length > 10 ? '\n…' : ''}`,
    )
  return { experiments }
}

function isResources(x: object): x is PrivateSharedResources {
  return 'words' in x && 'experiments' in x && typeof (x as PrivateSharedResources).experiments === 'object'
}

// ---- the generator ----

export interface GeneratorSpec {
  experiment: string
  /** The questioner's tag ("TRAVEL-AGENT"). */
  tag: string
  /** The `WHAT:` line's value ("Travel"). */
  what: string
  /** slot_values.json in slot order. */
  slotValues: { slot: string; values: string[] }[]
  requests: Record<string, string[]>
  probingQuestions: Record<string, string[]>
  /** The initial prompt template with $INSTANCE$, $QUESTIONER$, $ANSWER$, $ASIDE$, $ME$. */
  template: string
  words: Pick<ScorekeepingWords, 'answer' | 'aside' | 'me'>
  lang?: string
}

/** The generator's inputs for one experiment of the resources (template id "1", as clembench). */
export function generatorSpec(
  resources: PrivateSharedResources,
  experiment: string,
  opts: { templateId?: string; lang?: string; what?: string; tag?: string } = {},
): GeneratorSpec {
  const lang = opts.lang ?? 'en'
  const texts = resources.experiments[experiment]
  const words = resources.words[lang]
  const known = PRIVATESHARED_EXPERIMENTS[experiment as keyof typeof PRIVATESHARED_EXPERIMENTS]
  const missing = (what: string): never => {
    throw new ClembenchError(`experiment ${experiment}: the resources have no ${what}.`)
  }
  if (!texts) return missing('texts')
  if (!words) return missing(`resources/${lang}_words.json`)
  return {
    experiment,
    lang,
    tag: opts.tag ?? words.tags[experiment] ?? known?.tag ?? missing(`tag (${lang}_words.json "tags")`),
    what: opts.what ?? known?.what ?? missing('WHAT: value (pass `what`)'),
    slotValues: texts.slotValues ?? missing('slot_values.json'),
    requests: texts.requests ?? missing('requests.json'),
    probingQuestions: texts.probingQuestions ?? missing('probing_questions.json'),
    template: texts.templates[opts.templateId ?? '1'] ?? missing(`initial_prompts/${experiment}_1.template`),
    words,
  }
}

/**
 * Pairs of slot values where one contains the other (or both are equal), as clembench's
 * checkvalues.py reports them. With `ignoreCase` (the default) the test is case-insensitive, because
 * the game compares lower-cased text: "First" (class) is inside "Next month, first week" (when), which
 * checkvalues.py, comparing case-sensitively, lets through.
 */
export function slotValueOverlaps(
  slotValues: readonly { slot: string; values: readonly string[] }[],
  opts: { ignoreCase?: boolean } = {},
): { value: string; slot: string; in: string; inSlot: string }[] {
  const fold = opts.ignoreCase === false ? (s: string) => s : (s: string) => s.toLowerCase()
  const all = slotValues.flatMap(({ slot, values }) => values.map((value) => ({ slot, value })))
  const out: { value: string; slot: string; in: string; inSlot: string }[] = []
  all.forEach((a, i) => {
    all.forEach((b, k) => {
      if (i === k) return
      const same = fold(a.value) === fold(b.value)
      if (same ? i < k : fold(b.value).includes(fold(a.value)))
        out.push({ value: a.value, slot: a.slot, in: b.value, inSlot: b.slot })
    })
  })
  return out
}

/** Python's `s.replace(old, new)` (every occurrence, no patterns). */
const replaceAll = (s: string, old: string, by: string) => s.split(old).join(by)

/**
 * The answerer's initial prompt as clembench's generator fills it: `$INSTANCE$` becomes the line
 * "WHAT: <what>" and one "SLOT: value" line per slot (name upper-cased, leading and trailing line
 * breaks stripped), then $QUESTIONER$ (the tag), $ANSWER$, $ASIDE$ and $ME$ (the words), each replaced
 * everywhere it occurs.
 */
export function fillInitialPrompt(
  spec: Pick<GeneratorSpec, 'template' | 'what' | 'tag' | 'words'>,
  slots: readonly (readonly [string, string])[],
): string {
  let block = `WHAT: ${spec.what}\n`
  for (const [slot, value] of slots) block += `${slot.toUpperCase()}: ${value}\n`
  block = block.replace(/^\n+|\n+$/g, '')
  let prompt = replaceAll(spec.template, '$INSTANCE$', block)
  prompt = replaceAll(prompt, '$QUESTIONER$', spec.tag)
  prompt = replaceAll(prompt, '$ANSWER$', spec.words.answer)
  prompt = replaceAll(prompt, '$ASIDE$', spec.words.aside)
  return replaceAll(prompt, '$ME$', spec.words.me)
}

/**
 * `count` new game instances (game_id 0 … count − 1) in clembench's format, as its instance
 * generator makes them, from a seeded PRNG. Refuses value lists in which a value contains another
 * (see `slotValueOverlaps`), naming the pair.
 */
export function generateClembenchInstances(
  spec: GeneratorSpec,
  opts: { count?: number; seed?: number; ignoreCase?: boolean } = {},
): ClembenchGameInstance[] {
  const count = opts.count ?? 10
  const overlaps = slotValueOverlaps(spec.slotValues, { ignoreCase: opts.ignoreCase })
  if (overlaps.length) {
    const o = overlaps[0]!
    throw new ClembenchError(
      `experiment ${spec.experiment}: the slot value "${o.value}" (${o.slot}) is ${
        o.value === o.in ? 'also a value of' : `contained in "${o.in}" of`
      } ${o.inSlot}${overlaps.length > 1 ? ` (and ${overlaps.length - 1} more pairs)` : ''}; slot filling could not tell them apart.`,
    )
  }
  const slots = spec.slotValues.map((s) => s.slot)
  for (const { slot, values } of spec.slotValues) {
    if (!values.length) throw new ClembenchError(`experiment ${spec.experiment}: slot "${slot}" has no values.`)
    if (!spec.requests[slot]?.length)
      throw new ClembenchError(`experiment ${spec.experiment}: requests.json has no variants for slot "${slot}".`)
    if (!spec.probingQuestions[slot]?.length)
      throw new ClembenchError(
        `experiment ${spec.experiment}: probing_questions.json has no variants for slot "${slot}".`,
      )
  }
  const rng = xoroshiro128plus(opts.seed ?? 42)
  const pick = <T>(xs: readonly T[]): T => xs[uniformInt(rng, 0, xs.length - 1)]!
  const out: ClembenchGameInstance[] = []
  for (let gameId = 0; gameId < count; gameId++) {
    const values: Record<string, string> = {}
    for (const { slot, values: options } of spec.slotValues) values[slot] = pick(options)
    const order = [...slots]
    for (let i = order.length - 1; i > 0; i--) {
      const k = uniformInt(rng, 0, i)
      ;[order[i], order[k]] = [order[k]!, order[i]!]
    }
    const requests: Record<string, number> = {}
    for (const slot of slots) requests[slot] = uniformInt(rng, 0, spec.requests[slot]!.length - 1)
    const probes: Record<string, Record<string, number>> = {}
    for (let r = 0; r <= slots.length; r++) {
      probes[String(r)] = {}
      for (const slot of slots) probes[String(r)]![slot] = uniformInt(rng, 0, spec.probingQuestions[slot]!.length - 1)
    }
    out.push({
      game_id: gameId,
      tag: spec.tag,
      slots: values,
      initial_prompt: fillInitialPrompt(spec, Object.entries(values)),
      request_order: order,
      requests,
      probes,
      lang: spec.lang ?? 'en',
    })
  }
  return out
}

/** New protocol instances for one experiment of the resources (`generateClembenchInstances` + texts). */
export function generateInstances(
  resources: PrivateSharedResources,
  experiment: string,
  opts: { count?: number; seed?: number; ignoreCase?: boolean; templateId?: string; what?: string; tag?: string } = {},
): ScorekeepingInstance[] {
  return generateClembenchInstances(generatorSpec(resources, experiment, opts), opts).map((raw) =>
    fromClembenchInstance(raw, { experiment, resources }),
  )
}

// ---- `parley scorekeeping replay` ----

/**
 * A scripted game: `slot_answers[r − 1]` replies to the request of round r; `probe_answers[r][i]` lists
 * the successive replies (try 1, 2, …) to the probe of the i-th slot (the slots' key order) in probing
 * round r. Replies after the game ended are ignored.
 */
export const replayCaseSchema = z.object({
  experiment: z.string().min(1),
  game_id: z.number().int(),
  instance: z.record(z.string(), z.unknown()),
  slot_answers: z.array(z.string()),
  probe_answers: z.array(z.array(z.array(z.string()))),
})
export type ReplayCase = z.output<typeof replayCaseSchema>

/** Replays a scripted answerer through the protocol; returns the final state and clembench's scores.json. */
export function replayCase(json: unknown): { state: ScorekeepingState; scores: ScoresJson } {
  const parsed = replayCaseSchema.safeParse(json)
  if (!parsed.success) throw new ClembenchError(`The case does not fit: ${issuesText(parsed.error)}`)
  const c = parsed.data
  if (c.instance.game_id !== undefined && c.instance.game_id !== c.game_id)
    throw new ClembenchError(`game_id is ${c.game_id} but the instance says ${JSON.stringify(c.instance.game_id)}.`)
  const instance = fromClembenchInstance({ game_id: c.game_id, ...c.instance }, { experiment: c.experiment })
  const slotIndex = new Map(instance.slots.map((s, i) => [s.name, i]))
  const state = playGame(instance, (ask) => {
    if (ask.kind === 'answer') {
      const reply = c.slot_answers[ask.round - 1]
      if (reply === undefined)
        throw new ClembenchError(
          `slot_answers[${ask.round - 1}] is missing: the game asks for the answer to the request of round ${ask.round} (slot "${ask.slot}").`,
        )
      return reply
    }
    const i = slotIndex.get(ask.slot)!
    const reply = c.probe_answers[ask.round]?.[i]?.[ask.try - 1]
    if (reply === undefined)
      throw new ClembenchError(
        `probe_answers[${ask.round}][${i}][${ask.try - 1}] is missing: the game asks for try ${ask.try} of the probe of "${ask.slot}" in probing round ${ask.round}.`,
      )
    return reply
  })
  return { state, scores: scoresJson(episodeOf(state)) }
}
