import path from 'node:path'
import { defineConfig } from 'vitest/config'

// The DB-free LLM layer: no global database setup. `npx vitest run lib/llm --config vitest.llm.config.ts`
export default defineConfig({
  resolve: {
    alias: { '@': path.resolve(import.meta.dirname) },
  },
  test: {
    include: ['lib/llm/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
})
