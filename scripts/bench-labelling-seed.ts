/**
 * The labelling benches' worlds, in a bench database (call after `throwawayDatabase`): people and a
 * study in bulk SQL, a `labelling-items` dataset of N items with a gold grade (kept in the instance's
 * prediction, as the import and the fixture keep it), and a labelling run made by `runs.create` itself,
 * so its sessions and seats are the ones the plugin plans. `labelEverything` then writes one label per
 * session as a person's submitted turn leaves it (the message row `appendMessage` writes with the
 * plugin's projection, the session done, the seat held by its annotator) in three statements.
 */
import { randomUUID } from 'node:crypto'
import type { Actor } from '../lib/server/actor'

const PRESET = 'relevance-0-2' // one ordinal question O with the options 2, 1, 0

/** The gold grade of item i (0, 1, 2), and annotator k's (1-based) label of it: right ~70 % of the time. */
export const goldSql = (i: string) => `((${i} * 7 + ${i} / 5) % 3)`
const labelSql = (i: string, k: string) =>
  `CASE WHEN ((${i} * 2654435761::bigint + ${k} * 40503) % 100) < 70 THEN ${goldSql(i)} ELSE ((${i} + ${k}) % 3) END`

/**
 * A researcher (study admin) and `people` experts (study members who take part), all with `password`
 * (one hash), in one study. Returns the actors (the researcher acts in-process, the experts sign in).
 */
export async function labellingWorld(opts: { people: number; password: string; name: string }) {
  const { db } = await import('../lib/server/db')
  const { hashPassword } = await import('better-auth/crypto')
  const hash = await hashPassword(opts.password)
  const tag = Date.now().toString(36)
  const owner = { id: randomUUID(), email: `owner-${tag}@bench.local`, role: 'researcher' }
  const people = Array.from({ length: opts.people }, (_, i) => ({
    id: randomUUID(),
    email: `annotator-${i}-${tag}@bench.local`,
    role: 'expert',
  }))
  const users = [owner, ...people]
  await db.$executeRawUnsafe(
    `INSERT INTO "user" (id, email, name, role, "emailVerified", "createdAt", "updatedAt")
     SELECT id, email, email, role, true, now(), now() FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, email, role)`,
    users.map((u) => u.id),
    users.map((u) => u.email),
    users.map((u) => u.role),
  )
  await db.$executeRawUnsafe(
    `INSERT INTO account (id, "accountId", "providerId", "userId", password, "createdAt", "updatedAt")
     SELECT gen_random_uuid()::text, id, 'credential', id, $2, now(), now() FROM unnest($1::text[]) AS u(id)`,
    users.map((u) => u.id),
    hash,
  )
  const study = await db.study.create({ data: { name: opts.name, createdById: owner.id } })
  await db.$executeRawUnsafe(
    `INSERT INTO "StudyMember" ("studyId", "userId", role) SELECT $1, id, role FROM unnest($2::text[], $3::text[]) AS u(id, role)`,
    study.id,
    users.map((u) => u.id),
    users.map((u) => (u === owner ? 'admin' : 'expert')),
  )
  const researcher: Actor = { userId: owner.id, email: owner.email, name: owner.email, role: 'researcher', via: 'cli' }
  return { researcher, studyId: study.id, people }
}

/** A `labelling-items` dataset of `items` query–document items, gold grade i ↦ goldSql(i) in the prediction. */
export async function itemsDataset(studyId: string, ownerId: string, items: number): Promise<string> {
  const { db } = await import('../lib/server/db')
  const id = randomUUID()
  await db.$executeRawUnsafe(
    `INSERT INTO "Dataset" (id, "studyId", name, kind, source, status, "createdById", "createdAt")
     VALUES ($1, $2, $3, 'labelling-items', 'inline', 'ready', $4, now())`,
    id,
    studyId,
    `bench items ${items}`,
    ownerId,
  )
  await db.$executeRawUnsafe(
    `INSERT INTO "Instance" (id, "datasetId", index, input, prediction, explanation, meta)
     SELECT gen_random_uuid()::text, $1, i,
            jsonb_build_object('kind', 'query-doc', 'id', 'q' || (i / 20) || '-d' || i, 'topicId', 'q' || (i / 20),
                               'query', 'bench query ' || (i / 20), 'docId', 'd' || i,
                               'document', 'Bench document ' || i || ': a few words about the query, some of them relevant.'),
            ${goldSql('i')}::text, '',
            jsonb_build_object('itemId', 'q' || (i / 20) || '-d' || i, 'kind', 'query-doc')
     FROM generate_series(0, $2 - 1) i`,
    id,
    items,
  )
  return id
}

