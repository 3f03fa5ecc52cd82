import { describe, expect, it, vi } from 'vitest'
import { replay } from '@/lib/protocols/types'
import { db } from '@/lib/server/db'
import type { Actor } from '@/lib/server/actor'
import type { ProtocolPlugin } from '@/lib/server/engine/plugin'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { type SessionImport, SessionImportError } from '@/lib/server/engine/session-import'
import { execute } from '@/lib/server/operation'
import { importRun, listRunImportKinds } from '@/lib/server/services/session-import'
import { makeStudy, makeUser } from '../support/fixtures'
import { type ToyMessage, toy } from './toy/protocol'
import { toyPlugin } from './toy/plugin'

const signedIn = vi.hoisted(() => ({ actor: null as Actor | null }))
vi.mock('next/headers', () => ({ headers: async () => new Headers() }))
vi.mock('next/cache', () => ({ revalidatePath: () => {} }))
vi.mock('@/lib/server/auth/session', () => ({
  getCurrentSession: async () => (signedIn.actor ? { actor: signedIn.actor, sessionId: 'test' } : null),
}))
const { importRunAction } = await import('@/app/actions/run-import')

/**
 * The engine's session import (lib/server/engine/session-import.ts) with a toy plugin: a file of played
 * games, one JSON line each (`{target, moves: [guess, hint, guess, hint, …]}`), becomes an imported run
 * whose sessions ended and whose messages are exactly the ones `apply` accepted, in order. A line whose
 * message `apply` refuses (a lying oracle), or whose game has not ended, fails the whole import with its
 * line number, and nothing is stored.
 */
const guesses: SessionImport = {
  label: 'Played games',
  accepts: '.jsonl',
  task: 'numbers',
  parse(text) {
    return text.split('\n').flatMap((l, i) => {
      if (!l.trim()) return []
      let row: { target: number; moves: Array<number | string> }
      try {
        row = JSON.parse(l)
      } catch {
        throw new SessionImportError(i + 1, 'not JSON')
      }
      const messages = row.moves.map((m, k) => ({
        message: (typeof m === 'number'
          ? { seq: k + 1, sender: 'guesser', kind: 'guess', value: m }
          : { seq: k + 1, sender: 'oracle', kind: 'hint', hint: m }) as ToyMessage,
        meta: { from: 'file' },
      }))
      return [
        {
          line: i + 1,
          instance: { input: { target: row.target } },
          seats: {
            guesser: { kind: 'proxy', helpers: {}, params: { imported: true } },
            oracle: { kind: 'program', program: 'compare', helpers: {}, params: {} },
          },
          config: { maxGuesses: 6 },
          messages,
        },
      ]
    })
  },
}

const plugin = {
  ...toyPlugin,
  protocol: { ...toy, id: 'toy-session-import' },
  ops: async () => ({ sessionImports: { 'toy-played-games': guesses } }),
} as unknown as ProtocolPlugin
registerPlugin(plugin)

const line = (target: number, moves: Array<number | string>) => JSON.stringify({ target, moves })
const GOOD = [
  line(40, [50, 'lower', 40, 'correct']),
  line(7, [7, 'correct']),
  '',
  line(90, [10, 'higher', 95, 'lower', 90, 'correct']),
].join('\n')

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  return { researcher, study }
}

const stored = async (studyId: string) => ({
  runs: await db.run.count({ where: { studyId } }),
  datasets: await db.dataset.count({ where: { studyId } }),
  sessions: await db.protocolSession.count({ where: { studyId } }),
})

