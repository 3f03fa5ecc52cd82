// `mint.import-results`: the authors' released results trees uploaded as .zip or .tar.gz become
// MintImportedRun rows (outcomes only), all or nothing, with each problem named; study write access.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { strToU8, zipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { MAX_RECORD_CHARS } from '@/protocols/mint/core/results'
import { importResults, importResultsEndpoint, readTar, relativeRunPath } from '@/protocols/mint/server/released-import'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { describeShared } from '../../../tests/support/shared'
import { OUTPUTS } from './released'

const tmp = mkdtempSync(path.join(tmpdir(), 'parley-mint-import-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

let researcher: Actor
let viewer: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  viewer = await makeUser('viewer')
  studyId = (await makeStudy(researcher, [viewer])).id
})

export const record = (
  success: boolean,
  id: number,
  actions = { propose_solution: 1, use_tool: 1, invalid_action: 0 },
) =>
  JSON.stringify({
    state: {
      history: [{ role: 'user', content: 'P' }],
      finished: true,
      success,
      latest_output: {},
      agent_action_count: actions,
      token_counter: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
      terminate_reason: success ? 'task_success' : 'max_steps',
      error: null,
    },
    task: { task_name: 'reasoning', task_id: id, prompt: 'p', reference: '1', metadata: {} },
  })

const zipOf = (files: Record<string, string>, name = 'tree.zip') =>
  new File([zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(v)])))], name)

/** A .tar.gz of a folder, written by the system's tar. */
function tarGzOf(dir: string, what: string): File {
  const out = path.join(tmp, `${Math.random().toString(36).slice(2)}.tar.gz`)
  execFileSync('tar', ['czf', out, '-C', dir, what])
  return new File([readFileSync(out)], 'tree.tar.gz')
}

const imported = (study: string) => db.mintImportedRun.findMany({ where: { studyId: study }, orderBy: { path: 'asc' } })

