// Preloaded into a server under test (NODE_OPTIONS=--require …/heap-probe.cjs) with
// PARLEY_HEAP_PROBE_PORT set: a loopback HTTP endpoint on that port that runs two full collections
// and answers, as JSON, how many of the HTTP responses this process has finished are still
// reachable (`heldResponses`) and the heap in use (`heapUsedMb`). Made here, before the server's own
// code, so it belongs to no request; under scripts/serve.mjs only in the web processes, not the
// primary. A second process with the same environment finds the port taken and goes without.
const cluster = require('node:cluster')
const port = Number(process.env.PARLEY_HEAP_PROBE_PORT)
const primaryOfServe = /serve\.mjs$/.test(process.argv[1] ?? '') && cluster.isPrimary
if (port > 0 && !primaryOfServe) {
  const v8 = require('node:v8')
  const vm = require('node:vm')
  const http = require('node:http')
  const diagnostics = require('node:diagnostics_channel')
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  /** @type {Set<WeakRef<object>>} */
  const finished = new Set()
  diagnostics.subscribe('http.server.response.finish', ({ response }) => {
    finished.add(new WeakRef(response))
  })
  const probe = http.createServer((_req, res) => {
    gc()
    setImmediate(() => {
      gc()
      for (const ref of finished) if (ref.deref() === undefined) finished.delete(ref)
      res.setHeader('content-type', 'application/json')
      res.end(
        JSON.stringify({
          pid: process.pid,
          heldResponses: finished.size,
          heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
        }),
      )
    })
  })
  probe.on('error', () => {})
  probe.listen(port, '127.0.0.1')
  probe.unref()
}
