import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { describeShared, sharedDir } from '../../../tests/support/shared'
import { truthful } from '../tests/support'
import { scoresJson } from './clemscore'
import { episodeOf, gameMaster, playGame, scorekeeping } from '.'
import {
  ClembenchError,
  fillInitialPrompt,
  fromClembenchInstance,
  type GeneratorSpec,
  generateClembenchInstances,
  generateInstances,
  generatorSpec,
  type PrivateSharedResources,
  parseInstancesFile,
  privateSharedResources,
  replayCase,
  slotValueOverlaps,
} from './clembench'

/** A hand-made clembench instance object (3 slots, 4 probing rounds; round 2 probes in another order). */
const raw = () => ({
  game_id: 3,
  tag: 'AGENT',
  slots: { when: 'May', to: 'Rome', from: 'Oslo' },
  initial_prompt: 'Hello.',
  request_order: ['to', 'from', 'when'],
  requests: { when: 1, to: 0, from: 0 },
  probes: {
    '0': { when: 0, to: 0, from: 0 },
    '1': { when: 1, to: 0, from: 1 },
    '2': { from: 0, when: 0, to: 1 },
    '3': { when: 0, to: 0, from: 0 },
  },
  lang: 'en',
})

/** Hand-made resources for that experiment, as files of a privateshared folder. */
const files = (prefix = 'resources/') => ({
  [`${prefix}en_words.json`]: JSON.stringify({
    ANSWER: 'ANSWER: ',
    ASIDE: 'ASIDE: ',
    ME: 'ME: ',
    PROBE: 'ME: {} Yes or no?',
    OK: 'Ok.',
    YES: 'yes',
    NO: 'no',
    tags: { trip: 'AGENT' },
  }),
  [`${prefix}texts/reprompts.json`]: JSON.stringify({ suffixes: ['', 'Again.'] }),
  [`${prefix}texts/trip/requests.json`]: JSON.stringify({
    when: ['When?', 'What date?'],
    to: ['Where to?'],
    from: ['Where from?'],
  }),
  [`${prefix}texts/trip/probing_questions.json`]: JSON.stringify({
    when: ['Knows when?', 'Heard the date?'],
    to: ['Knows where?', 'Heard the place?'],
    from: ['Knows the origin?', 'Heard the origin?'],
  }),
  [`${prefix}texts/trip/slot_values.json`]: JSON.stringify({
    when: ['May', 'June'],
    to: ['Rome', 'Paris', 'Lima'],
    from: ['Oslo', 'Bern'],
  }),
  [`${prefix}initial_prompts/trip_1.template`]:
    'You travel.\n\n$INSTANCE$\n\nQuestions start with $QUESTIONER$. Reply $ANSWER$<x>; to $ME$reply $ASIDE$<y>.',
  'README.md': 'ignored',
})

