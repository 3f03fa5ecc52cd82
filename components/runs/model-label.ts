/** A connection as the run pages name it. */
export type ConnectionNames = Readonly<Record<string, { name: string; defaultModel: string; provider?: string }>>

/** An LLM reference of a seat: connection, model (absent: the connection's default), temperature. */
export type ModelRef = { connectionId: string; model?: string; name?: string; temperature?: number }

/**
 * The model a reference runs, by name: its own model, else its connection's default model (runs made
 * before seats named their model), with the preset's name when it has one.
 */
export function modelOf(ref: ModelRef, connections: ConnectionNames): string {
  const model = ref.model || connections[ref.connectionId]?.defaultModel
  if (!model) return 'a removed connection’s default model'
  return ref.name && ref.name !== model ? `${model} (${ref.name})` : model
}

/** The connection of a reference, by name (its id when it was removed). */
export function connectionOf(ref: ModelRef, connections: ConnectionNames): string {
  const c = connections[ref.connectionId]
  return c ? `“${c.name}”${c.provider === 'demo' ? ' (simulated)' : ''}` : `a removed connection (${ref.connectionId})`
}

/** "gpt-4o on “Lab OpenAI”, temperature 0.2". */
export function modelLabel(ref: ModelRef, connections: ConnectionNames): string {
  return `${modelOf(ref, connections)} on ${connectionOf(ref, connections)}${ref.temperature !== undefined ? `, temperature ${ref.temperature}` : ''}`
}
