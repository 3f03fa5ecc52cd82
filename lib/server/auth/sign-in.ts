import { getAuth } from '@/lib/server/auth/auth'
import { withClientAddress } from '@/lib/server/auth/client-address'
import { log } from '@/lib/server/log'

export type SignInResult = { ok: true } | { ok: false; error: string }

/**
 * Email + password sign-in as the sign-in page's server action does it: better-auth's signInEmail
 * with the request's headers (the session cookie is set through the nextCookies plugin inside a
 * request). Returns the message the page shows on refusal.
 */
export async function signInWithPassword(
  input: { email: string; password: string },
  headers: Headers,
): Promise<SignInResult> {
  try {
    await getAuth().api.signInEmail({
      body: { email: input.email, password: input.password },
      headers: withClientAddress(headers),
    })
    return { ok: true }
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode
    const message = (err as { body?: { message?: string } }).body?.message
    // 401 is a wrong email or password, or a disabled account: one answer for both (auth.ts).
    if (status === 401 || status === 403)
      return { ok: false, error: 'Wrong email or password. Check both and try again.' }
    if (status === 429)
      return { ok: false, error: message ?? 'Too many sign-in attempts. Wait a minute and try again.' }
    log().error({ err }, 'sign-in failed')
    return { ok: false, error: 'Sign-in failed on our side. Please try again.' }
  }
}
