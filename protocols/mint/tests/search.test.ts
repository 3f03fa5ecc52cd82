import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import type { MintMessage } from '@/protocols/mint/core/protocol'
import { corpusPathOf } from '@/protocols/mint/server/corpus'
import { mintPlugin } from '@/protocols/mint/server/plugin'
import { sandboxStatus } from '@/protocols/mint/server/sandbox'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

/**
 * `wikipedia_search` for MINT's reasoning tasks (issue 26): a task set imported with its offline corpus
 * (the pages JSONL ReHAC's QA sets use), searched in the sandbox by an episode against the fake
 * OpenAI-compatible server; without a corpus the function says the run has none. Demo data written by us
 * (protocols/mint/demo/hotpot-tasks.jsonl and corpus.jsonl: invented places and people).
 */
const fake = useFakeLlm()
useBulkWorkers()

const status = await sandboxStatus()
if (!status.available) {
  if (process.env.PARLEY_MINT_SANDBOX_REQUIRED === '1') throw new Error(`sandbox unavailable: ${status.reason}`)
  console.warn(`MINT search tests that run the Python tool are skipped: ${status.reason}`)
}

const demo = (name: string, as = name) => new File([readFileSync(path.join(import.meta.dirname, '../demo', name))], as)

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher, [])
  const conn = await fakeConnection(study.id, fake())
  return { researcher, studyId: study.id, connectionId: conn.id }
}
type World = Awaited<ReturnType<typeof world>>

async function importTasks(w: World, name: string, dataset: string, corpus?: File) {
  return importAndWait(w.researcher, {
    studyId: w.studyId,
    kind: 'mint-tasks',
    name,
    dataset,
    file: demo('hotpot-tasks.jsonl', 'test_prompts.json'),
    ...(corpus ? { corpus } : {}),
  })
}

async function episode(w: World, datasetId: string) {
  const r = await execute(createRun, w.researcher, {
    studyId: w.studyId,
    protocol: 'mint',
    name: 'search',
    datasetId,
    sample: 1,
    seats: {
      agent: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } },
      feedback: { kind: 'program', program: 'no-feedback' },
    },
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  expect(await runHeadless(r.data.id)).toMatchObject({ done: 1, stalled: 0 })
  const session = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id } })
  const log = await db.protocolMessage
    .findMany({ where: { sessionId: session.id }, orderBy: { seq: 'asc' } })
    .then((ms) => ms.map((m) => m.body as unknown as MintMessage))
  return { sessionId: session.id, log }
}

const MUSEUM =
  'Page: Vellmar Tide Museum\nSummary: The Vellmar Tide Museum is a small maritime museum on the island of Vellmar. It was founded in 1912 by the lighthouse keeper Ansgar Dralle.'
const DRALLE =
  'Page: Ansgar Dralle\nSummary: Ansgar Dralle (1871–1948) was a lighthouse keeper on Vellmar and the founder of the Vellmar Tide Museum.'

