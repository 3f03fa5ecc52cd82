import { describe, expect, it } from 'vitest'
import { safeNext } from '@/lib/safe-next'

/** Where a browser would go if it followed `Location: <value>` from a page of the app. */
const landsOn = (location: string) => new URL(location, 'http://127.0.0.1:3000/sign-in').origin

const HOSTILE = [
  '/%09/evil.host',
  '/\t/evil.host',
  '/\t\t/evil.host',
  '\t//evil.host',
  ' //evil.host',
  '//evil',
  '//evil.host/studies',
  '///evil.host',
  '/\\evil',
  '/\\/evil.host',
  '\\\\evil.host',
  '/%5Cevil.host',
  '/%5C%5Cevil.host',
  'https://evil',
  'http://evil.host/sign-in',
  'HTTPS://evil.host',
  'https:evil.host',
  '//127.0.0.1:3000@evil.host',
  'javascript:alert(1)',
  'JavaScript:alert(document.domain)',
  ' javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '/\n/evil.host',
  '/%0a/evil.host',
  '/%0D%0A/evil.host',
  '/\r\n/evil.host',
  '/.//evil.host',
  '/x/..//evil.host',
  '/%2e//evil.host',
  'evil.host',
  '',
  '%',
  '/%E0%A4%A',
]

describe('safeNext', () => {
  it.each(HOSTILE)('refuses %j (goes to / instead)', (value) => {
    const out = safeNext(value)
    expect(out).toBe('/')
    expect(landsOn(out)).toBe('http://127.0.0.1:3000')
  })

  it.each([
    ['/studies/demo-study', '/studies/demo-study'],
    ['/work?status=open', '/work?status=open'],
    ['/sessions/abc?tab=m#message-3', '/sessions/abc?tab=m#message-3'],
    ['/studies?q=%2F%2Fevil', '/studies?q=%2F%2Fevil'],
    ['/', '/'],
  ])('keeps the same-origin path %j', (value, expected) => {
    expect(safeNext(value)).toBe(expected)
  })

  it('treats a missing value as /', () => {
    expect(safeNext(undefined)).toBe('/')
    expect(safeNext(null)).toBe('/')
  })
})
