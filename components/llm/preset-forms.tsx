'use client'

import { useEffect, useId, useState } from 'react'
import { connectionModelsAction, createPresetAction, updatePresetAction } from '@/app/actions/llm'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'

type Opt = Array<{ value: string; label: string }>
type Settings = {
  connectionId: string
  model: string
  temperature: number | null
  topP: number | null
  maxTokens: number | null
  seed: number | null
  systemPrompt: string
  responseFormat: string
  jsonSchema: unknown
  vision: boolean
}

const FORMATS = [
  { value: 'text', label: 'Text' },
  { value: 'json_object', label: 'JSON object' },
  { value: 'json_schema', label: 'JSON schema (structured output)' },
]

/**
 * The connection and the model: the model field offers what the chosen connection lists (its
 * GET /models, asked when the connection changes), and any other name can still be typed.
 */
function ConnectionAndModel({
  connections,
  connectionId,
  model,
}: {
  connections: Opt
  connectionId?: string
  model?: string
}) {
  const id = useId()
  const [connection, setConnection] = useState(connectionId ?? connections[0]?.value ?? '')
  const [value, setValue] = useState(model ?? '')
  const [listed, setListed] = useState<{ for: string; models: string[]; error: string | null } | null>(null)
  useEffect(() => {
    if (!connection) return
    let live = true
    connectionModelsAction(connection).then(
      (r) => {
        if (!live) return
        setListed({ for: connection, models: r.models, error: r.error })
        // A new preset starts from the connection's default model.
        setValue((v) => v || r.defaultModel || '')
      },
      () => live && setListed({ for: connection, models: [], error: 'Could not list the models.' }),
    )
    return () => {
      live = false
    }
  }, [connection])
  const models = listed?.for === connection ? listed.models : []
  return (
    <>
      <div>
        <label htmlFor={`${id}-c`} className="block text-sm font-medium text-stone-800">
          Connection
        </label>
        <select
          id={`${id}-c`}
          name="connectionId"
          value={connection}
          onChange={(e) => setConnection(e.target.value)}
          className="mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm shadow-sm"
        >
          {connections.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-m`} className="block text-sm font-medium text-stone-800">
          Model
          <span aria-hidden="true" className="text-red-600">
            {' '}
            *
          </span>
        </label>
        <input
          id={`${id}-m`}
          name="model"
          list={`${id}-models`}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          required
          autoComplete="off"
          className="mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm shadow-sm"
        />
        <datalist id={`${id}-models`} data-testid="preset-models">
          {models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
        <p className="mt-1 text-xs text-stone-500" aria-live="polite">
          {listed?.for !== connection
            ? 'Asking the connection for its models…'
            : listed.error
              ? `The connection did not list its models (${listed.error}); type the name.`
              : `${models.length} model${models.length === 1 ? '' : 's'} offered by this connection; any other name can be typed.`}
        </p>
      </div>
    </>
  )
}

function SettingsFields({ connections, s }: { connections: Opt; s?: Settings }) {
  const str = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v))
  return (
    <>
      <div className="grid gap-3 sm:grid-cols-2">
        <ConnectionAndModel connections={connections} connectionId={s?.connectionId} model={s?.model} />
        <Field
          name="temperature"
          label="Temperature"
          type="number"
          defaultValue={str(s?.temperature)}
          hint="0–2; empty for the provider default."
        />
        <Field name="topP" label="top_p" type="number" defaultValue={str(s?.topP)} />
        <Field name="maxTokens" label="Max tokens" type="number" defaultValue={str(s?.maxTokens)} />
        <Field name="seed" label="Seed" type="number" defaultValue={str(s?.seed)} />
        <SelectField
          name="responseFormat"
          label="Output"
          options={FORMATS}
          defaultValue={s?.responseFormat ?? 'text'}
        />
        <label className="flex items-center gap-2 self-end text-sm">
          <input type="checkbox" name="vision" defaultChecked={s?.vision} /> Accepts images (vision)
        </label>
      </div>
      <Field name="systemPrompt" label="System prompt" defaultValue={s?.systemPrompt} multiline />
      <Field
        name="jsonSchema"
        label="JSON schema (for structured output)"
        defaultValue={s?.jsonSchema ? JSON.stringify(s.jsonSchema, null, 2) : ''}
        multiline
      />
    </>
  )
}

export function CreatePresetForm({ connections, owners }: { connections: Opt; owners: Opt }) {
  return (
    <ActionForm action={createPresetAction}>
      <div className="grid gap-3 sm:grid-cols-2">
        <Field name="name" label="Preset name" placeholder="Checker (temperature 0)" required />
        <SelectField name="studyId" label="Available to" options={owners} />
      </div>
      <SettingsFields connections={connections} />
      <SubmitButton>Create preset</SubmitButton>
    </ActionForm>
  )
}

export function NewVersionForm({
  presetId,
  connections,
  latest,
}: {
  presetId: string
  connections: Opt
  latest: Settings
}) {
  return (
    <ActionForm action={updatePresetAction}>
      <input type="hidden" name="presetId" value={presetId} />
      <SettingsFields connections={connections} s={latest} />
      <SubmitButton>Save as a new version</SubmitButton>
    </ActionForm>
  )
}