describe('one clembench instance → the protocol instance', () => {
  it('reads every order from the JSON key order and writes it as arrays', () => {
    const i = fromClembenchInstance(raw(), { experiment: 'trip' })
    expect(i.slots).toEqual([
      { name: 'when', value: 'May' },
      { name: 'to', value: 'Rome' },
      { name: 'from', value: 'Oslo' },
    ])
    expect(i.requestOrder).toEqual(['to', 'from', 'when'])
    expect(i.requests).toEqual([
      { slot: 'when', index: 1 },
      { slot: 'to', index: 0 },
      { slot: 'from', index: 0 },
    ])
    expect(i.probes.map((r) => r.map((p) => p.slot))).toEqual([
      ['when', 'to', 'from'],
      ['when', 'to', 'from'],
      ['from', 'when', 'to'], // round 2's own key order
      ['when', 'to', 'from'],
    ])
    expect(i).toMatchObject({ experiment: 'trip', gameId: 3, lang: 'en', tag: 'AGENT', initialPrompt: 'Hello.' })
    expect(i.reprompts).toBeUndefined()
    // the game asks round 2's probes in that order
    let s = scorekeeping.init({}, i)
    const asked: string[] = []
    while (true) {
      const a = scorekeeping.next(s)
      if (a.done) break
      if (a.kind === 'probe' && a.round === 2) asked.push(a.slot)
      s = scorekeeping.apply(
        s,
        a.seat === 'questioner'
          ? gameMaster(s, a)
          : a.kind === 'answer'
            ? { seq: a.j, sender: 'answerer', kind: 'answer', round: a.round, text: 'ANSWER: x' }
            : {
                seq: a.j,
                sender: 'answerer',
                kind: 'probe-answer',
                round: a.round,
                slot: a.slot,
                try: a.try,
                text: 'ASIDE: no',
              },
      )
    }
    expect(asked).toEqual(['from', 'when', 'to'])
  })

  it('fills the texts from the resources (paths with or without privateshared/)', () => {
    for (const prefix of ['resources/', 'privateshared/resources/', 'clembench-main\\privateshared\\resources\\']) {
      const resources = privateSharedResources(files(prefix))
      const i = fromClembenchInstance(raw(), { experiment: 'trip', resources })
      expect(i.requests.find((r) => r.slot === 'when')!.text).toBe('What date?') // requests.when[1]
      expect(i.probes[1]!.map((p) => p.question)).toEqual(['Heard the date?', 'Knows where?', 'Heard the origin?'])
      expect(i.reprompts).toEqual(['', 'Again.'])
      expect(i.words).toEqual({
        answer: 'ANSWER: ',
        aside: 'ASIDE: ',
        me: 'ME: ',
        probe: 'ME: {} Yes or no?',
        ok: 'Ok.',
        yes: 'yes',
        no: 'no',
      })
      const s = scorekeeping.init({}, i)
      const first = scorekeeping.next(s)
      if (first.done) throw new Error('done')
      expect(gameMaster(s, first).text).toBe('ME:  Knows when? Yes or no?')
    }
  })

  it.each<[string, (r: ReturnType<typeof raw>) => unknown, RegExp]>([
    [
      'a missing request variant',
      (r) => ({ ...r, requests: { to: 0, from: 0 } }),
      /requests has no variant for slot "when"/,
    ],
    ['a missing probing round', (r) => ({ ...r, probes: { ...r.probes, '3': undefined } }), /probes/],
    [
      'probing rounds out of order',
      (r) => ({ ...r, probes: { '0': r.probes['0'], '1': r.probes['1'], '3': r.probes['3'], '4': r.probes['2'] } }),
      /rounds "0" … "3"/,
    ],
    [
      'a request order that misses a slot',
      (r) => ({ ...r, request_order: ['to', 'from'] }),
      /requestOrder must name every slot once/,
    ],
    [
      'a probe of an unknown slot',
      (r) => ({ ...r, probes: { ...r.probes, '1': { when: 0, to: 0, where: 0 } } }),
      /Probing round 1/,
    ],
    ['whole-number slot names', (r) => ({ ...r, slots: { '1': 'a', '0': 'b' } }), /whole numbers \(0, 1\)/],
    ['no game_id', (r) => ({ ...r, game_id: undefined }), /game_id/],
    ['a negative index', (r) => ({ ...r, requests: { ...r.requests, to: -1 } }), /requests\.to/],
  ])('refuses %s, naming the experiment and game_id', (_, change, error) => {
    const attempt = () => fromClembenchInstance(change(raw()), { experiment: 'trip' })
    expect(attempt).toThrow(ClembenchError)
    expect(attempt).toThrow(/^experiment trip(, game_id 3)?: /)
    expect(attempt).toThrow(error)
  })

  it('refuses a variant the resources do not have', () => {
    const resources = privateSharedResources(files())
    const r = { ...raw(), probes: { ...raw().probes, '2': { from: 5, when: 0, to: 1 } } }
    expect(() => fromClembenchInstance(r, { experiment: 'trip', resources })).toThrow(
      'experiment trip, game_id 3: probing_questions.json has no variant 5 for slot "from".',
    )
    expect(() => fromClembenchInstance(raw(), { experiment: 'other', resources })).toThrow(
      /no texts for experiment "other"/,
    )
  })

  it('a bad resource file is named', () => {
    expect(() => privateSharedResources({ 'privateshared/resources/texts/reprompts.json': '{"suffixes": 3}' })).toThrow(
      /privateshared\/resources\/texts\/reprompts\.json: suffixes/,
    )
    expect(() => privateSharedResources({ 'resources/en_words.json': '{' })).toThrow(/en_words\.json is not JSON/)
  })
})

