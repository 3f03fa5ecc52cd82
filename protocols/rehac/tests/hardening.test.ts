import { afterEach, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { ALLOWED_HOSTS_SETTING } from '@/lib/server/llm/hosts'
import { rehacQaDataset } from '@/protocols/rehac/fixture'
import { MAX_ENV_CHARS } from '@/protocols/rehac/server/datasets'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()
useBulkWorkers()
const before = process.env[ALLOWED_HOSTS_SETTING]
afterEach(() => {
  if (before === undefined) delete process.env[ALLOWED_HOSTS_SETTING]
  else process.env[ALLOWED_HOSTS_SETTING] = before
})

describe('ReHAC hardening', () => {
  it("the http-policy URL passes the restricted LLM connections' host check at run set-up", async () => {
    delete process.env[ALLOWED_HOSTS_SETTING]
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const datasetId = await rehacQaDataset(study.id, 1)
    const llm = { kind: 'llm', model: { connectionId: conn.id, model: 'gen' } }
    const create = (actor: typeof researcher, url: string, params: Record<string, unknown> = {}) =>
      execute(createRun, actor, {
        studyId: study.id,
        protocol: 'rehac',
        name: 'http',
        datasetId,
        seats: {
          decider: { kind: 'program', program: 'http-policy', params: { url, ...params } },
          agent: llm,
          human: llm,
        },
      })
    for (const url of [
      'http://127.0.0.1:9/decide',
      'http://10.1.2.3/decide',
      'http://169.254.169.254/latest',
      'http://[::1]/x',
    ]) {
      const r = await create(researcher, url)
      expect(r, url).toMatchObject({ ok: false, status: 400, fieldErrors: { 'seats.decider': expect.any(Array) } })
    }
    expect(await db.run.count({ where: { studyId: study.id } })).toBe(0)

    // The allow-list of LLM hosts lets it through; the decider then connects through the guarded
    // transport whatever its params said.
    process.env[ALLOWED_HOSTS_SETTING] = '127.0.0.1'
    const allowed = await create(researcher, 'http://127.0.0.1:9/decide', { restrictedHosts: false })
    if (!allowed.ok) throw new Error(allowed.error)
    const run = await db.run.findUniqueOrThrow({ where: { id: allowed.data.id } })
    expect((run.seats as { decider: { params: unknown } }).decider.params).toMatchObject({ restrictedHosts: true })

    // An admin may point it at an internal host (as at their connections); it connects unguarded.
    delete process.env[ALLOWED_HOSTS_SETTING]
    const admin = await makeUser('admin')
    const byAdmin = await create(admin, 'http://10.1.2.3/decide')
    if (!byAdmin.ok) throw new Error(byAdmin.error)
    const adminRun = await db.run.findUniqueOrThrow({ where: { id: byAdmin.data.id } })
    expect((adminRun.seats as { decider: { params: unknown } }).decider.params).toMatchObject({
      restrictedHosts: false,
    })
  })

  it('a corpus over 4 MB is refused at import with a message that says why and what to do', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const page = JSON.stringify({ title: 'P', paragraphs: ['x'.repeat(9_000)] })
    const big = Array.from({ length: Math.ceil(MAX_ENV_CHARS / page.length) + 1 }, (_, i) =>
      page.replace('"P"', `"P${i}"`),
    ).join('\n')
    expect(Buffer.byteLength(big)).toBeGreaterThan(4 * 1024 * 1024)
    const r = await importAndWait(researcher, {
      studyId: study.id,
      kind: 'rehac-qa',
      name: 'big',
      file: new File(['{"id":"q","question":"Q?","answer":"A"}\n'], 'questions.jsonl'),
      corpus: new File([big], 'wiki.jsonl'),
    })
    expect(JSON.stringify(r)).toMatch(
      /wiki\.jsonl is larger than 4 MB: every session keeps .* split it into smaller task sets/,
    )
    expect(await db.instance.count({ where: { dataset: { studyId: study.id } } })).toBe(0)
  })
})
