import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { afterAll, describe, expect, it } from 'vitest'
import { openApiDocument } from '@/lib/server/api/openapi'

/**
 * The OpenAPI document as its users' tools read it: Redocly's `recommended` ruleset finds nothing in
 * it (errors or warnings), and openapi-typescript generates a client's types from it that a strict
 * TypeScript program can use (and that refuse a wrong use).
 */
const doc = (await openApiDocument()) as {
  openapi: string
  paths: Record<string, Record<string, unknown>>
}
const dir = mkdtempSync(path.join(tmpdir(), 'parley-openapi-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the OpenAPI document', () => {
  it("passes Redocly's recommended lint without a problem", async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config })
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`)).toEqual(
      [],
    )
  })

  it('names every dataset kind that shares an upload field (a corpus beside ReHAC QA questions or MINT tasks)', () => {
    const text = JSON.stringify(doc)
    expect(text).toContain('rehac-qa: Corpus (pages JSONL); mint-tasks: Corpus (pages JSONL)')
  })

  it('generates typed client paths with openapi-typescript that a strict program uses', async () => {
    const generated = astToString(await openapiTS(doc as never))
    // Every path of the document is in the generated `paths`.
    for (const p of Object.keys(doc.paths)) expect(generated, p).toContain(`"${p}": {`)
    writeFileSync(path.join(dir, 'api.ts'), generated)
    const typecheck = (usage: string) => {
      writeFileSync(path.join(dir, 'usage.ts'), usage)
      const program = ts.createProgram([path.join(dir, 'usage.ts')], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        skipLibCheck: true,
        types: [],
      })
      return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    }
    const good = `
      import type { components, paths } from './api'
      type Json<P extends keyof paths, M extends keyof paths[P], S extends number> =
        paths[P][M] extends { responses: infer R } ? S extends keyof R ? R[S] extends { content: { 'application/json': infer B } } ? B : never : never : never
      const created: Json<'/runs', 'post', 201> = { id: 'r', sessions: 2, protocol: 'pxp', started: false, preparing: false, firstSessionId: null, runs: [{ id: 'r', name: 'r', sessions: 2, preparing: false }] }
      const missing: Json<'/runs/{runId}', 'get', 404> = { error: 'Run was not found.' }
      const reused: Json<'/runs', 'post', 422> = { error: 'This Idempotency-Key was used for another request.' }
      const key: NonNullable<paths['/studies']['post']['parameters']['header']>['Idempotency-Key'] = 'k-1'
      const run: Json<'/runs/{runId}', 'get', 200> = null as never
      const stall: string | null = run.lastStall?.stallError ?? null
      const study: components['schemas']['StudySummary']['archivedAt'] = null
      export { created, missing, reused, key, stall, study }
    `
    expect(typecheck(good)).toEqual([])
    // The types are real: a field of the wrong type and an undeclared status are refused.
    const bad = `
      import type { paths } from './api'
      type Created = paths['/runs']['post']['responses'][201]['content']['application/json']
      const created: Created = { id: 1, sessions: 2, protocol: 'pxp', started: false, preparing: false, firstSessionId: null }
      type Nope = paths['/runs']['post']['responses'][418]
      export { created }
      export type { Nope }
    `
    const errors = typecheck(bad)
    expect(errors.some((e) => /number.*not assignable to type 'string'/.test(e))).toBe(true)
    expect(errors.some((e) => /418/.test(e))).toBe(true)
  }, 60_000)
})