describe('importing sessions from a file (the engine seam)', () => {
  it('writes one imported run, done, with an ended session per line whose state is the replay of its messages', async () => {
    const { researcher, study } = await world()
    const kinds = await execute(listRunImportKinds, researcher, { studyId: study.id })
    expect(kinds.ok && kinds.data.find((k) => k.kind === 'toy-played-games')).toMatchObject({
      protocol: 'toy-session-import',
      label: 'Played games',
    })
    const r = await execute(importRun, researcher, {
      studyId: study.id,
      name: 'Games played elsewhere',
      kind: 'toy-played-games',
      file: new File([GOOD], 'games.jsonl'),
    })
    if (!r.ok) throw new Error(r.error)
    expect(r.data).toMatchObject({ sessions: 3, messages: 12 })
    const run = await db.run.findUniqueOrThrow({ where: { id: r.data.runId } })
    expect(run).toMatchObject({ status: 'done', protocol: 'toy-session-import', task: 'numbers', studyId: study.id })
    expect(run.analysis).toMatchObject({ imported: { kind: 'toy-played-games', file: 'games.jsonl', sessions: 3 } })
    expect(await db.instance.count({ where: { datasetId: run.datasetId } })).toBe(3)
    const sessions = await db.protocolSession.findMany({
      where: { runId: run.id },
      orderBy: { position: 'asc' },
      include: { messages: { orderBy: { seq: 'asc' } } },
    })
    expect(sessions.map((s) => s.status)).toEqual(['done', 'done', 'done'])
    expect(sessions.map((s) => s.instance)).toEqual([{ target: 40 }, { target: 7 }, { target: 90 }])
    for (const s of sessions) {
      const bodies = s.messages.map((m) => m.body as ToyMessage)
      const state = replay(toy, toy.config.parse(s.config), s.instance as never, bodies)
      expect(toy.next(state)).toEqual({ done: true, reason: 'found' })
      expect(s.messages.every((m) => (m.payload as { from?: string }).from === 'file')).toBe(true)
    }
    // The third line of the file (after a blank one) is the fourth line: every record keeps its line.
    expect(sessions[2]?.messages[0]?.payload).toMatchObject({ imported: { line: 4 } })
    expect(sessions[2]?.messages.map((m) => (m.body as ToyMessage).kind)).toEqual([
      'guess',
      'hint',
      'guess',
      'hint',
      'guess',
      'hint',
    ])
  })

  it('refuses a file whose message `apply` refuses, naming the line, and stores nothing', async () => {
    const { researcher, study } = await world()
    const bad = [GOOD, line(30, [20, 'lower'])].join('\n') // the oracle lies on line 5
    const r = await execute(importRun, researcher, {
      studyId: study.id,
      name: 'Bad',
      kind: 'toy-played-games',
      file: new File([bad], 'bad.jsonl'),
    })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.status).toBe(400)
    expect(r.error).toContain('bad.jsonl, line 5')
    expect(r.error).toContain('The oracle must say higher')
    expect(await stored(study.id)).toEqual({ runs: 0, datasets: 0, sessions: 0 })
  })

  it('refuses a session that has not ended and a line the plugin cannot read, each by its line', async () => {
    const { researcher, study } = await world()
    const unended = await execute(importRun, researcher, {
      studyId: study.id,
      name: 'Unended',
      kind: 'toy-played-games',
      file: new File([`${line(7, [7, 'correct'])}\n${line(50, [10, 'higher'])}`], 'u.jsonl'),
    })
    expect(!unended.ok && unended.error).toContain('u.jsonl, line 2: the session has not ended after its 2 messages')
    const unreadable = await execute(importRun, researcher, {
      studyId: study.id,
      name: 'Unreadable',
      kind: 'toy-played-games',
      file: new File([`${line(7, [7, 'correct'])}\n{oops`], 'x.jsonl'),
    })
    expect(!unreadable.ok && unreadable.error).toContain('x.jsonl, line 2: not JSON')
    const unknown = await execute(importRun, researcher, {
      studyId: study.id,
      name: 'Unknown',
      kind: 'no-such-kind',
      file: new File([GOOD], 'g.jsonl'),
    })
    expect(!unknown.ok && unknown.error).toContain('Unknown session import kind "no-such-kind"')
    expect(await stored(study.id)).toEqual({ runs: 0, datasets: 0, sessions: 0 })
  })

  it("the study's import form sends the kind, the file and the kind's fields, and names a refused line", async () => {
    const { researcher, study } = await world()
    const fd = (file: string, name: string) => {
      const f = new FormData()
      f.set('studyId', study.id)
      f.set('name', 'From the form')
      f.set('kind', 'toy-played-games')
      f.set('file', new File([file], name))
      f.set('unused', '')
      return f
    }
    signedIn.actor = researcher
    try {
      const ok = await importRunAction(null, fd(GOOD, 'games.jsonl'))
      expect(ok).toMatchObject({ ok: true, message: 'Imported 3 sessions (12 messages) as a run.' })
      const runId = (ok?.data as { runId?: string } | undefined)?.runId ?? ''
      expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ name: 'From the form' })
      const bad = await importRunAction(null, fd(line(5, [6, 'higher']), 'bad.jsonl'))
      expect(bad).toMatchObject({ ok: false })
      expect(bad?.error).toContain('bad.jsonl, line 1: message 2 refused')
      expect(await db.run.count({ where: { studyId: study.id } })).toBe(1)
    } finally {
      signedIn.actor = null
    }
  })

  it('needs write access to the study', async () => {
    const { study } = await world()
    const stranger = await makeUser('researcher')
    const r = await execute(importRun, stranger, {
      studyId: study.id,
      name: 'x',
      kind: 'toy-played-games',
      file: new File([GOOD], 'g.jsonl'),
    })
    expect(r.ok).toBe(false)
    expect(await stored(study.id)).toEqual({ runs: 0, datasets: 0, sessions: 0 })
  })
})
