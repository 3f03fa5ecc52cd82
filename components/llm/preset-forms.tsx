'use client'

import { createPresetAction, updatePresetAction } from '@/app/actions/llm'
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

function SettingsFields({ connections, s }: { connections: Opt; s?: Settings }) {
  const str = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v))
  return (
    <>
      <div className="grid gap-3 sm:grid-cols-2">
        <SelectField name="connectionId" label="Connection" options={connections} defaultValue={s?.connectionId} />
        <Field name="model" label="Model" defaultValue={s?.model} required />
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
