import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { db, type DemoSeed } from '@/lib/server/sdk'
import { type LabelSchema, YES_NO_UNSURE } from '@/protocols/labelling/core'
import { importSessionsAsItems } from '@/protocols/labelling/server/session-import'

export const RELEVANCE_ITEMS = 'Demo items: query–document pairs (labelling)'
export const RELEVANCE_RUN = 'Demo labelling: relevance 0–2, three annotators per item'
export const LLM_RUN = 'Demo labelling: the LLM labeller (-DNA-, demo model)'
export const TRANSCRIPT_ITEMS = 'Demo items: this demo’s PXP and ReHAC sessions (transcripts)'
export const TRANSCRIPT_RUN = 'Demo labelling: judge the demo’s sessions'

/** The PXP and ReHAC demo runs whose finished sessions become transcript items (their seeds run first). */
export const TRANSCRIPT_SOURCES = [
  { protocol: 'pxp', name: 'Demo DRUG: simulated model vs the ground truth, R = 2' },
  { protocol: 'rehac', name: 'Demo ReHAC: the agent alone (demo model)' },
] as const
/** Of each source run, at most this many finished sessions (the first by repetition and position). */
export const TRANSCRIPTS_PER_RUN = 4

/** The three demo people in the relevance project's slots, and the items the annotator has done. */
export const LABELLERS = ['expert@parley.local', 'expert2@parley.local', 'annotator@parley.local'] as const
export const ANNOTATOR_DONE = 8

/**
 * The demo people's labels, written by us: both experts label every item, the annotator the first
 * ANNOTATOR_DONE (the rest wait in their My work). Everyone gives the gold grade except where this
 * table says otherwise (the item's index in demo/items.jsonl → grade), so those items disagree and
 * the adjudication page has work: on four of the partly relevant (gold 1) pages the second expert
 * grades differently, and on two of them someone else does too, so one item has three different grades.
 */
export const DEVIATIONS: Record<(typeof LABELLERS)[number], Record<number, number>> = {
  'expert@parley.local': { 11: 2 },
  'expert2@parley.local': { 1: 2, 6: 2, 11: 0, 16: 2 },
  'annotator@parley.local': { 6: 0 },
}

/** Judging a session of this demo: did it reach a right, well-supported result? */
export const TRANSCRIPT_SCHEMA: LabelSchema = {
  ...YES_NO_UNSURE,
  questions: [
    {
      ...(YES_NO_UNSURE.questions[0] as LabelSchema['questions'][number]),
      id: 'outcome',
      text: 'Did the session end in a right answer that its turns support?',
    },
  ],
  overall: 'outcome',
  guidelines:
    'Read the session turn by turn. Answer yes when its final answer is right and the turns before it support it, no when the answer is wrong or unsupported, unsure when you cannot tell. Say why in a sentence when you answer no.',
}

function demoFile(name: string): Promise<string> {
  return readFile(path.join(process.cwd(), 'protocols/labelling/demo', name), 'utf8')
}

