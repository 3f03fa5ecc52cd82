import { beforeAll, describe, expect, it } from 'vitest'
import {
  CLIENT_ADDRESS_HEADER,
  clientAddress,
  clientKey,
  installPeerCapture,
  PEER_HEADER,
  trustedProxies,
  withClientAddress,
} from '@/lib/server/auth/client-address'

beforeAll(() => installPeerCapture())

const h = (o: Record<string, string>) => new Headers(o)

describe('clientAddress', () => {
  it('trusts no forwarded header by default: the recorded socket address is the client', () => {
    const headers = h({ [PEER_HEADER]: '198.51.100.7', 'x-forwarded-for': '1.2.3.4', 'x-real-ip': '5.6.7.8' })
    expect(clientAddress(headers, [])).toBe('198.51.100.7')
  })

  it('reads IPv4-mapped IPv6 socket addresses as IPv4', () => {
    expect(clientAddress(h({ [PEER_HEADER]: '::ffff:127.0.0.1' }), [])).toBe('127.0.0.1')
  })

  it('behind trusted proxies takes the rightmost forwarded address that is not a proxy', () => {
    const proxies = ['10.0.0.0/8', '127.0.0.1']
    const headers = h({ [PEER_HEADER]: '127.0.0.1', 'x-forwarded-for': '6.6.6.6, 203.0.113.9, 10.1.2.3' })
    expect(clientAddress(headers, proxies)).toBe('203.0.113.9')
  })

  it('ignores forwarded headers from a peer that is not in the list', () => {
    const headers = h({ [PEER_HEADER]: '192.0.2.50', 'x-forwarded-for': '203.0.113.9' })
    expect(clientAddress(headers, ['10.0.0.0/8'])).toBe('192.0.2.50')
  })

  it("uses a trusted proxy's X-Real-IP when the forwarded chain holds only proxies", () => {
    // What Next does when a proxy sends X-Real-IP only: it fills X-Forwarded-For with the proxy's address.
    const headers = h({ [PEER_HEADER]: '10.0.0.5', 'x-forwarded-for': '10.0.0.5', 'x-real-ip': '203.0.113.77' })
    expect(clientAddress(headers, ['10.0.0.0/8'])).toBe('203.0.113.77')
    expect(clientAddress(headers, [])).toBe('10.0.0.5')
  })

  it('without a recorded socket address falls back to the last X-Forwarded-For hop (what Next writes there)', () => {
    expect(clientAddress(h({ 'x-forwarded-for': '1.1.1.1, 192.0.2.8' }), [])).toBe('192.0.2.8')
    expect(clientAddress(h({}), [])).toBe('unknown')
  })

  it('parses PARLEY_TRUSTED_PROXIES as a comma or space separated list, and refuses nothing on a bad entry', () => {
    expect(trustedProxies(' 10.0.0.0/8, 127.0.0.1  ::1 ')).toEqual(['10.0.0.0/8', '127.0.0.1', '::1'])
    expect(trustedProxies('')).toEqual([])
    expect(clientAddress(h({ [PEER_HEADER]: '10.0.0.1', 'x-forwarded-for': '9.9.9.9' }), ['not-an-ip'])).toBe(
      '10.0.0.1',
    )
  })

  it('overwrites a client-sent client-address header', () => {
    const out = withClientAddress(h({ [PEER_HEADER]: '192.0.2.1', [CLIENT_ADDRESS_HEADER]: '6.6.6.6' }))
    expect(out.get(CLIENT_ADDRESS_HEADER)).toBe('192.0.2.1')
  })
})

describe('clientKey', () => {
  it('keeps IPv4 addresses and groups IPv6 addresses by /64', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9')
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe(clientKey('2001:db8:1:2:bbbb::2'))
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'))
    expect(clientKey('unknown')).toBe('unknown')
  })
})
