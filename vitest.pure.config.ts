import path from 'node:path'
import { defineConfig } from 'vitest/config'

/**
 * Pure tests only (protocols, metrics, the database-free CLI commands): the aliases of
 * vitest.config.ts without its globalSetup, so no PostgreSQL is started.
 * `npx vitest run lib/protocols lib/metrics tests/cli-pxp.test.ts --config vitest.pure.config.ts`
 */
export default defineConfig({
  resolve: {
    alias: {
      '@': path.resolve(import.meta.dirname),
      'server-only': path.resolve(import.meta.dirname, 'tests/support/empty.ts'),
    },
  },
  test: {
    include: ['lib/**/*.test.ts', 'tests/**/*.test.ts', 'scripts/**/*.test.ts'],
    testTimeout: 30_000,
  },
})
