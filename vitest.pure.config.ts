import { defineConfig } from 'vitest/config'
import base from './vitest.config'

/**
 * Database-free tests only (lib/llm, lib/tasks, the protocols' cores and file-based CLI commands): the
 * settings of vitest.config.ts without its globalSetup, so no PostgreSQL is started.
 * `npx vitest run lib/llm lib/tasks core/ /cli.test.ts --config vitest.pure.config.ts`
 */
export default defineConfig({
  resolve: base.resolve,
  test: { ...base.test, globalSetup: [], setupFiles: [] },
})