/** The demo items' gold grade by item id, and their order in the file. */
async function demoItems(): Promise<Array<{ id: string; gold: number }>> {
  return (await demoFile('items.jsonl'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { id: string; gold: number })
}

/**
 * The people's labels of a run through the services a browser uses (`actAs`): for each (person, item)
 * not labelled by that person yet, a free session of the item (its slots by number) is claimed and
 * labelled. Resumable and idempotent: what is there already is skipped.
 */
async function label(
  s: DemoSeed,
  runId: string,
  plan: Array<{ email: string; itemId: string; input: Record<string, unknown> }>,
): Promise<number> {
  const sessions = await db.protocolSession.findMany({
    where: { runId },
    orderBy: [{ position: 'asc' }, { repetition: 'asc' }],
    select: {
      id: true,
      instance: true,
      people: { select: { userId: true } },
      messages: { select: { authorUserId: true } },
    },
  })
  const itemOf = (x: (typeof sessions)[number]) => String((x.instance as { id?: unknown } | null)?.id ?? '')
  let sent = 0
  for (const p of plan) {
    const person = s.people[p.email]
    if (!person) continue
    const ofItem = sessions.filter((x) => itemOf(x) === p.itemId)
    if (ofItem.some((x) => x.messages.some((m) => m.authorUserId === person.userId))) continue
    const free =
      ofItem.find((x) => x.people.some((q) => q.userId === person.userId) && x.messages.length === 0) ??
      ofItem.find((x) => x.messages.length === 0 && x.people.every((q) => q.userId === null))
    if (!free) continue
    await s.actAs(p.email, free.id, p.input)
    free.messages.push({ authorUserId: person.userId })
    free.people.push({ userId: person.userId })
    sent++
  }
  return sent
}

/**
 * Labelling's demo, written by us: the 20 query–document items (demo/items.jsonl, with gold) in a
 * project of three annotator slots per item (distinct people, filled item by item) where both demo
 * experts have labelled every item and the demo annotator the first eight (a few items disagree, for
 * the adjudication page; twelve wait for the annotator); the LLM labeller (the paper's -DNA- prompt on
 * the offline demo model) over the same items, finished; and a project over this demo's own PXP and
 * ReHAC sessions as transcripts, two slots per session, waiting for the annotator. It runs after the
 * PXP and ReHAC seeds (`after`). Idempotent.
 */
export async function seedLabellingDemo(s: DemoSeed): Promise<string[]> {
  const created: string[] = []
  const items = await demoItems()
  let datasetId = (await db.dataset.findFirst({ where: { studyId: s.studyId, name: RELEVANCE_ITEMS } }))?.id
  if (!datasetId) {
    datasetId = await s.importDataset({
      kind: 'labelling-items',
      name: RELEVANCE_ITEMS,
      file: new File([await demoFile('items.jsonl')], 'items.jsonl'),
    })
    created.push('dataset demo query–document items')
  }
  const people = await s.run('labelling', {
    name: RELEVANCE_RUN,
    datasetId,
    config: { preset: 'relevance-0-2' },
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: 3,
    distinctClaimants: true,
    fillFirst: 3,
  })
  if (people.created) {
    await s.play(people.id)
    created.push('run demo relevance (three annotators)')
  }
  const plan = LABELLERS.flatMap((email) =>
    items.flatMap((it, i) =>
      email === 'annotator@parley.local' && i >= ANNOTATOR_DONE
        ? []
        : [{ email, itemId: it.id, input: { answers: { O: String(DEVIATIONS[email][i] ?? it.gold) } } }],
    ),
  )
  const labelled = await label(s, people.id, plan)
  if (labelled) created.push(`${labelled} demo labels`)

  const llm = await s.run('labelling', {
    name: LLM_RUN,
    datasetId,
    config: { preset: 'relevance-0-2', labeller: { variant: '-DNA-' } },
    seats: { annotator: { kind: 'llm', model: { connectionId: s.demoConnectionId } } },
    repetitions: 1,
  })
  if (llm.created) {
    await s.play(llm.id)
    created.push('run demo LLM labeller')
  }

  let transcripts = (await db.dataset.findFirst({ where: { studyId: s.studyId, name: TRANSCRIPT_ITEMS } }))?.id
  if (!transcripts) {
    const sessionIds: string[] = []
    for (const src of TRANSCRIPT_SOURCES) {
      const run = await db.run.findFirst({ where: { studyId: s.studyId, protocol: src.protocol, name: src.name } })
      const done = run
        ? await db.protocolSession.findMany({
            where: { runId: run.id, status: 'done' },
            orderBy: [{ repetition: 'asc' }, { position: 'asc' }, { id: 'asc' }],
            select: { id: true },
            take: TRANSCRIPTS_PER_RUN,
          })
        : []
      sessionIds.push(...done.map((x) => x.id))
    }
    // Without the PXP and ReHAC demo (a registry without them), there is nothing to judge.
    if (sessionIds.length === 0) return created
    transcripts = (
      await importSessionsAsItems(s.researcher, { studyId: s.studyId, name: TRANSCRIPT_ITEMS, sessionIds })
    ).datasetId
    created.push('dataset demo transcripts')
  }
  const judge = await s.run('labelling', {
    name: TRANSCRIPT_RUN,
    datasetId: transcripts,
    config: { schema: TRANSCRIPT_SCHEMA },
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: 2,
    distinctClaimants: true,
    fillFirst: 2,
  })
  if (judge.created) {
    await s.play(judge.id)
    created.push('run demo transcripts')
  }
  return created
}
