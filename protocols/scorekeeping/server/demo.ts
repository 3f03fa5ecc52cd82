import { DEMO_LABEL, type DemoRequest } from '@/lib/llm/demo-model'
import { contentText, fnv1a } from '@/lib/llm/text'
import { CLEMBENCH_EN_WORDS, type ScorekeepingInstance } from '@/protocols/scorekeeping/core'
import {
  fromClembenchInstance,
  type GeneratorSpec,
  generateClembenchInstances,
} from '@/protocols/scorekeeping/core/clembench'

/**
 * The scorekeeping game as Parley ships it for the demo, and how the offline demo model plays the
 * answerer. The game ("clinic-visit") is written by us in clembench's shape (slots, request and probe
 * variants, an initial prompt template with the same placeholders); clembench's own instances and
 * texts are imported by the researcher (they are not redistributed with Parley).
 */
export const DEMO_GAME: GeneratorSpec = {
  experiment: 'clinic-visit',
  tag: 'RECEPTIONIST',
  what: 'Clinic appointment',
  slotValues: [
    { slot: 'day', values: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'] },
    { slot: 'time', values: ['at 8 am', 'at noon', 'at 4 pm', 'in the evening'] },
    { slot: 'doctor', values: ['Dr. Okafor', 'Dr. Lindqvist', 'Dr. Haddad', 'Dr. Moreau'] },
    { slot: 'reason', values: ['a sprained ankle', 'a persistent cough', 'a skin rash', 'a check-up'] },
    { slot: 'insurance', values: ['public insurance', 'private cover', 'self-paying'] },
  ],
  requests: {
    day: ['Which day would you like to come in?', 'What day suits you best?'],
    time: ['At what time would you like your appointment?', 'Which time of day works for you?'],
    doctor: ['Which doctor would you like to see?', 'Do you have a preferred doctor?'],
    reason: ['What is the reason for your visit?', 'What brings you to the clinic?'],
    insurance: ['How are you insured?', 'Which insurance do you have?'],
  },
  probingQuestions: {
    day: ['Does the receptionist know which day you want to come?', 'Have you told the receptionist the day?'],
    time: ['Does the receptionist know at what time you want to come?', 'Has the receptionist heard the time?'],
    doctor: ['Does the receptionist know which doctor you want?', 'Have you named the doctor to the receptionist?'],
    reason: ['Does the receptionist know why you are coming?', 'Have you told the receptionist the reason?'],
    insurance: ['Does the receptionist know your insurance?', 'Has the receptionist been told how you are insured?'],
  },
  template: [
    'You are a patient calling a clinic to book an appointment. These are the details you want:',
    '',
    '$INSTANCE$',
    '',
    'The receptionist does not know them yet. The receptionist will ask you questions, each starting with $QUESTIONER$. Reply to each in one short sentence that starts with "$ANSWER$".',
    'I will sometimes ask you side questions starting with "$ME$". Answer those with "$ASIDE$" followed by yes or no.',
    'Give short, direct answers and only the detail that was asked. Let us start.',
  ].join('\n'),
  words: CLEMBENCH_EN_WORDS,
}

/** Our reprompt suffixes (one per try of a probe). */
export const DEMO_REPROMPTS = [
  '',
  'Please answer with yes or no.',
  'Answer with yes or no only.',
  'Start your answer with ASIDE: and then yes or no.',
  'Only "ASIDE: yes" or "ASIDE: no" is accepted.',
]

/** The demo game's instances (deterministic). */
export function demoInstances(count = 6, seed = 7): ScorekeepingInstance[] {
  return generateClembenchInstances(DEMO_GAME, { count, seed }).map((raw) => {
    const inst = fromClembenchInstance(raw, { experiment: DEMO_GAME.experiment })
    const byIndex = (slot: string, list: Record<string, string[]>, i: number) => list[slot]?.[i]
    return {
      ...inst,
      initialPrompt: raw.initial_prompt,
      requests: inst.requests.map((r) => ({ ...r, text: byIndex(r.slot, DEMO_GAME.requests, r.index) })),
      probes: inst.probes.map((round) =>
        round.map((p) => ({ ...p, question: byIndex(p.slot, DEMO_GAME.probingQuestions, p.index) })),
      ),
      reprompts: DEMO_REPROMPTS,
    }
  })
}

/** The slot lines ("DAY: Monday") of an initial prompt. */
function slotsIn(prompt: string): Array<{ name: string; value: string }> {
  const at = prompt.indexOf('WHAT: ')
  if (at < 0) return []
  const out: Array<{ name: string; value: string }> = []
  for (const line of prompt.slice(at).split('\n').slice(1)) {
    const m = line.match(/^([A-Z][A-Z0-9 _-]*): (.+)$/)
    if (!m) break
    out.push({ name: (m[1] as string).toLowerCase(), value: (m[2] as string).trim() })
  }
  return out
}

/** The slot a question is about: its name (or a word of it) in the question, else undefined. */
function slotOf(question: string, slots: Array<{ name: string; value: string }>) {
  const q = question.toLowerCase()
  return (
    slots.find((s) => q.includes(s.name)) ??
    slots.find((s) => s.name.split(/[\s_-]+/).some((w) => w.length > 2 && q.includes(w)))
  )
}

/**
 * The demo answerer: answers a request with the value of the slot it names (or the next one it has
 * not given), and a side question with yes exactly when that slot's value is already in its answers.
 */
export function scorekeepingDemo(req: DemoRequest): string | undefined {
  const first = req.messages[0]
  if (first?.role !== 'user') return undefined
  const prompt = contentText(first.content)
  if (!prompt.includes('WHAT: ') || !/ASIDE/.test(prompt)) return undefined
  const slots = slotsIn(prompt)
  if (!slots.length) return undefined
  const last = contentText(req.messages.at(-1)?.content)
  const answers = req.messages
    .slice(2)
    .filter((m) => m.role === 'assistant')
    .map((m) => contentText(m.content).toLowerCase())
  const said = (value: string) => answers.some((a) => a.includes(value.toLowerCase()))
  if (/^\s*ME:/.test(last)) {
    const slot = slotOf(last, slots)
    const yes = slot ? said(slot.value) : fnv1a(last) % 2 === 0
    return `ASIDE: ${yes ? 'yes' : 'no'}`
  }
  const slot = slotOf(last, slots) ?? slots.find((s) => !said(s.value)) ?? slots[0]
  return `ANSWER: ${slot?.value ?? 'I am not sure'}. ${DEMO_LABEL.replace(/[[\]]/g, '')}`
}

/**
 * The demo game as a clembench game folder (in/instances.json and resources/), exactly the layout a
 * researcher uploads for clembench's own game: the seed imports it through the same path.
 */
export function demoGameFiles(count = 6, seed = 7): Record<string, string> {
  const w = CLEMBENCH_EN_WORDS
  const json = (v: unknown) => JSON.stringify(v, null, 2)
  const slotValues = Object.fromEntries(DEMO_GAME.slotValues.map((s) => [s.slot, s.values]))
  return {
    'in/instances.json': json({
      experiments: [
        { name: DEMO_GAME.experiment, game_instances: generateClembenchInstances(DEMO_GAME, { count, seed }) },
      ],
    }),
    'resources/en_words.json': json({
      ANSWER: w.answer,
      ASIDE: w.aside,
      ME: w.me,
      PROBE: w.probe,
      OK: w.ok,
      YES: w.yes,
      NO: w.no,
      // clembench's game master reads it (Words.dummy_prompt) for its programmatic questioner
      DUMMY_PROMPT: w.dummyPrompt,
      tags: { [DEMO_GAME.experiment]: DEMO_GAME.tag },
    }),
    'resources/texts/reprompts.json': json({ suffixes: DEMO_REPROMPTS }),
    [`resources/texts/${DEMO_GAME.experiment}/requests.json`]: json(DEMO_GAME.requests),
    [`resources/texts/${DEMO_GAME.experiment}/probing_questions.json`]: json(DEMO_GAME.probingQuestions),
    [`resources/texts/${DEMO_GAME.experiment}/slot_values.json`]: json(slotValues),
    [`resources/initial_prompts/${DEMO_GAME.experiment}_1.template`]: DEMO_GAME.template,
  }
}
