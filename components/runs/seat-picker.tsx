'use client'

import { useContext, useId, useState } from 'react'
import { Field, FieldErrorsContext, SelectField } from '@/components/forms/action-form'
import type { Choice, ModelChoice } from '@/components/protocols/types'
import type { SeatDecl } from '@/lib/protocols/types'

/**
 * Who fills one seat, built from the protocol's seat declaration: a radio per way the seat may be
 * filled (an LLM, a named person, any member who claims it, the ground-truth proxy, each program it
 * allows) and that way's fields. It posts `seats.<seat>.kind` (llm | human | claimable | proxy |
 * program:<name>), `.model` (a model choice), `.modelName`, `.temperature`, `.userId` and
 * `.helpers.<helper>`, which `seatsFromForm` (lib/server/seat-form.ts) turns into the seat's `SeatFill`.
 * A form may rename what each way is called (its people know the seat as "the answerer" …).
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
  /** The label of the person's select (default "Person"). */
  personLabel?: string
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
  const [way, setWay] = useState<SeatWay | undefined>(
    defaultWay && ways.some((w) => w.way === defaultWay && !w.disabled)
      ? defaultWay
      : ways.find((w) => !w.disabled)?.way,
  )
  const errors = useContext(FieldErrorsContext)?.[`seats.${decl.name}`]
  const errId = useId()
  const helpers = (decl.helpers ?? []).filter(
    (h) => way && way !== 'human' && way !== 'claimable' && (!h.for || h.for.some((k) => way.startsWith(k))),
  )
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
            <SelectField name={name('model')} label="Model" options={models} />
          </div>
          <Field name={name('modelName')} label="Model override" hint="Optional." />
          {temperature ? (
            <Field
              name={name('temperature')}
              label="Temperature"
              type="number"
              defaultValue={temperatureDefault}
              hint={temperatureHint}
            />
          ) : null}
        </div>
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
        <p id={errId} className="text-sm text-red-700">
          {errors.join(' ')}
        </p>
      ) : null}
    </fieldset>
  )
}
