import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { afterAll, describe, expect, it } from 'vitest'
import { EvinceSetupForm } from '@/protocols/evince/ui/setup-form'
import { PxpSetupForm } from '@/protocols/pxp/ui/setup-form'
import { ScorekeepingSetupForm } from '@/protocols/scorekeeping/ui/setup-form'
import type { SetupFormProps } from '@/components/protocols/types'
import { SeatPicker } from '@/components/runs/seat-picker'
import { PXP_SEAT_DECLS } from '@/protocols/pxp/core'
import { db } from '@/lib/server/db'
import { pluginFor } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { pxpFixture } from '../../protocols/pxp/fixture'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

/**
 * The set-up forms as the browser gets them (rendered to markup): the labels the Playwright specs
 * find their fields by, and the fields a form posts as it first shows → the plugin's `fromForm` →
 * a run `runs.create` accepts. PXP's seats come from the generic seat picker.
 */
const fake = useFakeLlm()
afterAll(async () => {
  await stopBoss()
})

const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
const textOf = (html: string) =>
  decode(
    html
      .replace(/<span aria-hidden="true"[^>]*>.*?<\/span>/g, '')
      .replace(/<[^>]+>/g, '')
      .replace(/\s+/g, ' ')
      .trim(),
  )
const attr = (tag: string, name: string) => {
  const m = tag.match(new RegExp(`\\s${name}="([^"]*)"`))
  return m ? decode(m[1] as string) : undefined
}

/** Every label's accessible text → the name of the control it labels. */
function labels(html: string): Array<{ text: string; name: string | undefined }> {
  const out: Array<{ text: string; name: string | undefined }> = []
  for (const m of html.matchAll(/<label\b([^>]*)>(.*?)<\/label>/gs)) {
    const target = attr(m[1] as string, 'for')
    if (target) {
      const control = html.match(new RegExp(`<(?:input|select|textarea)\\b[^>]*\\sid="${target}"[^>]*>`))?.[0]
      out.push({ text: textOf(m[2] as string), name: control ? attr(control, 'name') : undefined })
    } else {
      const control = (m[2] as string).match(/<input\b[^>]*>/)?.[0]
      out.push({ text: textOf(m[2] as string), name: control ? attr(control, 'name') : undefined })
    }
  }
  return out
}

/** What the form posts as it first shows (as `formDataToObject` makes it: no empty values, repeats as lists). */
function posted(html: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const add = (name: string | undefined, value: string | undefined) => {
    if (!name || value === undefined || value === '') return
    const prev = out[name]
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]
  }
  for (const m of html.matchAll(/<input\b[^>]*>/g)) {
    const tag = m[0]
    if (attr(tag, 'disabled') !== undefined) continue
    const type = attr(tag, 'type') ?? 'text'
    if (type === 'radio' || type === 'checkbox') {
      if (attr(tag, 'checked') !== undefined) add(attr(tag, 'name'), attr(tag, 'value') ?? 'on')
    } else add(attr(tag, 'name'), attr(tag, 'value'))
  }
  for (const m of html.matchAll(/<select\b([^>]*)>(.*?)<\/select>/gs)) {
    const options = [...(m[2] as string).matchAll(/<option\b[^>]*>/g)].map((o) => o[0])
    const chosen = options.find((o) => attr(o, 'selected') !== undefined) ?? options[0]
    add(attr(m[1] as string, 'name'), chosen ? attr(chosen, 'value') : undefined)
  }
  return out
}

const props = (over: Partial<SetupFormProps> = {}): SetupFormProps => ({
  studyId: 's',
  protocol: 'pxp',
  datasets: [{ id: 'd', name: 'Demo', kind: 'drug', instances: 2 }],
  models: [{ value: JSON.stringify({ connectionId: 'c' }), label: 'Connection: C' }],
  experts: [
    { value: 'u1', label: 'Expert One' },
    { value: 'u2', label: 'Expert Two' },
  ],
  extra: {},
  ...over,
})

