import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { db, type DemoSeed } from '@/lib/server/sdk'

const QA_NAME = 'Demo tasks: Velmora questions (ReHAC QA)'
const SQL_NAME = 'Demo tasks: bookshop SQL (ReHAC SQL)'

/** The demo files written by us (protocols/rehac/demo), read from the checkout. */
export function demoFile(name: string): Promise<string> {
  return readFile(path.join(process.cwd(), 'protocols/rehac/demo', name), 'utf8')
}

async function dataset(s: DemoSeed, name: string, kind: string, data: string, field: string, env: string) {
  const ds = await db.dataset.findFirst({ where: { studyId: s.studyId, name } })
  if (ds) return { id: ds.id, created: false }
  const id = await s.importDataset({
    kind,
    name,
    file: new File([await demoFile(data)], data),
    [field]: new File([await demoFile(env)], env),
    taskSet: kind === 'rehac-sql' ? 'shop' : 'velmora',
  })
  return { id, created: true }
}

/**
 * The demo questions of the collection run: a name question and two yes/no ones (one "no", one "yes").
 * The demo agent answers none of them right; the simulated human (the demo model told it simulates an
 * annotator) finishes each at once with the demo answer. Every episode therefore ends by step 2, and
 * whatever the tree decider's random draws (keyed by the run's id), each question's tree is the same
 * three paths: human (1), agent then agent (00), agent then human (01).
 */
export const COLLECTION_TASKS = ['vq01', 'vq09', 'vq12'] as const

/** The instances of the demo QA set with these task ids, in this order. */
async function demoInstances(datasetId: string, ids: readonly string[]): Promise<string[]> {
  const rows = await db.instance.findMany({ where: { datasetId }, select: { id: true, input: true } })
  const byTask = new Map(rows.map((r) => [(r.input as { id?: string }).id, r.id]))
  return ids.map((id) => {
    const row = byTask.get(id)
    if (!row) throw new Error(`The demo QA set has no task ${id}.`)
    return row
  })
}

/**
 * The demo QA and SQL task sets (imported as a researcher imports them), a finished run of the demo
 * model alone (agent-only), a finished collection (the tree decider and the coverage scheduler, the demo
 * model as agent and as simulated human, on COLLECTION_TASKS), and a live run whose human steps wait for the demo annotator, so the annotator's first sign-in lands on
 * real work. Its decider is the fixed schedule human, agent, human (then the agent): the random decider's
 * draws are keyed by the run's id, so with it some seeds let the agent finish every episode alone and the
 * annotator would find nothing to do.
 */
export async function seedRehacDemo(s: DemoSeed): Promise<string[]> {
  const created: string[] = []
  const qa = await dataset(s, QA_NAME, 'rehac-qa', 'questions.jsonl', 'corpus', 'corpus.jsonl')
  if (qa.created) created.push('dataset demo QA tasks')
  const sqlSet = await dataset(s, SQL_NAME, 'rehac-sql', 'sql-tasks.jsonl', 'schema', 'shop.sql')
  if (sqlSet.created) created.push('dataset demo SQL tasks')
  const model = { kind: 'llm', model: { connectionId: s.demoConnectionId } }
  const agentOnly = await s.run('rehac', {
    name: 'Demo ReHAC: the agent alone (demo model)',
    datasetId: qa.id,
    // Every seat is filled; the human (simulated by the demo model) is never asked by agent-only.
    seats: { decider: { kind: 'program', program: 'agent-only' }, agent: model, human: model },
  })
  if (agentOnly.created) {
    await s.play(agentOnly.id)
    created.push('run demo ReHAC (agent alone)')
  }
  const collection = await s.run('rehac', {
    name: 'Demo ReHAC: a collection tree (demo agent, simulated human)',
    datasetId: qa.id,
    instanceIds: await demoInstances(qa.id, COLLECTION_TASKS),
    seats: {
      decider: { kind: 'program', program: 'tree', params: { seed: 0 } },
      agent: model,
      // The demo model simulating an annotator (marked simulated on every step and page).
      human: model,
    },
    options: { collection: true },
  })
  if (collection.created) {
    await s.play(collection.id)
    created.push('run demo ReHAC (collection tree)')
  }
  const annotator = s.people['annotator@parley.local'] ?? s.people['expert@parley.local']
  const live = await s.run('rehac', {
    name: 'Demo ReHAC: agent and annotator (schedule h, a, h)',
    datasetId: qa.id,
    sample: 3,
    seats: {
      decider: { kind: 'program', program: 'schedule', params: { solvers: 'hah', after: 'agent' } },
      agent: model,
      human: annotator ? { kind: 'human', userId: annotator.userId } : { kind: 'human', claimable: true },
    },
  })
  if (live.created) {
    await s.play(live.id)
    created.push('run demo ReHAC (annotator)')
  }
  return created
}