describe('MINT reasoning tasks: wikipedia_search over an offline corpus', () => {
  it('imports a reasoning set with its corpus into every task; a code set refuses a corpus, a bad page is refused by line', async () => {
    const w = await world()
    const ok = await importTasks(w, 'hotpot', 'hotpotqa', demo('corpus.jsonl'))
    expect(ok).toMatchObject({ ok: true, data: { status: 'ready' } })
    const rows = await db.instance.findMany({ where: { dataset: { studyId: w.studyId } }, orderBy: { index: 'asc' } })
    expect(rows).toHaveLength(3)
    expect(rows[0]).toMatchObject({
      prediction: '1871',
      input: { id: '0', dataset: 'hotpotqa' },
      meta: { taskType: 'reasoning', corpusPages: 6 },
    })
    expect((rows[0]?.input as { pages?: unknown[] } | undefined)?.pages).toHaveLength(6)
    const code = await importTasks(w, 'mbpp', 'mbpp', demo('corpus.jsonl'))
    expect(code.ok && code.data.status === 'ready').toBe(false)
    expect(JSON.stringify(code)).toContain('the Python interpreter only')
    const bad = await importTasks(w, 'bad', 'hotpotqa', new File(['{"title": "A", "paragraphs": []}\n'], 'c.jsonl'))
    expect(bad.ok && bad.data.status === 'ready').toBe(false)
    expect(JSON.stringify(bad)).toContain('c.jsonl: line 1: paragraphs')
    // The set-up form learns which task sets have a corpus.
    const setup = await mintPlugin.setup()
    const extra = (await setup.formData?.(w.researcher, w.studyId)) as { taskSets: Record<string, unknown> }
    const ds = await db.dataset.findFirstOrThrow({ where: { studyId: w.studyId, name: 'hotpot' } })
    expect(extra.taskSets[ds.id]).toEqual({ taskType: 'reasoning', corpusPages: 6 })
  })

  it.skipIf(!status.available)(
    'a HotpotQA-style episode searches twice, reads the pages in the authors’ format and solves the task',
    async () => {
      const w = await world()
      const imported = await importTasks(w, 'hotpot', 'hotpotqa', demo('corpus.jsonl'))
      if (!imported.ok) throw new Error(imported.error)
      const ds = await db.dataset.findFirstOrThrow({ where: { studyId: w.studyId, name: 'hotpot' } })
      fake().reset()
      fake().setScript([
        {
          match: { model: 'gen', contains: "print(wikipedia_search('Ansgar Dralle'))" },
          replies: [{ text: '<thought> He was born in 1871. </thought>\nThe answer is <solution> 1871 </solution>.' }],
        },
        {
          match: { model: 'gen', contains: 'founded in 1912 by the lighthouse keeper Ansgar Dralle' },
          replies: [
            {
              text: "<thought> The founder is Ansgar Dralle; his page gives his birth year. </thought>\n<execute> print(wikipedia_search('Ansgar Dralle')) </execute>",
            },
          ],
        },
        {
          match: { model: 'gen' },
          replies: [
            {
              text: "<thought> First, who founded the museum. </thought>\n<execute> print(wikipedia_search('Vellmar Tide Museum')) </execute>",
            },
          ],
        },
      ] as FakeRule[])
      const { sessionId, log } = await episode(w, ds.id)
      expect(log.map((m) => m.sender)).toEqual(['agent', 'tool', 'agent', 'tool', 'agent', 'env'])
      // The exact title first, then the page that names it; summaries are the first paragraphs.
      expect(log[1]).toMatchObject({ sender: 'tool', output: `${MUSEUM}\n\n${DRALLE}\n` })
      expect(log[3]).toMatchObject({ sender: 'tool', output: `${DRALLE}\n\n${MUSEUM}\n` })
      expect(log[5]).toMatchObject({ sender: 'env', correct: true })
      // The model read the observation as the paper's history shows it.
      const agent = fake().requests.filter((r) => r.path.endsWith('/chat/completions') && r.model === 'gen')
      expect(JSON.stringify(agent[1]?.body)).toContain(JSON.stringify(`Observation:\n${MUSEUM}`).slice(1, -1))
      // The recorded program input names the corpus by its content hash, never a path of the machine.
      const runs = await db.programRun.findMany({ where: { sessionId }, orderBy: { seq: 'asc' } })
      expect(runs).toHaveLength(2)
      const input = runs[0]?.input as { corpus: string; code: string }
      expect(input).toEqual({
        cells: [],
        code: "print(wikipedia_search('Vellmar Tide Museum'))",
        corpus: expect.any(String),
      })
      expect(JSON.stringify(runs.map((r) => r.input))).not.toContain('/')
      expect(readFileSync(corpusPathOf(input.corpus), 'utf8')).toContain('"title":"Kessin"')
    },
  )

  it.skipIf(!status.available)(
    'a reasoning run without a corpus: the call says there is no corpus, not a NameError',
    async () => {
      const w = await world()
      const imported = await importTasks(w, 'hotpot bare', 'hotpotqa')
      if (!imported.ok) throw new Error(imported.error)
      const ds = await db.dataset.findFirstOrThrow({ where: { studyId: w.studyId, name: 'hotpot bare' } })
      fake().reset()
      fake().setScript([
        {
          match: { model: 'gen', contains: 'no offline corpus' },
          replies: [{ text: '<thought> I cannot search. </thought>\n<solution> unknown </solution>' }],
        },
        {
          match: { model: 'gen' },
          replies: [
            {
              text: "<thought> Search. </thought>\n<execute> print(wikipedia_search('Vellmar Tide Museum')) </execute>",
            },
          ],
        },
      ] as FakeRule[])
      const { log } = await episode(w, ds.id)
      expect(log[1]).toMatchObject({
        sender: 'tool',
        output:
          'wikipedia_search is not available in this run: it has no offline corpus, so there is nothing to search. Answer from what you know, or compute it.\n',
      })
      expect(log.at(-1)).toMatchObject({ sender: 'env', correct: false })
    },
  )
})
