import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { definePlugin } from '@/lib/server/engine/plugin'

import { ProgramExit } from '@/lib/server/engine/exec'
import { type ExecMessage, toyExec } from './protocol'

/**
 * The runtime toy's plugin. Its `effect` program is a real child process (as a sandbox would be): it
 * appends `start <session> <j>` to `<dir>/effects` (the side effect the tests count), sleeps, appends
 * `end <session> <j>`, and prints its answer; aborting its signal kills it. The runner seat's agent
 * execs it once per message, then waits `afterMs` (a window in which a test kills the worker between
 * the program's end and the message's append). The program sleeps `<dir>/sleep-ms` milliseconds when
 * that file exists (a test makes the program slow, then fast again), else the seat's `sleepMs`.
 * `onSessionEnd` appends `<reason> <session>` to the file TOY_EXEC_ENDED names (the test's).
 */
const Params = z.object({
  dir: z.string(),
  sleepMs: z.number().int().default(20),
  afterMs: z.number().int().default(0),
})

const CHILD = `
const fs = require('node:fs')
const [file, session, j, ms] = process.argv.slice(1)
fs.appendFileSync(file, 'start ' + session + ' ' + j + ' ' + process.pid + '\\n')
setTimeout(() => {
  fs.appendFileSync(file, 'end ' + session + ' ' + j + '\\n')
  process.stdout.write(JSON.stringify({ j: Number(j), pid: process.pid }))
}, Number(ms))
`

type EffectInput = { dir: string; session: string; j: number; sleepMs: number }

function effect(input: EffectInput, { signal }: { signal: AbortSignal }): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['-e', CHILD, path.join(input.dir, 'effects'), input.session, String(input.j), String(input.sleepMs)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    const kill = () => child.kill('SIGKILL')
    signal.addEventListener('abort', kill, { once: true })
    child.on('error', reject)
    child.on('close', (code) => {
      signal.removeEventListener('abort', kill)
      if (signal.aborted) return reject(signal.reason)
      if (code !== 0) return reject(new ProgramExit(code, { out }))
      resolve(JSON.parse(out))
    })
  })
}

export const toyExecPlugin = definePlugin(toyExec, {
  agents: {
    program: {
      async tick(ctx) {
        if (ctx.fill.kind !== 'program') throw new Error('unreachable')
        const p = Params.parse(ctx.fill.params)
        const control = path.join(p.dir, 'sleep-ms')
        const sleepMs = existsSync(control) ? Number(readFileSync(control, 'utf8')) : p.sleepMs
        const r = await ctx.exec('effect', { dir: p.dir, session: ctx.session.id, j: ctx.ask.j, sleepMs })
        if (r.exitStatus !== 0) throw new Error(`effect failed: ${r.error}`)
        if (p.afterMs) await new Promise((resolve) => setTimeout(resolve, p.afterMs))
        return {
          message: { seq: ctx.ask.j, sender: 'runner', kind: 'ran', output: r.output } satisfies ExecMessage,
          meta: { reused: r.reused },
        }
      },
    },
  },
  programs: { effect },
  onSessionEnd(ctx, reason) {
    const file = process.env.TOY_EXEC_ENDED
    if (file) appendFileSync(file, `${reason} ${ctx.sessionId}\n`)
  },
  human: { input: z.object({}), toMessage: () => Promise.reject(new Error('no person plays the toy')) },
  project: () => ({ receiver: 'runner' }),
  // The one run-create shape: the runner seat is the program `tick` with its params (dir, sleepMs,
  // afterMs) and time limit; the config is the toy's ({ steps }).
  setup: {
    async plan(_actor, _studyId, input, tools) {
      const ds = await tools.dataset(input.datasetId ?? '')
      return {
        name: input.name,
        task: 'exec',
        datasetId: ds.id,
        config: input.config,
        seats: input.seats,
        repetitions: 1,
      }
    },
    snapshot: (row) => row.input,
  },
  views: { session: () => ({}) },
})
