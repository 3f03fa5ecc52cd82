import { defineConfig } from 'vitest/config'
import base from './vitest.config'

/**
 * Database-free tests only (lib/llm, lib/protocols, lib/metrics, lib/tasks, the pxp CLI): the
 * settings of vitest.config.ts without its globalSetup, so no PostgreSQL is started.
 * `npx vitest run lib/llm lib/protocols lib/metrics lib/tasks tests/cli-pxp.test.ts tests/cli-evince.test.ts tests/cli-scorekeeping.test.ts --config vitest.pure.config.ts`
 */
export default defineConfig({
  resolve: base.resolve,
  test: { ...base.test, globalSetup: [], setupFiles: [] },
})
