import { APIError, betterAuth } from 'better-auth'
import { prismaAdapter } from 'better-auth/adapters/prisma'
import { nextCookies } from 'better-auth/next-js'
import { db } from '@/lib/server/db'
import { writeAudit } from '@/lib/server/services/audit'

function trustedOrigins(): string[] {
  const port = process.env.PORT ?? '3000'
  const configured = (process.env.PARLEY_TRUSTED_ORIGINS ?? '').split(',').map((s) => s.trim())
  return [process.env.BETTER_AUTH_URL, ...configured, `http://localhost:${port}`, `http://127.0.0.1:${port}`].filter(
    (o): o is string => Boolean(o),
  )
}

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
    rateLimit: {
      enabled: process.env.PARLEY_AUTH_RATE_LIMIT !== 'off',
      window: 60,
      max: 300,
      customRules: {
        '/sign-in/email': { window: 60, max: Number(process.env.PARLEY_SIGNIN_PER_MINUTE ?? 20) },
      },
    },
    databaseHooks: {
      session: {
        create: {
          async before(session) {
            const user = await db.user.findUnique({ where: { id: session.userId }, select: { disabled: true } })
            if (user?.disabled) {
              throw new APIError('FORBIDDEN', { message: 'This account is disabled. Ask an admin to enable it.' })
            }
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