describe('an instances file', () => {
  it('lists every instance that does not fit', () => {
    const file = JSON.stringify({
      experiments: [
        { name: 'trip', game_instances: [raw(), { ...raw(), game_id: 4, request_order: [] }] },
        { name: 'other', game_instances: [{ game_id: 0 }] },
      ],
    })
    expect(() => parseInstancesFile(file)).toThrow(
      /^2 instance\(s\) do not fit:\nexperiment trip, game_id 4: .*\nexperiment other, game_id 0: /,
    )
    expect(() => parseInstancesFile('{"experiments": {}}')).toThrow(/the instances file: experiments/)
    const ok = parseInstancesFile(JSON.stringify({ experiments: [{ name: 'trip', game_instances: [raw()] }] }), files())
    expect(ok.experiments[0]!.instances[0]!.requests[0]!.text).toBe('What date?')
  })
})

describe('the generator', () => {
  const spec = (): GeneratorSpec => generatorSpec(privateSharedResources(files()), 'trip', { what: 'Trip' })

  it('fills $INSTANCE$ with the WHAT line and SLOT: value lines, and the tags and words', () => {
    expect(
      fillInitialPrompt(spec(), [
        ['when', 'May'],
        ['to', 'Rome'],
        ['from', 'Oslo'],
      ]),
    ).toBe(
      'You travel.\n\nWHAT: Trip\nWHEN: May\nTO: Rome\nFROM: Oslo\n\nQuestions start with AGENT. Reply ANSWER: <x>; to ME: reply ASIDE: <y>.',
    )
  })

  it('draws values, a request order and variants from a seed; the same seed gives the same instances', () => {
    const a = generateClembenchInstances(spec(), { count: 20, seed: 7 })
    expect(a).toEqual(generateClembenchInstances(spec(), { count: 20, seed: 7 }))
    expect(a).not.toEqual(generateClembenchInstances(spec(), { count: 20, seed: 8 }))
    expect(a.map((g) => g.game_id)).toEqual([...Array(20).keys()])
    for (const g of a) {
      expect(Object.keys(g.slots)).toEqual(['when', 'to', 'from'])
      expect(['May', 'June']).toContain(g.slots.when)
      expect(['Rome', 'Paris', 'Lima']).toContain(g.slots.to)
      expect([...g.request_order].sort()).toEqual(['from', 'to', 'when'])
      expect(Object.keys(g.probes)).toEqual(['0', '1', '2', '3'])
      expect(g.initial_prompt).toBe(fillInitialPrompt(spec(), Object.entries(g.slots)))
      expect(g.requests.when).toBeLessThan(2)
    }
    // over 20 draws every value and more than one request order turn up
    expect(new Set(a.map((g) => g.slots.to)).size).toBe(3)
    expect(new Set(a.map((g) => g.request_order.join())).size).toBeGreaterThan(1)
    // and they are games: a perfect answerer scores 100
    const [inst] = generateInstances(privateSharedResources(files()), 'trip', { count: 1, seed: 7, what: 'Trip' })
    expect(scoresJson(episodeOf(playGame(inst!, truthful)))['episode scores']['Main Score']).toBe(100)
  })

  it('refuses value lists where one value contains another, naming the pair', () => {
    const s = spec()
    s.slotValues = [
      { slot: 'class', values: ['First', 'Economy'] },
      { slot: 'when', values: ['Next month, first week', 'May'] },
    ]
    s.requests = { class: ['Which class?'], when: ['When?'] }
    s.probingQuestions = { class: ['Knows the class?'], when: ['Knows when?'] }
    expect(() => generateClembenchInstances(s)).toThrow(
      'experiment trip: the slot value "First" (class) is contained in "Next month, first week" of when; slot filling could not tell them apart.',
    )
    // checkvalues.py compares case-sensitively and lets this pair through
    expect(slotValueOverlaps(s.slotValues, { ignoreCase: false })).toEqual([])
    expect(generateClembenchInstances(s, { ignoreCase: false, count: 1 })).toHaveLength(1)
    s.slotValues = [
      { slot: 'a', values: ['Rome'] },
      { slot: 'b', values: ['Rome'] },
    ]
    expect(() => generateClembenchInstances(s, { ignoreCase: false })).toThrow(/"Rome" \(a\) is also a value of b/)
  })
})

