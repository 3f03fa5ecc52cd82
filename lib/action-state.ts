/** What a form's server action returns to the page. Shared by server actions and client forms. */
export type ActionState = {
  ok: boolean
  message?: string
  error?: string
  fieldErrors?: Record<string, string[]>
  /** `error` only sums up `fieldErrors`: the form shows them beside their fields, not twice. */
  fieldsOnly?: boolean
  /** The request never reached the server (set in the browser): the form offers Retry. */
  retry?: boolean
  /** Data the form may show once (e.g. a new API key). Never put secrets other than the user's own here. */
  data?: Record<string, unknown>
} | null
