import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { fnv1a } from '@/lib/llm/text'
import { db, sql } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { coverage } from '@/protocols/rehac/core/tree'
import type { RehacMessage } from '@/protocols/rehac/core/protocol'
import { rehacScript } from '@/protocols/rehac/fixture'
import { sqlSlug } from '@/protocols/rehac/server/agents'
import { endSqlReaders, sqlNames } from '@/protocols/rehac/server/sql-env'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()
useBulkWorkers()
afterAll(() => endSqlReaders())

const demo = (name: string) => new File([readFileSync(path.join(import.meta.dirname, '../demo', name))], name)

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher, [])
  const conn = await fakeConnection(study.id, fake())
  return { researcher, studyId: study.id, connectionId: conn.id }
}
const llm = (connectionId: string) => ({ kind: 'llm', model: { connectionId, model: 'gen' } })
const bodies = (sessionId: string) =>
  db.protocolMessage
    .findMany({ where: { sessionId }, orderBy: { seq: 'asc' } })
    .then((ms) => ms.map((m) => m.body as unknown as RehacMessage))

async function createRehacRun(w: Awaited<ReturnType<typeof world>>, input: Record<string, unknown>) {
  const r = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'rehac', name: 'r', ...input })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  return r.data.id
}

describe('ReHAC task sets, the SQL environment and the trajectory tree', () => {
  it('imports the demo QA set with its corpus; a question without its corpus is refused', async () => {
    const w = await world()
    const ok = await importAndWait(w.researcher, {
      studyId: w.studyId,
      kind: 'rehac-qa',
      name: 'qa',
      file: demo('questions.jsonl'),
      corpus: demo('corpus.jsonl'),
    })
    expect(ok).toMatchObject({ ok: true, data: { status: 'ready' } })
    const rows = await db.instance.findMany({ where: { dataset: { studyId: w.studyId } }, orderBy: { index: 'asc' } })
    expect(rows).toHaveLength(12)
    expect(rows[0]).toMatchObject({ prediction: 'Halvard Brenn', input: { id: 'vq01', kind: 'qa', taskSet: 'corpus' } })
    expect((rows[0]?.input as { pages?: unknown[] } | undefined)?.pages).toHaveLength(30)
    const missing = await importAndWait(w.researcher, {
      studyId: w.studyId,
      kind: 'rehac-qa',
      name: 'qa2',
      file: demo('questions.jsonl'),
    })
    expect(missing.ok && missing.data.status === 'ready').toBe(false)
  })

  it('a SQL episode: the statement runs read-only on the task set schema, a write is refused as the Observation', async () => {
    const w = await world()
    const imported = await importAndWait(w.researcher, {
      studyId: w.studyId,
      kind: 'rehac-sql',
      name: 'shop',
      file: demo('sql-tasks.jsonl'),
      schema: demo('shop.sql'),
    })
    if (!imported.ok) throw new Error(imported.error)
    // The schema is loaded on the episode's first SQL step (dropped here so that the load runs).
    const slug = sqlSlug(readFileSync(path.join(import.meta.dirname, '../demo/shop.sql'), 'utf8'), fnv1a)
    await sql().query(`DROP SCHEMA IF EXISTS ${sqlNames(slug).schema} CASCADE`)
    // Task shop01 (mystery titles): a write first, then the gold statement, which ends the episode.
    fake().setScript([
      {
        match: { model: 'gen', contains: 'Observation 1:' },
        replies: [{ text: "SELECT title FROM book WHERE genre = 'mystery'" }],
      },
      { match: { model: 'gen' }, replies: [{ text: 'Action 1: DROP TABLE book' }] },
    ])
    const runId = await createRehacRun(w, {
      datasetId: imported.data.id,
      sample: 1,
      seats: {
        decider: { kind: 'program', program: 'agent-only' },
        agent: llm(w.connectionId),
        human: llm(w.connectionId),
      },
    })
    expect(await runHeadless(runId)).toMatchObject({ done: 1, stalled: 0 })
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId } })
    const log = await bodies(s.id)
    const obs = log.filter((m) => m.kind === 'observation')
    expect(obs).toHaveLength(2)
    expect(obs[0]).toMatchObject({ finished: false })
    expect(obs[0]?.kind === 'observation' && obs[0].text).toMatch(/refused|read-only|permission denied/i)
    expect(obs[1]).toMatchObject({ finished: true })
    expect(obs[1]?.kind === 'observation' && obs[1].text).toMatch(/^\[\(/)
    const tables = await sql().query('SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1', [
      sqlNames(slug).schema,
    ])
    expect(tables.rows[0]?.n).toBeGreaterThan(0)
    const step = log.find((m) => m.kind === 'step')
    expect(step).toMatchObject({ thought: null, action: { type: 'sql', arg: 'DROP TABLE book' } })
  })

  it('a collection run forks until both branches of every reached prefix have an episode', async () => {
    const w = await world()
    const ds = await importAndWait(w.researcher, {
      studyId: w.studyId,
      kind: 'rehac-qa',
      name: 'qa',
      file: demo('questions.jsonl'),
      corpus: demo('corpus.jsonl'),
    })
    if (!ds.ok) throw new Error(ds.error)
    // Every episode ends at step 2 (search, then finish), whoever acts: the tree has 4 leaves.
    fake().setScript(rehacScript(0) as FakeRule[])
    const runId = await createRehacRun(w, {
      datasetId: ds.data.id,
      sample: 1,
      seats: {
        decider: { kind: 'program', program: 'tree', params: { seed: 3 } },
        agent: llm(w.connectionId),
        human: llm(w.connectionId),
      },
      options: { collection: true },
    })
    expect(await runHeadless(runId)).toMatchObject({ stalled: 0 })
    const sessions = await db.protocolSession.findMany({ where: { runId }, orderBy: { createdAt: 'asc' } })
    const paths: string[] = []
    for (const s of sessions) {
      expect(s.status).toBe('done')
      const log = await bodies(s.id)
      paths.push(
        log
          .filter((m) => m.kind === 'decide')
          .map((m) => (m.kind === 'decide' && m.solver === 'human' ? '1' : '0'))
          .join(''),
      )
      // A fork's key names its branch, which its path starts with.
      const branch = /\/([01]+)$/.exec(s.key)?.[1]
      if (branch) expect(paths.at(-1)?.startsWith(branch)).toBe(true)
    }
    expect([...paths].sort()).toEqual(['00', '01', '10', '11'])
    expect(coverage(paths)).toMatchObject({ covered: coverage(paths).states })
    expect((await db.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe('done')
  })

  it('a collection needs the tree decider', async () => {
    const w = await world()
    const ds = await importAndWait(w.researcher, {
      studyId: w.studyId,
      kind: 'rehac-qa',
      name: 'qa',
      file: demo('questions.jsonl'),
      corpus: demo('corpus.jsonl'),
    })
    if (!ds.ok) throw new Error(ds.error)
    const r = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'rehac',
      name: 'r',
      datasetId: ds.data.id,
      seats: {
        decider: { kind: 'program', program: 'random' },
        agent: llm(w.connectionId),
        human: llm(w.connectionId),
      },
      options: { collection: true },
    })
    expect(r).toMatchObject({ ok: false, status: 400, fieldErrors: { 'seats.decider': expect.any(Array) } })
  })
})
