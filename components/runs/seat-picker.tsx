'use client'

import { Fragment, useContext, useId, useState } from 'react'
import { Field, FieldErrorsContext, SelectField } from '@/components/forms/action-form'
import type { Choice, ModelChoice } from '@/components/protocols/types'
import type { HelperDecl, SeatDecl } from '@/lib/protocols/types'

/**
 * Who fills one seat, built from the protocol's seat declaration: a radio per way the seat may be
 * filled (an LLM, a named person, any member who claims it, the ground-truth proxy, each program it
 * allows) and that way's fields. It posts `seats.<seat>.kind` (llm | human | claimable | proxy |
 * program:<name>), `.model` (a model choice), `.modelName`, `.temperature`, `.userId` and
 * `.helpers.<helper>`, which `seatsFromForm` (lib/server/seat-form.ts) turns into the seat's `SeatFill`.
 * A form may rename what each way is called (its people know the seat as "the answerer" …) and its
 * fields. With `roundRobin`, a person's way takes several people (checkboxes posting `.userId` once
 * each) who fill the seat in turn over the sessions. With `sharedHelpers`, the seat's helpers are not
 * asked here: one `SeatHelpers` block of the form asks each once for every seat that uses it.
 */
export type SeatWay = 'llm' | 'human' | 'claimable' | 'proxy' | `program:${string}`

export interface SeatPickerProps {
  decl: Pick<SeatDecl, 'name' | 'label' | 'kinds' | 'programs' | 'helpers' | 'description'>
  models: ModelChoice[]
  people: Choice[]
  /** Offer "any member who claims it" for a seat people may fill (default true). */
  claimable?: boolean
  /** Labels of the ways, to say them in the protocol's words. */
  labels?: Partial<Record<SeatWay, string>>
  /** What the form shows under the legend (default: the declaration's description). */
  intro?: React.ReactNode
  /** The way chosen first (default: the first the study can offer). */
  defaultWay?: SeatWay
  /** Ask for the temperature of an LLM (default true), starting at `temperatureDefault` (default 0). */
  temperature?: boolean
  temperatureDefault?: string
  temperatureHint?: string
  /** The label of the person's select (default "Person"), or of the people's group with `roundRobin`. */
  personLabel?: string
  /** A person's way takes several people, who fill the seat in turn over the sessions (round robin). */
  roundRobin?: boolean
  /** The labels and hints of an LLM's fields (defaults: "Model", "Model override", "Temperature"). */
  modelLabel?: string
  modelHint?: string
  modelNameLabel?: string
  modelNameHint?: string
  temperatureLabel?: string
  /** The seat's helpers are asked once for several seats, by `SeatHelpers` (so not here). */
  sharedHelpers?: boolean
  /** The chosen way, when the form keeps it (e.g. to rule out a combination of seats); else the picker does. */
  way?: SeatWay
  onWayChange?: (way: SeatWay) => void
}

const DEFAULT_LABELS = {
  llm: 'An LLM',
  human: 'A person of the study',
  claimable: 'Any member who claims it',
  proxy: "The ground-truth proxy (answers the dataset's reference)",
} as const

