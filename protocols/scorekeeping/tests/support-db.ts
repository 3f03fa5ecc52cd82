import type { ScorekeepingInstanceInput } from '@/protocols/scorekeeping/core'
import { playGame, scorekeeping } from '@/protocols/scorekeeping/core'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { SCRIPTED_GAMES } from './support'

/** A clembench dataset of `games` in the study. */
export async function scriptedDataset(studyId: string, games = SCRIPTED_GAMES) {
  return db.dataset.create({
    data: {
      studyId,
      name: 'scripted trips',
      kind: 'clembench',
      source: 'test',
      instances: {
        create: games.map((g, index) => ({
          index,
          input: scorekeeping.instance.parse(g.instance) as object,
          prediction: '',
          explanation: '',
          meta: { experiment: g.instance.experiment ?? '', gameId: g.instance.gameId ?? null },
        })),
      },
    },
  })
}

/**
 * A scorekeeping run whose episodes are played by the scripts (each session's log written as the
 * game would write it, the session then done), so its exports can be read without an LLM.
 */
export async function scriptedRun(
  actor: Actor,
  input: { studyId: string; datasetId: string; answerer: Record<string, unknown>; repetitions?: number; name?: string },
  games = SCRIPTED_GAMES,
) {
  const r = await execute(createRun, actor, { protocol: 'scorekeeping', name: input.name ?? 'scripted', ...input })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const sessions = await db.protocolSession.findMany({
    where: { runId: r.data.id },
    orderBy: [{ repetition: 'asc' }, { position: 'asc' }],
  })
  for (const s of sessions) {
    const game = games[s.position]
    if (!game) throw new Error(`no script for position ${s.position}`)
    const state = playGame(s.instance as ScorekeepingInstanceInput, game.reply)
    const t0 = Date.parse('2026-03-02T10:00:00Z') + s.position * 60_000
    await db.protocolMessage.createMany({
      data: state.messages.map((m) => ({
        sessionId: s.id,
        seq: m.seq,
        sender: m.sender,
        receiver: m.sender === 'questioner' ? 'answerer' : 'questioner',
        body: m as object,
        label: m.kind,
        createdAt: new Date(t0 + m.seq * 1000),
      })),
    })
    await db.protocolSession.update({ where: { id: s.id }, data: { status: 'done', doneAt: new Date() } })
  }
  return { runId: r.data.id, sessions }
}