describe('a scripted replay (parley scorekeeping replay)', () => {
  const perfect = () => ({
    experiment: 'trip',
    game_id: 3,
    instance: raw(),
    // request order to, from, when
    slot_answers: ['ANSWER: Rome', 'ANSWER: Oslo', 'ANSWER: May'],
    // turns: when 2, to 0, from 1 (slots' key order when, to, from)
    probe_answers: [
      [['ASIDE: no'], ['ASIDE: no'], ['ASIDE: no']],
      [['ASIDE: no'], ['ASIDE: yes'], ['ASIDE: no']],
      [['ASIDE: no'], ['ASIDE: yes'], ['ASIDE: yes']],
      [['ASIDE: yes'], ['ASIDE: yes'], ['ASIDE: yes']],
    ],
  })

  it('plays the script and scores it', () => {
    const { scores } = replayCase(perfect())
    expect(scores['episode scores']).toMatchObject({ 'Main Score': 100, Aborted: 0, 'Request Count': 3 * 4 + 3 })
  })

  it('tries in order, and nothing is needed after an abort', () => {
    const c = perfect()
    c.probe_answers[1]![2] = ['ASIDE: maybe', 'ASIDE: No.'] // "from" in round 1: valid on try 2
    c.slot_answers[1] = 'Oslo' // round 2 answer without the tag: the game ends there
    const { scores, state } = replayCase(c)
    expect(scorekeeping.next(state)).toEqual({ done: true, reason: 'aborted-answer' })
    expect(scores['episode scores']).toMatchObject({ 'Main Score': null, 'Violated Request Count': 2 })
  })

  it.each<[string, (c: ReturnType<typeof perfect>) => unknown, RegExp]>([
    [
      'a missing answer',
      (c) => ({ ...c, slot_answers: ['ANSWER: Rome'] }),
      /slot_answers\[1\] is missing: .*round 2 \(slot "from"\)/,
    ],
    [
      'a missing try',
      (c) => ({ ...c, probe_answers: [c.probe_answers[0], [['ASIDE: no'], ['ASIDE: ?']]] }),
      /probe_answers\[1\]\[1\]\[1\] is missing: the game asks for try 2 of the probe of "to" in probing round 1/,
    ],
    ['a game_id that is not the instance’s', (c) => ({ ...c, game_id: 4 }), /game_id is 4 but the instance says 3/],
    ['answers that are not strings', (c) => ({ ...c, slot_answers: [1] }), /slot_answers\.0/],
    ['no instance', (c) => ({ ...c, instance: undefined }), /instance/],
  ])('refuses %s', (_, change, error) => {
    expect(() => replayCase(change(perfect()))).toThrow(error)
  })
})

// ---- the released clembench data (../shared, never copied into the project) ----

const DATA = 'datasets/clembench-privateshared'

/** Every file under the data folder, keyed by its path inside it ("resources/…", "in/…"). */
function releasedFiles(prefix = ''): Record<string, string> {
  const root = sharedDir(DATA)
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else out[prefix + path.relative(root, p).split(path.sep).join('/')] = readFileSync(p, 'utf8')
    }
  }
  walk(root)
  return out
}

