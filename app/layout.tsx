import type { Metadata } from 'next'
import { connection } from 'next/server'
import type { ReactNode } from 'react'
import { ZodJitless } from '@/components/zod-jitless'
import './globals.css'

export const metadata: Metadata = {
  title: { default: 'Parley', template: '%s · Parley' },
  description: 'A workbench where experts and annotators work with LLMs under formal interaction protocols.',
}

/**
 * Every page is rendered per request, none prerendered at build time: the Content-Security-Policy
 * (proxy.ts) gives each response a fresh nonce, and Next can put it on its scripts only while
 * rendering the request (a prerendered page, e.g. the 404 page, would have scripts without it).
 */
export default async function RootLayout({ children }: { children: ReactNode }) {
  await connection()
  return (
    <html lang="en">
      <body className="min-h-screen">
        <ZodJitless />
        {children}
      </body>
    </html>
  )
}