describe('mint.import-results', () => {
  it('finds the run path under any folder above the model', () => {
    expect(relativeRunPath('data/outputs/m/F=None/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl', undefined)).toBe(
      'm/F=None/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl',
    )
    expect(relativeRunPath('F=None/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl', 'm')).toBe(
      'm/F=None/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl',
    )
    expect(relativeRunPath('m/F=None/README.md', undefined)).toBeNull()
    expect(relativeRunPath('__MACOSX/m/F=None/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl', undefined)).toBeNull()
  })

  it('imports a small zip: one row per results file with each outcome; a second import replaces it', async () => {
    const study = (await makeStudy(researcher)).id
    const tree = {
      'outputs/m/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl': `${record(true, 0)}\n${record(false, 1)}\n`,
      'outputs/m/F=gpt-4-0613/PHF=GT-binary/max2_p2+tool+cd/code_generation/mbpp/results.jsonl': `${record(true, 3, { propose_solution: 0, use_tool: 1, invalid_action: 3 })}\n`,
      'outputs/m/notes.txt': 'ignored',
    }
    const r = await execute(importResults, researcher, { studyId: study, file: zipOf(tree) })
    expect(r).toMatchObject({ ok: true, data: { files: 2, records: 3, models: ['m'], runs: 2, replaced: 0 } })
    // what the REST endpoint documents is what the operation answers
    expect(importResultsEndpoint.output.parse(r.ok && r.data)).toEqual(r.ok && r.data)
    const rows = await imported(study)
    expect(
      rows.map((x) => [x.model, x.feedback, x.phf, x.k, x.p, x.taskType, x.dataset, x.records, x.successes]),
    ).toEqual([
      ['m', null, null, 1, 1, 'reasoning', 'gsm8k', 2, 1],
      ['m', 'gpt-4-0613', 'GT-binary', 2, 2, 'code_generation', 'mbpp', 1, 1],
    ])
    const mbpp = rows.find((x) => x.dataset === 'mbpp')
    expect(mbpp?.path).toBe('m/F=gpt-4-0613/PHF=GT-binary/max2_p2+tool+cd/code_generation/mbpp/results.jsonl')
    expect(mbpp?.outcomes).toEqual([
      {
        taskId: 3,
        success: true,
        actions: { propose_solution: 0, use_tool: 1, invalid_action: 3 },
        terminateReason: 'task_success',
        tokenCounter: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
      },
    ])
    const again = await execute(importResults, researcher, { studyId: study, file: zipOf(tree) })
    expect(again).toMatchObject({ ok: true, data: { files: 2, replaced: 2 } })
    expect(await imported(study)).toHaveLength(2)
    const audit = await db.auditLog.count({ where: { studyId: study, action: 'mint.import-results' } })
    expect(audit).toBe(2)
  })

  it('imports a .tar.gz of the model folder’s contents when the model is named', async () => {
    const study = (await makeStudy(researcher)).id
    const d = path.join(tmp, 'contents', 'F=None', 'max3_p2+tool+cd', 'reasoning', 'math')
    mkdirSync(d, { recursive: true })
    writeFileSync(path.join(d, 'results.jsonl'), `${record(true, 0)}\n${record(true, 1)}\n${record(false, 2)}\n`)
    const file = tarGzOf(path.join(tmp, 'contents'), 'F=None')
    const nameless = await execute(importResults, researcher, { studyId: study, file })
    expect(nameless).toMatchObject({ ok: false, status: 400 })
    expect(nameless.ok || nameless.error).toMatch(/name the model/)
    const r = await execute(importResults, researcher, { studyId: study, file, model: 'llama-2-7b' })
    expect(r).toMatchObject({ ok: true, data: { files: 1, records: 3, models: ['llama-2-7b'] } })
    expect((await imported(study))[0]).toMatchObject({ model: 'llama-2-7b', k: 3, records: 3, successes: 2 })
  })

  it('refuses a malformed tree, naming every problem, and stores nothing', async () => {
    const study = (await makeStudy(researcher)).id
    const tree = {
      'm/F=None/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl': `${record(true, 0)}\n{"state": 1}\nnot json\n`,
      'm/F=None/max5+tool/reasoning/gsm8k/results.jsonl': `${record(true, 0)}\n`,
      'm/F=None/max5_p2+tool+cd/code_generation/gsm8k/results.jsonl': `${record(true, 0)}\n`,
      'm/F=None/max4_p2+tool+cd/reasoning/math/results.jsonl': `${record(true, 0)}\n`,
    }
    const r = await execute(importResults, researcher, { studyId: study, file: zipOf(tree) })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.status).toBe(400)
    expect(r.error).toMatch(/nothing was stored/)
    expect(r.error).toMatch(/gsm8k\/results.jsonl:2: not a MINT record/)
    expect(r.error).toMatch(/gsm8k\/results.jsonl:3: not JSON/)
    expect(r.error).toMatch(/max5\+tool is not max<k>_p<p>/)
    expect(r.error).toMatch(/gsm8k is not a code_generation data set/)
    expect(r.error).toMatch(/4 problems/)
    expect(await imported(study)).toEqual([])
  })

  it('refuses what is not an archive, an archive without results, a damaged archive, and a long record', async () => {
    const study = (await makeStudy(researcher)).id
    const notArchive = await execute(importResults, researcher, { studyId: study, file: new File(['{}'], 'x.json') })
    expect(notArchive.ok || notArchive.error).toMatch(/\.zip or a \.tar\.gz/)
    const empty = await execute(importResults, researcher, { studyId: study, file: zipOf({ 'a.txt': 'x' }) })
    expect(empty.ok || empty.error).toMatch(/no results.jsonl/)
    const zip = await zipOf({ 'm/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl': record(true, 0) }).bytes()
    const damaged = await execute(importResults, researcher, {
      studyId: study,
      file: new File([zip.subarray(0, 40)], 't.zip'),
    })
    expect(damaged.ok).toBe(false)
    const gz = new File([new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3])], 'x.tar.gz')
    const badGz = await execute(importResults, researcher, { studyId: study, file: gz })
    expect(badGz.ok || badGz.error).toMatch(/cannot be read/)
    const long = `{"state": "${'x'.repeat(MAX_RECORD_CHARS)}"}`
    const tooLong = await execute(importResults, researcher, {
      studyId: study,
      file: zipOf({ 'm/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl': `${record(true, 0)}\n${long}\n` }),
    })
    expect(tooLong.ok || tooLong.error).toMatch(/results.jsonl:2: the record is longer than 5000000 characters/)
    expect(await imported(study)).toEqual([])
  })

  it('needs write access to the study and the studies:update scope', async () => {
    const file = zipOf({ 'm/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl': record(true, 0) })
    const asViewer = await execute(importResults, viewer, { studyId, file })
    expect(asViewer).toMatchObject({ ok: false, status: 403 })
    const other = await makeUser('researcher')
    const asOther = await execute(importResults, other, { studyId, file })
    expect(asOther.ok).toBe(false)
    if (!asOther.ok) expect([403, 404]).toContain(asOther.status)
    expect(await imported(studyId)).toEqual([])
  })

  it('reads tars with long names', () => {
    const long = `${'d'.repeat(120)}/m/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl`
    const d = path.join(tmp, 'long', 'd'.repeat(120), 'm', 'F=None', 'max1_p1+tool+cd', 'reasoning', 'gsm8k')
    mkdirSync(d, { recursive: true })
    writeFileSync(path.join(d, 'results.jsonl'), 'x\n')
    const out = path.join(tmp, 'long.tar')
    execFileSync('tar', ['cf', out, '-C', path.join(tmp, 'long'), '.'])
    const names: string[] = []
    readTar(readFileSync(out), (n) => names.push(n))
    expect(names.map((n) => n.replace(/^\.\//, ''))).toContain(long)
  })
})

describeShared(
  'mint.import-results on the released subset',
  () => {
    it('imports the 48 files (240 records) as a .tar.gz and as a .zip, with the released success flags', async () => {
      const study = (await makeStudy(researcher)).id
      const r = await execute(importResults, researcher, {
        studyId: study,
        file: tarGzOf(OUTPUTS, 'gpt-3.5-turbo-0613'),
      })
      expect(r).toMatchObject({ ok: true, data: { files: 48, records: 240, models: ['gpt-3.5-turbo-0613'], runs: 6 } })
      const rows = await imported(study)
      // successes counted here from the files themselves
      const files = (readdirSync(OUTPUTS, { recursive: true }) as string[]).filter((f) => f.endsWith('results.jsonl'))
      for (const f of files) {
        const lines = readFileSync(path.join(OUTPUTS, f), 'utf8').split('\n').filter(Boolean)
        const row = rows.find((x) => x.path === f.split(path.sep).join('/'))
        expect(row?.records).toBe(lines.length)
        expect(row?.successes).toBe(lines.filter((l) => JSON.parse(l).state.success).length)
      }
      const zipFiles: Record<string, string> = {}
      for (const f of files) zipFiles[`outputs/${f}`] = readFileSync(path.join(OUTPUTS, f), 'utf8')
      const z = await execute(importResults, researcher, { studyId: study, file: zipOf(zipFiles) })
      expect(z).toMatchObject({ ok: true, data: { files: 48, records: 240, replaced: 48 } })
    })
  },
  'datasets/mint',
)
