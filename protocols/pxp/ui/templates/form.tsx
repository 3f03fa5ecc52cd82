'use client'

import { startTransition, useActionState, useState } from 'react'
import { createTemplateAction, tryMatchAction } from '@/protocols/pxp/ui/templates/actions'
import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'
import { Alert } from '@/components/ui/card'

const MODES = [
  { value: 'case-insensitive', label: 'Case-insensitive text' },
  { value: 'exact', label: 'Exact text' },
  { value: 'set', label: 'Set of items (order and case ignored)' },
  { value: 'regex', label: 'Regular expression (first group compared)' },
  { value: 'numeric', label: 'Number within a tolerance' },
]

/** Define a generic PXP task: prompts, output fields, labels, MATCH and AGREE. */
export function TemplateForm({ studyId }: { studyId: string }) {
  const [mode, setMode] = useState('case-insensitive')
  const [m, setM] = useState({ separator: ',', pattern: '', flags: 'i', tolerance: '0', relative: false })
  const input = 'mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm'
  return (
    <div className="space-y-6">
      <ActionForm action={createTemplateAction} className="max-w-3xl space-y-4">
        <input type="hidden" name="studyId" value={studyId} />
        <Field name="name" label="Name" required maxLength={120} placeholder="e.g. Paracetamol dose" />
        <Field
          name="systemPrompt"
          label="System prompt"
          multiline
          required
          hint="Who the model is and what it must do. The output format is added for you."
        />
        <Field
          name="queryPrompt"
          label="Question about an instance"
          multiline
          required
          hint="{field} is replaced by the instance's input field, e.g. “What dose of {drug} for {weight} kg?”"
        />
        <div className="grid gap-4 sm:grid-cols-2">
          <Field name="predictionField" label="Prediction field name" defaultValue="Prediction" />
          <Field name="explanationField" label="Explanation field name" defaultValue="Explanation" />
        </div>
        <Field
          name="labels"
          label="Label set (optional)"
          multiline
          hint="One label per line; the prediction must be one of them."
        />
        <fieldset className="space-y-3 rounded-md border border-stone-200 p-3">
          <legend className="px-1 text-sm font-semibold">MATCH: when do two predictions agree?</legend>
          <label className="block text-sm font-medium text-stone-800">
            Mode
            <select name="matchMode" value={mode} onChange={(e) => setMode(e.target.value)} className={input}>
              {MODES.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </label>
          {mode === 'set' && (
            <label className="block text-sm font-medium text-stone-800">
              Separator
              <input
                name="separator"
                value={m.separator}
                onChange={(e) => setM({ ...m, separator: e.target.value })}
                className={input}
              />
            </label>
          )}
          {mode === 'regex' && (
            <div className="grid gap-3 sm:grid-cols-[1fr_8rem]">
              <Field
                name="pattern"
                label="Pattern"
                hint="RE2 syntax (no backreferences or lookaround), run in linear time; the first capture group is compared."
              />
              <label className="block text-sm font-medium text-stone-800">
                Flags
                <input
                  name="flags"
                  value={m.flags}
                  onChange={(e) => setM({ ...m, flags: e.target.value })}
                  className={input}
                />
              </label>
            </div>
          )}
          {mode === 'numeric' && (
            <div className="grid gap-3 sm:grid-cols-2">
              <Field name="tolerance" label="Tolerance" type="number" defaultValue="0" />
              <label className="mt-6 flex items-center gap-2 text-sm">
                <input
                  type="checkbox"
                  name="relative"
                  checked={m.relative}
                  onChange={(e) => setM({ ...m, relative: e.target.checked })}
                />
                Relative (a fraction of the larger value)
              </label>
            </div>
          )}
        </fieldset>
        <Field
          name="agreePrompt"
          label="AGREE prompt (the checker answers Yes or No)"
          multiline
          defaultValue={'Given A: {A}\nand B: {B}\nare A and B consistent? Respond only with Yes or No.'}
          hint="{A} and {B} are the two explanations."
        />
        <SubmitButton pendingText="Saving…">Save template</SubmitButton>
      </ActionForm>
      <TryMatch mode={mode} m={m} />
    </div>
  )
}

/** Try the MATCH mode chosen above on two predictions (reads the pattern/tolerance from the form). */
function TryMatch({ mode, m }: { mode: string; m: { separator: string; flags: string; relative: boolean } }) {
  const [state, act, pending] = useActionState(tryMatchAction, null)
  const [a, setA] = useState('')
  const [b, setB] = useState('')
  const input = 'mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm'
  return (
    <section aria-labelledby="try-match" className="max-w-3xl rounded-md border border-dashed border-stone-300 p-3">
      <h2 id="try-match" className="text-sm font-semibold">
        Try MATCH
      </h2>
      <div className="mt-2 grid gap-3 sm:grid-cols-2">
        <label className="text-sm">
          First prediction
          <input value={a} onChange={(e) => setA(e.target.value)} className={input} />
        </label>
        <label className="text-sm">
          Second prediction
          <input value={b} onChange={(e) => setB(e.target.value)} className={input} />
        </label>
      </div>
      <button
        type="button"
        disabled={pending}
        className="mt-2 rounded-md border border-stone-300 bg-white px-3 py-1 text-sm hover:bg-stone-100"
        onClick={() => {
          const fd = new FormData()
          const val = (name: string) =>
            (document.querySelector(`[name="${name}"]`) as HTMLInputElement | null)?.value ?? ''
          fd.set('matchMode', mode)
          fd.set('separator', m.separator)
          fd.set('pattern', val('pattern'))
          fd.set('flags', m.flags)
          fd.set('tolerance', val('tolerance'))
          if (m.relative) fd.set('relative', 'on')
          fd.set('tryA', a)
          fd.set('tryB', b)
          startTransition(() => act(fd))
        }}
      >
        Try
      </button>
      <div className="mt-2" data-testid="try-result">
        {state?.error && <Alert>{state.error}</Alert>}
        {state?.ok && <Alert tone={state.data?.match ? 'success' : 'info'}>{state.message}</Alert>}
      </div>
    </section>
  )
}
