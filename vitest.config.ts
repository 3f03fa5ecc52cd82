import path from 'node:path'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    alias: {
      '@': path.resolve(import.meta.dirname),
      // Next resolves these itself; outside Next they are no-ops.
      'server-only': path.resolve(import.meta.dirname, 'tests/support/empty.ts'),
    },
  },
  test: {
    include: ['lib/**/*.test.ts', 'tests/**/*.test.ts', 'scripts/**/*.test.ts', 'protocols/**/*.test.ts'],
    globalSetup: ['tests/support/global-setup.ts'],
    setupFiles: ['tests/support/file-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Integration tests share one database; files run one at a time to keep them independent.
    fileParallelism: false,
    pool: 'forks',
  },
})
