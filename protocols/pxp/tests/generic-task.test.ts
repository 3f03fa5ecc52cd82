import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { runSession as runPxpSession } from '@/lib/server/engine/runner'
import { createRun } from '@/lib/server/services/runs'
import { createTaskTemplate, getTaskTemplate, tryMatch } from '@/protocols/pxp/server/templates'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()
// Imports are jobs: this process works their queue.
useBulkWorkers()

describe('a generic task defined by a researcher runs as a PXP experiment', () => {
  it('numeric MATCH with a tolerance decides the tags; the prompts carry the template’s words', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const imported = await importAndWait(researcher, {
      studyId: study.id,
      name: 'Doses',
      kind: 'generic',
      file: new File(['drug,weight,dose,why\nParacetamol,70,70,1 mg per kg\n'], 'doses.csv'),
      mapping: JSON.stringify({ inputColumns: ['drug', 'weight'], predictionColumn: 'dose', explanationColumn: 'why' }),
    })
    if (!imported.ok) throw new Error(imported.error)
    const conn = await fakeConnection(study.id, fake())
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: 'Dose: 72 mg\nReasoning: about 1 mg per kg, rounded.' }] },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ])
    const template = (tolerance: number) =>
      execute(createTaskTemplate, researcher, {
        studyId: study.id,
        name: `Dose ±${tolerance}`,
        systemPrompt: 'You are a clinical pharmacist.',
        queryPrompt: 'What single dose of {drug} for a patient of {weight} kg?',
        predictionField: 'Dose',
        explanationField: 'Reasoning',
        match: { mode: 'numeric', tolerance },
      })
    const loose = await template(5)
    const strict = await template(1)
    if (!loose.ok || !strict.ok) throw new Error('template refused')

    const run = async (templateId: string) => {
      const created = await execute(createRun, researcher, {
        protocol: 'pxp',
        studyId: study.id,
        name: 'generic',
        datasetId: imported.data.id,
        templateId,
        n: 6,
        generator: { connectionId: conn.id, model: 'gen' },
        checker: { connectionId: conn.id, model: 'judge' },
      })
      if (!created.ok) throw new Error(created.error)
      const s = await db.protocolSession.findFirstOrThrow({ where: { runId: created.data.id } })
      await runPxpSession(s.id)
      return db.protocolSession.findUniqueOrThrow({
        where: { id: s.id },
        include: { messages: { orderBy: { seq: 'asc' } }, contexts: { orderBy: { seq: 'asc' } } },
      })
    }
    // 72 vs the truth 70: within ±5 the proxy ratifies at once, and so does the machine.
    const ok = await run(loose.data.id)
    expect(ok.messages.map((m) => m.label)).toEqual(['INIT', 'RATIFY', 'RATIFY'])
    expect(ok.messages[0]).toMatchObject({ value: '72 mg', detail: 'about 1 mg per kg, rounded.' })
    const prompt = JSON.stringify(ok.contexts[0]?.context)
    expect(prompt).toContain('You are a clinical pharmacist.')
    expect(prompt).toContain('Dose: <dose>')
    expect(prompt).toContain('What single dose of Paracetamol for a patient of 70 kg?')
    // Outside ±1 the proxy refutes.
    const no = await run(strict.data.id)
    expect(no.messages[1]?.label).toBe('REFUTE')
    expect(no.stopReason).not.toBe('mutual-ratify')

    // Templates are snapshots: the session keeps the spec it was created with.
    const got = await execute(getTaskTemplate, researcher, { templateId: loose.data.id })
    expect(got.ok && got.data.spec.match).toEqual({ mode: 'numeric', tolerance: 5, relative: false })
    expect((ok.config as { template?: { name: string } }).template?.name).toBe('Dose ±5')
  })

  it('a pattern the linear-time engine cannot run is refused at save and at try-MATCH, with the reason', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const template = (pattern: string) => ({
      studyId: study.id,
      name: 'Regex',
      systemPrompt: 'x',
      queryPrompt: 'y',
      match: { mode: 'regex', pattern },
    })
    for (const [pattern, reason] of [
      ['(\\d)\\1', /Backreferences .* not supported/],
      ['grade (?=\\d)(\\d)', /Lookahead and lookbehind .* not supported/],
      ['(?<!no )grade (\\d)', /Lookahead and lookbehind .* not supported/],
    ] as const) {
      const saved = await execute(createTaskTemplate, researcher, template(pattern))
      expect(saved, pattern).toMatchObject({
        ok: false,
        status: 400,
        fieldErrors: { match: [expect.stringMatching(reason)] },
      })
      const tried = await execute(tryMatch, researcher, {
        match: { mode: 'regex', pattern },
        a: 'grade 2',
        b: 'grade 2',
      })
      expect(tried, pattern).toMatchObject({
        ok: false,
        status: 400,
        fieldErrors: { match: [expect.stringMatching(reason)] },
      })
    }
    expect(await db.taskTemplate.count({ where: { studyId: study.id } })).toBe(0)
    // A catastrophic pattern for a backtracking engine is fine here: it saves, and MATCH returns at once.
    expect(await execute(createTaskTemplate, researcher, template('(a+)+$'))).toMatchObject({ ok: true })
    const t0 = performance.now()
    const tried = await execute(tryMatch, researcher, {
      match: { mode: 'regex', pattern: '(a+)+$' },
      a: `${'a'.repeat(9_999)}!`,
      b: 'a',
    })
    expect(tried).toEqual({ ok: true, data: { match: false } })
    expect(performance.now() - t0).toBeLessThan(2000)
  })

  it('refuses a bad template with field errors; try-MATCH evaluates without storing', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const bad = await execute(createTaskTemplate, researcher, {
      studyId: study.id,
      name: 'Bad',
      systemPrompt: 'x',
      queryPrompt: 'y',
      match: { mode: 'regex', pattern: '(' },
      agreePrompt: 'no placeholders',
    })
    expect(bad).toMatchObject({ ok: false, status: 400 })
    expect(Object.keys((bad as { fieldErrors?: object }).fieldErrors ?? {}).sort()).toEqual(
      expect.arrayContaining(['agreePrompt']),
    )
    expect(await db.taskTemplate.count({ where: { studyId: study.id } })).toBe(0)
    expect(
      await execute(tryMatch, researcher, { match: { mode: 'set', separator: ';' }, a: 'x; y', b: 'Y;X' }),
    ).toEqual({
      ok: true,
      data: { match: true },
    })
  })
})