describe('the PXP set-up form on the generic seat picker', () => {
  it('keeps every label the browser specs find its fields by, each on one field', () => {
    const html = renderToStaticMarkup(createElement(PxpSetupForm, props()))
    const all = labels(html)
    const one = (text: string) => {
      const found = all.filter((l) => l.text === text)
      expect(found, text).toHaveLength(1)
      return found[0]?.name
    }
    expect(one('Name')).toBe('name')
    expect(one('Dataset')).toBe('datasetId')
    expect(one('Sample (first N instances)')).toBe('sample')
    expect(one('Task template (generic datasets)')).toBe('templateId')
    expect(one('Generator')).toBe('seats.m.model')
    expect(one('Checker (AGREE, temperature 0)')).toBe('helpers.checker')
    expect(one('Checker model override')).toBe('helpers.checker.modelName')
    expect(one('Message bound n')).toBe('config.n')
    expect(one('REJECT allowed after k')).toBe('config.k')
    expect(one('Repetitions R')).toBe('repetitions')
    expect(one('Experts play the machine (against an LLM or proxy tester)')).toBe('seats.m.kind')
    expect(one('Another LLM')).toBe('seats.h.kind')
    expect(one("Proxy over the dataset's ground truth (never revises; as in the paper's RAD runs)")).toBe(
      'seats.h.kind',
    )
    expect(one('Experts in the browser (sessions shared round robin)')).toBe('seats.h.kind')
    expect(one('Create as a draft (start it later from the run page)')).toBe('draft')
    // `getByLabel('Name')` matches by substring: no other label may say "name"; "Another LLM" likewise.
    expect(all.filter((l) => /name/i.test(l.text)).map((l) => l.text)).toEqual(['Name'])
    expect(all.filter((l) => /another llm/i.test(l.text))).toHaveLength(1)
    expect(html).toMatch(/<button[^>]*type="submit"[^>]*>Create experiment<\/button>/)
    // The warning shows only when experts play the machine against the proxy: not at first.
    expect(html).not.toContain('proxy-ground-truth-warning')
  })

  it('the experts of a seat are checkboxes, the sessions taking them round robin', () => {
    const html = renderToStaticMarkup(
      createElement(SeatPicker, {
        decl: PXP_SEAT_DECLS[0],
        models: props().models,
        people: props().experts,
        claimable: false,
        roundRobin: true,
        sharedHelpers: true,
        way: 'human',
        personLabel: 'Assigned experts',
      }),
    )
    expect(html).toContain('Assigned experts')
    expect(
      labels(html)
        .filter((l) => l.name === 'seats.m.userId')
        .map((l) => l.text),
    ).toEqual(['Expert One', 'Expert Two'])
    expect(html).toMatch(/type="checkbox" name="seats.m.userId" value="u1"/)
    // Shared helpers are not asked in the seat.
    expect(html).not.toContain('helpers.checker')
  })

  it('what the form posts as it first shows makes a run: the LLM machine and the proxy tester, both with the checker', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const datasetId = await pxpFixture.dataset({ studyId: study.id } as never, 2)
    const model = JSON.stringify({ connectionId: conn.id })
    const html = renderToStaticMarkup(
      createElement(
        PxpSetupForm,
        props({
          studyId: study.id,
          datasets: [{ id: datasetId, name: 'contract drug', kind: 'drug', instances: 2 }],
          models: [{ value: model, label: 'Connection' }],
        }),
      ),
    )
    const { protocol, studyId, ...fields } = posted(html)
    expect(protocol).toBe('pxp')
    const body = (await (await pluginFor('pxp')).setup()).fromForm?.({ ...fields, name: 'from the form' }) as Record<
      string,
      unknown
    >
    const r = await execute(createRun, researcher, { studyId, protocol, ...body })
    expect(r.ok, r.ok ? '' : r.error).toBe(true)
    if (!r.ok) return
    const run = await db.run.findUniqueOrThrow({ where: { id: r.data.id } })
    const checker = { connectionId: conn.id }
    expect(run.seats).toMatchObject({
      m: { kind: 'llm', model: { connectionId: conn.id }, helpers: { checker } },
      h: { kind: 'proxy', helpers: { checker } },
    })
    // The defaults of the form: n = 10, k = 3, carry-over on, one repetition in order.
    expect(run.config).toEqual({ n: 10, k: 3, carryOver: true })
    expect(r.data.sessions).toBe(2)
  })
})

describe('the other set-up forms keep the seat picker as it was', () => {
  it('EVINCE debaters and the scorekeeping answerer: the picker’s own labels and fields', () => {
    const ev = renderToStaticMarkup(createElement(EvinceSetupForm, props({ protocol: 'evince' })))
    const evLabels = labels(ev)
    for (const seat of ['A', 'B']) {
      expect(evLabels.filter((l) => l.name === `seats.${seat}.model`).map((l) => l.text)).toEqual(['Model'])
      expect(evLabels.filter((l) => l.name === `seats.${seat}.modelName`).map((l) => l.text)).toEqual([
        'Model override',
      ])
      expect(evLabels.filter((l) => l.name === `seats.${seat}.temperature`).map((l) => l.text)).toEqual(['Temperature'])
    }
    expect(posted(ev)).toMatchObject({ 'seats.A.temperature': '0.2', 'seats.B.temperature': '1.0' })
    const sk = renderToStaticMarkup(
      createElement(
        ScorekeepingSetupForm,
        props({ protocol: 'scorekeeping', datasets: [{ id: 'g', name: 'G', kind: 'clembench', instances: 1 }] }),
      ),
    )
    expect(
      labels(sk)
        .filter((l) => l.name === 'seats.answerer.kind')
        .map((l) => l.text),
    ).toEqual(['An LLM', 'A person of the study', 'Any member who claims a game (people, measured like the models)'])
    expect(posted(sk)).toMatchObject({ 'seats.answerer.kind': 'llm', 'seats.answerer.temperature': '0' })
  })
})
