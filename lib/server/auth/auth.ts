import { APIError, betterAuth } from 'better-auth'
import { prismaAdapter } from 'better-auth/adapters/prisma'
import { createAuthMiddleware } from 'better-auth/api'
import { nextCookies } from 'better-auth/next-js'
import { CLIENT_ADDRESS_HEADER, clientAddress } from '@/lib/server/auth/client-address'
import { consumeGuess, guessSucceeded, signInAccount, tooManyAttemptsMessage } from '@/lib/server/auth/sign-in-limit'
import { db } from '@/lib/server/db'
import { writeAudit } from '@/lib/server/audit'

/** The origins the app is served from (sign-in origin checks, cookie-authenticated REST mutations). */
export function trustedOrigins(): string[] {
  const port = process.env.PORT ?? '3000'
  const configured = (process.env.PARLEY_TRUSTED_ORIGINS ?? '').split(',').map((s) => s.trim())
  return [process.env.BETTER_AUTH_URL, ...configured, `http://localhost:${port}`, `http://127.0.0.1:${port}`].filter(
    (o): o is string => Boolean(o),
  )
}

/** What a sign-in request guesses: the account named by its email, from the client's address. */
function signInGuess(ctx: { body?: unknown; headers?: Headers }) {
  const body = ctx.body as { email?: unknown } | undefined
  const email = typeof body?.email === 'string' ? body.email : ''
  return { account: signInAccount(email), client: clientAddress(ctx.headers ?? new Headers()) }
}

/** better-auth's INVALID_EMAIL_OR_PASSWORD error (a test compares the two answers). */
const WRONG_PASSWORD = { code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Invalid email or password' }

const sessionHours = Number(process.env.PARLEY_SESSION_HOURS ?? 24 * 7)

function createAuth() {
  return betterAuth({
    appName: 'Parley',
    secret: process.env.BETTER_AUTH_SECRET,
    baseURL: process.env.BETTER_AUTH_URL,
    trustedOrigins: trustedOrigins(),
    database: prismaAdapter(db, { provider: 'postgresql' }),
    emailAndPassword: {
      enabled: true,
      // Accounts are created by admins (or the seed / CLI); nobody signs themselves up.
      disableSignUp: true,
      minPasswordLength: 8,
      maxPasswordLength: 128,
    },
    session: {
      expiresIn: Math.round(sessionHours * 3600),
      updateAge: Math.min(24 * 3600, Math.round((sessionHours * 3600) / 2)),
    },
    user: {
      additionalFields: {
        role: { type: 'string', required: false, defaultValue: 'viewer', input: false },
        disabled: { type: 'boolean', required: false, defaultValue: false, input: false },
      },
    },
    // better-auth's own in-memory limiter stays as a coarse guard on its HTTP routes; sign-in is
    // limited by the hook below, in PostgreSQL, per account and per client, on every path.
    rateLimit: {
      enabled: process.env.PARLEY_AUTH_RATE_LIMIT !== 'off',
      window: 60,
      max: 300,
      // Not its default 3 per 10 s per address for sign-in: the hook below does that job.
      customRules: { '/sign-in/email': false },
    },
    advanced: {
      // The client address Parley worked out (socket, or a trusted proxy's forwarded header), set by
      // withClientAddress() on every way into better-auth; never a header the client controls.
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
    },
    hooks: {
      // Run for better-auth's HTTP route and for direct auth.api.signInEmail() calls (the sign-in
      // page's server action, /setup) alike: the attempt is counted before the password is looked
      // at, and taken back when it was right (lib/server/auth/sign-in-limit.ts).
      before: createAuthMiddleware(async (ctx) => {
        if (ctx.path !== '/sign-in/email') return
        const allowance = await consumeGuess(signInGuess(ctx))
        if (!allowance.ok) {
          throw new APIError(
            'TOO_MANY_REQUESTS',
            { code: 'TOO_MANY_SIGN_IN_ATTEMPTS', message: tooManyAttemptsMessage(allowance) },
            { 'Retry-After': String(allowance.retryAfterSeconds) },
          )
        }
      }),
      after: createAuthMiddleware(async (ctx) => {
        if (ctx.path !== '/sign-in/email') return
        const returned = ctx.context.returned
        const signedIn = returned !== undefined && !(returned instanceof APIError) && !(returned instanceof Error)
        if (signedIn) await guessSucceeded(signInGuess(ctx))
      }),
    },
    databaseHooks: {
      session: {
        create: {
          async before(session) {
            const user = await db.user.findUnique({ where: { id: session.userId }, select: { disabled: true } })
            // Exactly better-auth's wrong-password answer: a different one would confirm that the
            // password was right (it is checked before a session is created).
            if (user?.disabled) throw APIError.from('UNAUTHORIZED', WRONG_PASSWORD)
            return { data: session }
          },
          async after(session) {
            const user = await db.user.findUnique({ where: { id: session.userId }, select: { email: true } })
            await writeAudit(db, {
              actor: { userId: session.userId, email: user?.email ?? null, via: 'session' },
              action: 'auth.sign-in',
              resourceType: 'user',
              resourceId: session.userId,
            })
          },
        },
      },
    },
    plugins: [nextCookies()],
    telemetry: { enabled: false },
  })
}

type Auth = ReturnType<typeof createAuth>
const g = globalThis as unknown as { parleyAuth?: Auth }
/** Created lazily so that importing this module (e.g. during `next build`) needs no database or secret. */
export function getAuth(): Auth {
  g.parleyAuth ??= createAuth()
  return g.parleyAuth
}