export function SeatPicker({
  decl,
  models,
  people,
  claimable = true,
  labels = {},
  intro,
  defaultWay,
  temperature = true,
  temperatureDefault = '0',
  temperatureHint,
  personLabel = 'Person',
  roundRobin = false,
  modelLabel = 'Model',
  modelHint,
  modelNameLabel = 'Model override',
  modelNameHint = 'Optional.',
  temperatureLabel = 'Temperature',
  sharedHelpers = false,
  way: chosen,
  onWayChange,
}: SeatPickerProps) {
  const name = (field: string) => `seats.${decl.name}.${field}`
  const ways: Array<{ way: SeatWay; label: string; disabled: boolean }> = []
  for (const kind of decl.kinds) {
    if (kind === 'llm') ways.push({ way: 'llm', label: labels.llm ?? DEFAULT_LABELS.llm, disabled: !models.length })
    if (kind === 'human') {
      ways.push({ way: 'human', label: labels.human ?? DEFAULT_LABELS.human, disabled: !people.length })
      if (claimable)
        ways.push({ way: 'claimable', label: labels.claimable ?? DEFAULT_LABELS.claimable, disabled: false })
    }
    if (kind === 'proxy') ways.push({ way: 'proxy', label: labels.proxy ?? DEFAULT_LABELS.proxy, disabled: false })
    if (kind === 'program')
      for (const p of decl.programs ?? [])
        ways.push({ way: `program:${p}`, label: labels[`program:${p}`] ?? `The program "${p}"`, disabled: false })
  }
  const [own, setOwn] = useState<SeatWay | undefined>(
    defaultWay && ways.some((w) => w.way === defaultWay && !w.disabled)
      ? defaultWay
      : ways.find((w) => !w.disabled)?.way,
  )
  const way = chosen ?? own
  const setWay = (w: SeatWay) => {
    setOwn(w)
    onWayChange?.(w)
  }
  const errors = useContext(FieldErrorsContext)?.[`seats.${decl.name}`]
  const errId = useId()
  const helpers = sharedHelpers ? [] : (decl.helpers ?? []).filter((h) => way && helperFor(h, way))
  return (
    <fieldset
      className="space-y-3 rounded-md border border-stone-200 p-3"
      aria-invalid={errors ? true : undefined}
      aria-describedby={errors ? errId : undefined}
    >
      <legend className="px-1 text-sm font-semibold text-stone-900">{decl.label}</legend>
      {(intro ?? decl.description) ? <p className="text-xs text-stone-500">{intro ?? decl.description}</p> : null}
      {ways.length > 1 ? (
        <div className="flex flex-wrap gap-4 text-sm">
          {ways.map((w) => (
            <label key={w.way} className="flex items-center gap-2">
              <input
                type="radio"
                name={name('kind')}
                value={w.way}
                checked={way === w.way}
                disabled={w.disabled}
                onChange={() => setWay(w.way)}
              />
              {w.label}
            </label>
          ))}
        </div>
      ) : way ? (
        <input type="hidden" name={name('kind')} value={way} />
      ) : null}
      {way === 'llm' ? (
        <div className="grid gap-3 sm:grid-cols-3">
          <div className="sm:col-span-3">
            <SelectField name={name('model')} label={modelLabel} options={models} hint={modelHint} />
          </div>
          <Field name={name('modelName')} label={modelNameLabel} hint={modelNameHint} />
          {temperature ? (
            <Field
              name={name('temperature')}
              label={temperatureLabel}
              type="number"
              defaultValue={temperatureDefault}
              hint={temperatureHint}
            />
          ) : null}
        </div>
      ) : way === 'human' && roundRobin ? (
        <fieldset>
          <legend className="text-sm font-medium text-stone-800">{personLabel}</legend>
          <p className="text-xs text-stone-500">The sessions go to the people chosen in turn (round robin).</p>
          <div className="mt-1 grid gap-1 sm:grid-cols-2">
            {people.map((p) => (
              <label key={p.value} className="flex items-center gap-2 text-sm">
                <input type="checkbox" name={name('userId')} value={p.value} /> {p.label}
              </label>
            ))}
          </div>
        </fieldset>
      ) : way === 'human' ? (
        <SelectField name={name('userId')} label={personLabel} options={people} />
      ) : way === 'claimable' ? (
        <p className="text-sm text-stone-600">
          Every session appears in the members' work queues until someone claims it.
        </p>
      ) : null}
      {helpers.map((h) => (
        <SelectField key={h.name} name={name(`helpers.${h.name}`)} label={h.label} options={models} />
      ))}
      {errors ? (
        <p id={errId} data-field-error={`seats.${decl.name}`} className="text-sm text-red-700">
          {errors.join(' ')}
        </p>
      ) : null}
    </fieldset>
  )
}

/** Whether a seat filled in this way uses the helper (its declaration's `for`, else every way but a person's). */
export function helperFor(h: Pick<HelperDecl, 'for'>, way: SeatWay): boolean {
  if (way === 'human' || way === 'claimable') return false
  return !h.for || h.for.some((k) => way.startsWith(k))
}

export interface SeatHelpersProps {
  /** The seats whose helpers are asked here (each helper name once, for every seat that uses it). */
  decls: ReadonlyArray<Pick<SeatDecl, 'helpers'>>
  models: ModelChoice[]
  /** The legend of the block (default "Helper models"); none when `legend` is null. */
  legend?: string | null
  /** Per helper: its label (default: the first declaration's), a hint, and the label of a model override. */
  fields?: Record<string, { label?: string; hint?: string; modelNameLabel?: string }>
}

/**
 * The helper models of several seats asked once (e.g. one checker for both seats that use it): posts
 * `helpers.<helper>` (a model choice) and `helpers.<helper>.modelName` (when the form asks for an
 * override); `seatsFromForm` gives it to every seat whose way uses the helper and that names none of
 * its own. Pair with `sharedHelpers` on those seats' pickers.
 */
export function SeatHelpers({ decls, models, legend = 'Helper models', fields = {} }: SeatHelpersProps) {
  const helpers = new Map<string, HelperDecl>()
  for (const d of decls) for (const h of d.helpers ?? []) if (!helpers.has(h.name)) helpers.set(h.name, h)
  if (!helpers.size) return null
  const body = [...helpers.values()].map((h) => {
    const f = fields[h.name] ?? {}
    return (
      <Fragment key={h.name}>
        <SelectField name={`helpers.${h.name}`} label={f.label ?? h.label} options={models} hint={f.hint} />
        {f.modelNameLabel ? <Field name={`helpers.${h.name}.modelName`} label={f.modelNameLabel} /> : null}
      </Fragment>
    )
  })
  return (
    <fieldset className="grid gap-4 sm:grid-cols-2">
      {legend === null ? null : <legend className="mb-1 text-sm font-semibold text-stone-900">{legend}</legend>}
      {body}
    </fieldset>
  )
}
