import type { Role } from '@/lib/server/auth/roles'

/** Who is acting: a signed-in person, an API key on their behalf, the CLI or the system. */
export interface Actor {
  userId: string
  email: string
  name: string
  role: Role
  /** "session", "api-key:<prefix>", "cli", "system" */
  via: string
}
