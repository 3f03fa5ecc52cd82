import { fileURLToPath } from 'node:url'
import { defineConfig } from 'prisma/config'

// Prisma 7 does not read .env itself.
try {
  process.loadEnvFile()
} catch {}
// Pointing at an existing file stops the CLI from downloading the native schema engine for
// generate/validate/format. Migrations run through the WebAssembly engine: `npm run db:migrate`.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(new URL('./scripts/no-schema-engine.sh', import.meta.url))

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  ...(process.env.DATABASE_URL ? { datasource: { url: process.env.DATABASE_URL } } : {}),
})
