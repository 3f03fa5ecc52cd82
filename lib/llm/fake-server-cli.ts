/**
 * Start the fake OpenAI-compatible server from the command line:
 *
 *   npx tsx lib/llm/fake-server-cli.ts [--port 4010] [--host 127.0.0.1] [--script rules.json]
 *                                       [--latency 50] [--chunk-delay 0] [--demo] [--no-bodies]
 *
 * `--script` is a JSON array of rules (see rulesFromJson; regular expressions are written
 * `{ "regex": "…", "flags": "i" }`). `--demo` answers unmatched requests with the simulated demo
 * model. Once listening it prints one JSON line `{"url":…,"port":…}` on stdout.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { rulesFromJson, startFakeLlmServer } from './fake-server'

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    script: { type: 'string' },
    latency: { type: 'string', default: '0' },
    'chunk-delay': { type: 'string', default: '0' },
    demo: { type: 'boolean', default: false },
    'no-bodies': { type: 'boolean', default: false },
  },
})

const number = (name: string, v: string | undefined): number => {
  const n = Number(v)
  if (!Number.isFinite(n) || n < 0) {
    console.error(`--${name} must be a non-negative number, got ${v}`)
    process.exit(2)
  }
  return n
}

const server = await startFakeLlmServer({
  port: number('port', values.port),
  host: values.host,
  latencyMs: number('latency', values.latency),
  chunkDelayMs: number('chunk-delay', values['chunk-delay']),
  defaultReply: values.demo ? 'demo' : 'echo',
  recordBodies: !values['no-bodies'],
  ...(values.script ? { script: rulesFromJson(JSON.parse(readFileSync(values.script, 'utf8'))) } : {}),
})
console.log(JSON.stringify({ url: server.url, port: server.port }))

const stop = () => {
  void server.close().then(() => process.exit(0))
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