/** A labelling run over the dataset, `slots` claimable annotator sessions per item, made by `runs.create`. */
export async function labellingRun(
  researcher: Actor,
  studyId: string,
  datasetId: string,
  opts: { slots: number; start: boolean; name: string },
): Promise<string> {
  const { execute } = await import('../lib/server/operation')
  const { createRun } = await import('../lib/server/services/runs')
  const r = await execute(createRun, researcher, {
    studyId,
    protocol: 'labelling',
    name: opts.name,
    datasetId,
    config: { preset: PRESET },
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: opts.slots,
    distinctClaimants: true,
    fillFirst: opts.slots,
    start: opts.start,
  })
  if (!r.ok) throw new Error(`runs.create refused the bench's run: ${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  if (r.data.preparing) {
    // A large run's sessions are written by a job (engine/prepare.ts): run that job here, with the
    // payload runs.create queued (writing the sessions not there yet is what a retry of it does too).
    const { db } = await import('../lib/server/db')
    const { prepareSessions, SESSIONS_QUEUE } = await import('../lib/server/engine/prepare')
    const jobs = await db.$queryRawUnsafe<Array<{ data: Parameters<typeof prepareSessions>[0] }>>(
      `SELECT data FROM pgboss.job WHERE name = $1 AND data->>'runId' = $2 LIMIT 1`,
      SESSIONS_QUEUE,
      r.data.id,
    )
    if (!jobs[0]) throw new Error(`runs.create queued no ${SESSIONS_QUEUE} job for run ${r.data.id}`)
    await prepareSessions(jobs[0].data)
    const run = await db.run.findUniqueOrThrow({ where: { id: r.data.id }, select: { status: true } })
    if (run.status === 'preparing') throw new Error(`run ${r.data.id} is still preparing after its sessions job`)
  }
  return r.data.id
}

/**
 * Every session of the run labelled by the person of its slot (slot k by `annotators[k - 1]`): the
 * message row a submitted label leaves (body as the plugin's turnMessage builds it, label/value/detail
 * as its projection, the audit meta as payload), the session done, its seat held by that person.
 */
export async function labelEverything(runId: string, annotators: string[]) {
  const { db } = await import('../lib/server/db')
  await db.$executeRawUnsafe(
    `UPDATE "SessionSeat" p SET "userId" = ($2::text[])[s.repetition], "leaseUntil" = NULL
     FROM "ProtocolSession" s WHERE s.id = p."sessionId" AND s."runId" = $1 AND p.seat = 'annotator'`,
    runId,
    annotators,
  )
  await db.$executeRawUnsafe(
    `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, body, label, value, detail, payload, "authorUserId", "createdAt")
     SELECT gen_random_uuid()::text, s.id, 1, 'annotator', 'annotator',
            jsonb_build_object('seq', 1, 'sender', 'annotator', 'kind', 'label', 'schemaVersion', 1,
                               'answers', jsonb_build_object('O', v.o), 'elapsedMs', 800 + (s.position * 37 + s.repetition * 101) % 4000),
            'label', 'O=' || v.o, NULL,
            jsonb_build_object('audit', jsonb_build_object('kind', 'label', 'elapsedMs', 800 + (s.position * 37 + s.repetition * 101) % 4000)),
            ($2::text[])[s.repetition], now() - make_interval(secs => (100000 - s.position * 3 - s.repetition)::float8)
     FROM "ProtocolSession" s CROSS JOIN LATERAL (SELECT ${labelSql('s.position::bigint', 's.repetition')} AS o) v
     WHERE s."runId" = $1`,
    runId,
    annotators,
  )
  await db.$executeRawUnsafe(
    `UPDATE "ProtocolSession" SET status = 'done', "awaitingSeat" = NULL, "stopReason" = 'labelled', "doneAt" = now(), "updatedAt" = now()
     WHERE "runId" = $1`,
    runId,
  )
  await db.$executeRawUnsafe('ANALYZE')
}

/**
 * After a load: slots labelled more than once (must be 0), items one person labelled twice (must be 0
 * with distinct claimants), labels in all.
 */
export async function labelChecks(runId: string) {
  const { db } = await import('../lib/server/db')
  const rows = await db.$queryRawUnsafe<Array<{ labels: number; twice: number; personTwice: number }>>(
    `WITH l AS (
       SELECT s.id, s."instanceId", m."authorUserId" FROM "ProtocolSession" s
       JOIN "ProtocolMessage" m ON m."sessionId" = s.id
       WHERE s."runId" = $1 AND m.body->>'kind' = 'label'
     )
     SELECT (SELECT count(*)::int FROM l) AS labels,
            (SELECT count(*)::int FROM (SELECT id FROM l GROUP BY id HAVING count(*) > 1) x) AS twice,
            (SELECT count(*)::int FROM (SELECT 1 FROM l GROUP BY "instanceId", "authorUserId" HAVING count(*) > 1) y) AS "personTwice"`,
    runId,
  )
  return rows[0] as { labels: number; twice: number; personTwice: number }
}