describeShared(
  'the released clembench privateshared instances',
  () => {
    // read in beforeAll: a skipped block still runs its body to collect the tests
    let all: Record<string, string> = {}
    let resources: PrivateSharedResources
    beforeAll(() => {
      all = releasedFiles()
      resources = privateSharedResources(releasedFiles('privateshared/'))
    })
    const read = (f: string) => all[`in/${f}`]!

    it('instances.json: 5 experiments × 10 instances with 5, 5, 5, 15 and 10 slots, prompts as in the file', () => {
      const parsed = parseInstancesFile(read('instances.json'), resources)
      const rawFile = JSON.parse(read('instances.json'))
      expect(parsed.experiments.map((e) => [e.name, e.instances.length, e.instances[0]!.slots.length])).toEqual([
        ['travel-booking', 10, 5],
        ['job-interview', 10, 5],
        ['restaurant', 10, 5],
        ['things-places', 10, 15],
        ['letter-number', 10, 10],
      ])
      parsed.experiments.forEach((e, k) => {
        e.instances.forEach((inst, g) => {
          const r = rawFile.experiments[k].game_instances[g]
          expect(inst.gameId).toBe(g)
          expect(inst.initialPrompt).toBe(r.initial_prompt)
          expect(inst.slots.map((s) => s.name)).toEqual(Object.keys(r.slots))
          expect(inst.probes).toHaveLength(inst.slots.length + 1)
          // the generator's formatting gives the same prompt from the slots
          const spec = generatorSpec(resources, e.name)
          expect(fillInitialPrompt(spec, Object.entries(r.slots))).toBe(r.initial_prompt)
        })
      })
    })

    it('travel-booking game 0: the texts the answerer receives', () => {
      const inst = parseInstancesFile(read('instances.json'), resources).experiments[0]!.instances[0]!
      expect(inst.slots.map((s) => s.name)).toEqual(['from', 'to', 'by', 'class', 'when'])
      let s = scorekeeping.init({}, inst)
      const probe = scorekeeping.next(s)
      if (probe.done) throw new Error('done')
      expect(gameMaster(s, probe).text).toBe(
        'ME:  Does the travel agent already know your origin? Answer this question with yes or no and then stop.',
      )
      s = playGame(inst, truthful)
      expect(s.messages.find((m) => m.kind === 'request')!.text).toBe(
        'TRAVEL-AGENT: What is the destination of your trip?',
      )
    })

    it.each([
      ['instances_v0.9.json', ['travel-booking', 'job-interview']],
      ['instances_v0.9extended.json', ['travel-booking', 'job-interview', 'restaurant']],
      ['instances_v1.0.json', ['travel-booking', 'job-interview', 'restaurant', 'things-places', 'letter-number']],
      ['instances_v1.6.json', ['travel-booking', 'job-interview', 'restaurant', 'things-places', 'letter-number']],
    ])('%s parses as it is', (file, names) => {
      const parsed = parseInstancesFile(read(file), resources)
      expect(parsed.experiments.map((e) => e.name)).toEqual(names)
      for (const e of parsed.experiments) {
        expect(e.instances).toHaveLength(10)
        for (const i of e.instances) expect(i.lang).toBe('en') // v0.9 and v1.0 have no lang key
      }
    })

    it('a perfect answerer scores 100 on things-places (15 slots; middle round 7)', () => {
      const inst = parseInstancesFile(read('instances.json'), resources).experiments[3]!.instances[0]!
      const e = scoresJson(episodeOf(playGame(inst, truthful)))['episode scores']
      expect(e).toMatchObject({ 'Middle-Accuracy': 1, 'Main Score': 100, 'Request Count': 16 * 15 + 15 })
    })

    it('slot values: only travel-booking has a pair, and only case-insensitively', () => {
      const overlaps = Object.fromEntries(
        Object.entries(resources.experiments).map(([name, t]) => [name, slotValueOverlaps(t.slotValues ?? [])]),
      )
      expect(overlaps['travel-booking']).toEqual([
        { value: 'First', slot: 'class', in: 'Next month, first week', inSlot: 'when' },
      ])
      for (const name of ['job-interview', 'restaurant', 'things-places', 'letter-number'])
        expect(overlaps[name]).toEqual([])
      for (const t of Object.values(resources.experiments))
        expect(slotValueOverlaps(t.slotValues ?? [], { ignoreCase: false })).toEqual([])
      expect(() => generateInstances(resources, 'travel-booking')).toThrow(/"First" \(class\) is contained in/)
      const gen = generateInstances(resources, 'letter-number', { seed: 1 })
      expect(gen).toHaveLength(10)
      expect(gen[0]!.initialPrompt).toContain('WHAT: Numbered letters\nA: ')
    })
  },
  DATA,
)
