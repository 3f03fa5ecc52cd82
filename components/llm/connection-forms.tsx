'use client'

import {
  createConnectionAction,
  deleteConnectionAction,
  moveConnectionAction,
  testConnectionAction,
  updateConnectionAction,
} from '@/app/actions/llm'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'

type Opt = Array<{ value: string; label: string }>

const INTERNAL_HOSTS_HINT =
  'Internal addresses (localhost, private networks) are for admins, or hosts an admin allowed.'

export function CreateConnectionForm({
  providers,
  owners,
  defaultOwner,
  internalHosts,
}: {
  providers: Opt
  owners: Opt
  /** The study the person is working in (or the one the page was opened for). */
  defaultOwner?: string
  /** Whether this person may point connections at internal addresses (connections:internal-hosts). */
  internalHosts: boolean
}) {
  return (
    <ActionForm action={createConnectionAction}>
      <div className="grid gap-3 sm:grid-cols-2">
        <Field name="name" label="Name" placeholder="Lab vLLM server" required />
        <SelectField name="provider" label="Provider" options={providers} defaultValue="openai-compatible" />
        <Field
          name="baseUrl"
          label="Base URL"
          placeholder={internalHosts ? 'http://localhost:11434/v1' : 'https://openrouter.ai/api/v1'}
          hint={`Leave empty for api.openai.com. Azure: https://RESOURCE.openai.azure.com/openai/v1${internalHosts ? '' : `. ${INTERNAL_HOSTS_HINT}`}`}
        />
        <Field
          name="apiKey"
          label="API key"
          type="password"
          autoComplete="off"
          hint="Encrypted at rest; never shown again."
        />
        <Field name="defaultModel" label="Default model" placeholder="gpt-4o-mini, llama3.1, …" required />
        <SelectField
          name="studyId"
          label="Available to"
          options={owners}
          defaultValue={defaultOwner}
          hint="Starts with the study you are working in; you can move the connection later."
        />
        <Field name="timeoutMs" label="Request timeout (ms)" type="number" defaultValue="60000" />
        <Field name="maxConcurrency" label="Max concurrent requests" type="number" defaultValue="4" />
        <Field name="requestsPerMinute" label="Requests per minute" type="number" hint="Empty: no limit." />
        <Field name="tokensPerMinute" label="Tokens per minute" type="number" hint="Empty: no limit." />
      </div>
      <Field
        name="extraHeaders"
        label="Extra headers (JSON)"
        placeholder='{"X-Team": "radiology"}'
        hint="Values are encrypted like the key and shown only as …abcd."
        multiline
      />
      <SubmitButton pendingText="Adding…">Add connection</SubmitButton>
    </ActionForm>
  )
}

/** The stored extra headers as the server sends them: names with masked values, never the values. */
function storedHeaders(headers: Record<string, string>): string {
  const entries = Object.entries(headers)
  if (!entries.length) return 'No extra headers stored.'
  return `Stored: ${entries.map(([name, masked]) => `${name}: ${masked}`).join(', ')}.`
}

export function EditConnectionForm({
  c,
}: {
  c: {
    id: string
    name: string
    baseUrl: string
    defaultModel: string
    apiKeyMasked: string
    timeoutMs: number
    maxConcurrency: number
    requestsPerMinute: number | null
    tokensPerMinute: number | null
    extraHeaders: Record<string, string>
    provider: string
  }
}) {
  return (
    <ActionForm action={updateConnectionAction}>
      <input type="hidden" name="connectionId" value={c.id} />
      <div className="grid gap-3 sm:grid-cols-2">
        <Field name="name" label="Name" defaultValue={c.name} required />
        {c.provider !== 'demo' && <Field name="baseUrl" label="Base URL" defaultValue={c.baseUrl} required />}
        {c.provider !== 'demo' && (
          <Field
            name="apiKey"
            label="Replace API key"
            type="password"
            autoComplete="off"
            hint={`Stored key: ${c.apiKeyMasked}. Leave empty to keep it; changing the base URL or the extra headers needs it again.`}
          />
        )}
        <Field name="defaultModel" label="Default model" defaultValue={c.defaultModel} required />
        <Field name="timeoutMs" label="Request timeout (ms)" type="number" defaultValue={String(c.timeoutMs)} />
        <Field
          name="maxConcurrency"
          label="Max concurrent requests"
          type="number"
          defaultValue={String(c.maxConcurrency)}
        />
        <Field
          name="requestsPerMinute"
          label="Requests per minute"
          type="number"
          defaultValue={c.requestsPerMinute?.toString() ?? ''}
        />
        <Field
          name="tokensPerMinute"
          label="Tokens per minute"
          type="number"
          defaultValue={c.tokensPerMinute?.toString() ?? ''}
        />
      </div>
      <Field
        name="extraHeaders"
        label="Replace extra headers (JSON)"
        placeholder='{"X-Api-Key": "…"}'
        hint={`${storedHeaders(c.extraHeaders)} Leave empty to keep them; a JSON object replaces them all ({} removes them).`}
        multiline
      />
      <SubmitButton>Save connection</SubmitButton>
    </ActionForm>
  )
}

export function TestConnectionForm({ connectionId }: { connectionId: string }) {
  return (
    <ActionForm
      action={testConnectionAction}
      render={(state) => {
        const models = state.data?.models as string[] | null | undefined
        const modelsError = state.data?.modelsError as string | null | undefined
        return (
          <div className="text-sm">
            {models && (
              <p>
                <span className="font-medium">Models listed:</span> {models.length ? models.join(', ') : 'none'}
              </p>
            )}
            {modelsError && (
              <p className="text-stone-600">Listing models failed ({modelsError}); the chat request worked.</p>
            )}
          </div>
        )
      }}
    >
      <input type="hidden" name="connectionId" value={connectionId} />
      <p className="text-sm text-stone-600">Lists the models and sends a one-token request (recorded in Calls).</p>
      <SubmitButton variant="secondary" pendingText="Testing…">
        Test connection
      </SubmitButton>
    </ActionForm>
  )
}

export function DeleteConnectionForm({ connectionId }: { connectionId: string }) {
  return (
    <ActionForm action={deleteConnectionAction}>
      <input type="hidden" name="connectionId" value={connectionId} />
      <SubmitButton variant="danger">Delete connection</SubmitButton>
    </ActionForm>
  )
}

/** Move a connection to another of the person's studies (or make it global, for admins). */
export function MoveConnectionForm({
  connectionId,
  owners,
  current,
}: {
  connectionId: string
  owners: Opt
  current: string
}) {
  return (
    <ActionForm action={moveConnectionAction} className="flex flex-wrap items-end gap-2 space-y-0">
      <input type="hidden" name="connectionId" value={connectionId} />
      <SelectField name="studyId" label="Move to" options={owners} defaultValue={current} />
      <SubmitButton variant="secondary" pendingText="Moving…">
        Move
      </SubmitButton>
    </ActionForm>
  )
}
