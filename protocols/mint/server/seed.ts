import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { db, type DemoSeed } from '@/lib/server/sdk'
import { INSTALL_HINT, sandboxStatus } from '@/protocols/mint/server/sandbox'

const TASKS_NAME = 'Demo tasks: word problems (MINT, GSM8K-style)'
const QUESTIONS_NAME = 'Demo tasks: multi-hop questions with their corpus (MINT, HotpotQA-style)'

/**
 * MINT's demo: the demo tasks (protocols/mint/demo/tasks.jsonl, GSM8K-style word problems written by
 * us, in the authors' test_prompts format) imported as a researcher imports them; a finished run of the
 * demo model without feedback, one with the demo model's textual feedback, and a live episode whose
 * feedback waits for expert@parley.local (its first turn played by the demo model). Beside them the
 * HotpotQA-style questions (demo/hotpot-tasks.jsonl) with their offline corpus (demo/corpus.jsonl, invented
 * places and people, written by us) and a run whose demo model answers them through wikipedia_search.
 * Without the Python tool (bubblewrap, python3 with numpy and sympy) it imports the tasks and says why it
 * runs nothing.
 */
export async function seedMintDemo(s: DemoSeed): Promise<string[]> {
  const created: string[] = []
  let ds = await db.dataset.findFirst({ where: { studyId: s.studyId, name: TASKS_NAME } })
  if (!ds) {
    const file = await readFile(path.join(process.cwd(), 'protocols/mint/demo/tasks.jsonl'), 'utf8')
    const id = await s.importDataset({
      kind: 'mint-tasks',
      name: TASKS_NAME,
      file: new File([file], 'test_prompts.json'),
      dataset: 'gsm8k',
    })
    ds = await db.dataset.findUniqueOrThrow({ where: { id } })
    created.push('dataset demo MINT tasks')
  }
  let questions = await db.dataset.findFirst({ where: { studyId: s.studyId, name: QUESTIONS_NAME } })
  if (!questions) {
    const read = (name: string) => readFile(path.join(process.cwd(), 'protocols/mint/demo', name), 'utf8')
    const id = await s.importDataset({
      kind: 'mint-tasks',
      name: QUESTIONS_NAME,
      file: new File([await read('hotpot-tasks.jsonl')], 'test_prompts.json'),
      corpus: new File([await read('corpus.jsonl')], 'corpus.jsonl'),
      dataset: 'hotpotqa',
    })
    questions = await db.dataset.findUniqueOrThrow({ where: { id } })
    created.push('dataset demo MINT questions with their corpus')
  }
  const status = await sandboxStatus()
  if (!status.available) {
    // Said once, with the tasks' import (a later seed has nothing new to say, and creates nothing).
    const why = `MINT demo runs skipped: the Python tool is unavailable (${status.reason}; ${INSTALL_HINT})`
    console.warn(why)
    if (created.length) created.push(why)
    return created
  }
  const model = { kind: 'llm', model: { connectionId: s.demoConnectionId } }
  const expert = s.people['expert@parley.local']
  // Each demo run, then played to its end (the expert's one waits for expert@'s feedback).
  const runs: Array<[string, Parameters<typeof s.run>[1]]> = [
    [
      'run demo MINT (no feedback)',
      {
        name: 'Demo MINT: k = 5, no feedback (demo model)',
        datasetId: ds.id,
        seats: { agent: model, feedback: { kind: 'program', program: 'no-feedback' } },
      },
    ],
    [
      'run demo MINT (LLM feedback)',
      {
        name: 'Demo MINT: k = 5, textual LLM feedback (demo model)',
        datasetId: ds.id,
        config: { feedback: { mode: 'textual', groundTruth: false, frequency: 'dense' } },
        seats: { agent: model, feedback: model },
      },
    ],
    [
      'run demo MINT (expert feedback)',
      {
        name: 'Demo MINT: the expert gives feedback',
        datasetId: ds.id,
        sample: 1,
        config: { feedback: { mode: 'textual', groundTruth: true, frequency: 'dense' } },
        seats: {
          agent: model,
          feedback: expert ? { kind: 'human', userId: expert.userId } : { kind: 'human', claimable: true },
        },
      },
    ],
    [
      'run demo MINT (wikipedia_search)',
      {
        name: 'Demo MINT: questions answered with wikipedia_search (demo model)',
        datasetId: questions.id,
        seats: { agent: model, feedback: { kind: 'program', program: 'no-feedback' } },
      },
    ],
  ]
  for (const [label, body] of runs) {
    const run = await s.run('mint', body)
    if (!run.created) continue
    await s.play(run.id)
    created.push(label)
  }
  return created
}
