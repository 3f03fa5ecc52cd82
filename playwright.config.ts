import { defineConfig } from '@playwright/test'

const port = Number(process.env.PARLEY_E2E_PORT ?? 3100)
const baseURL = `http://127.0.0.1:${port}`

/**
 * End-to-end tests in Debian's Chromium (never a downloaded browser) against `next start` on a
 * database prepared by e2e/global-setup.ts. `npm test` builds first and passes DATABASE_URL.
 */
export default defineConfig({
  testDir: './e2e',
  globalSetup: './e2e/global-setup.ts',
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: process.env.CI ? [['list']] : [['list']],
  use: {
    baseURL,
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--headless',
        '--disable-gpu',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
  webServer: {
    // What production runs (npm run start:next): scripts/serve.mjs, here with one web process, so
    // the browser tests share the CI machine's two cores with one server process and Chromium. The
    // default (one per core, at most two) is served and tested in tests/integration/web-processes.test.ts.
    command: `node scripts/serve.mjs -p ${port} -H 127.0.0.1`,
    url: `${baseURL}/api/v1/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'ignore',
    stderr: 'pipe',
    env: {
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? 'e2e-secret-e2e-secret-e2e-secret-0123456789',
      BETTER_AUTH_URL: baseURL,
      PORT: String(port),
      PARLEY_DEMO: '1',
      PARLEY_SIGNIN_PER_MINUTE: '10000',
      PARLEY_WEB_PROCESSES: '1',
      NEXT_TELEMETRY_DISABLED: '1',
    },
  },
})
