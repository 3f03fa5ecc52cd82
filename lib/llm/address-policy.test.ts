import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BlockedAddressError,
  nonPublicRange,
  parseAllowList,
  refusalForUrl,
  restrictedGuard,
  urlHost,
} from './address-policy'
import { createLlmClient, LlmError } from './client'
import { type FakeLlmServer, startFakeLlmServer } from './fake-server'
import { rejectionOf, uniqueId } from './test-support'
import { createNodeFetch } from './transport'

const none = restrictedGuard(parseAllowList(undefined))

describe('which addresses a restricted connection may reach', () => {
  it('refuses loopback, private, CGNAT, link-local and metadata, ULA, unspecified, multicast, reserved', () => {
    const refused = {
      '127.0.0.1': 'loopback',
      '127.8.9.10': 'loopback',
      '::1': 'loopback',
      '10.1.2.3': 'private',
      '172.16.0.1': 'private',
      '172.31.255.255': 'private',
      '192.168.1.1': 'private',
      '100.64.0.1': 'carrierGradeNat',
      '100.127.255.254': 'carrierGradeNat',
      '169.254.169.254': 'linkLocal',
      'fe80::1': 'linkLocal',
      'fd00:ec2::254': 'uniqueLocal',
      'fc00::1': 'uniqueLocal',
      '0.0.0.0': 'unspecified',
      '::': 'unspecified',
      '224.0.0.1': 'multicast',
      'ff02::1': 'multicast',
      '255.255.255.255': 'broadcast',
      '240.0.0.1': 'reserved',
      '::ffff:127.0.0.1': 'loopback', // IPv4-mapped IPv6 is the IPv4 address it carries
      '::ffff:169.254.169.254': 'linkLocal',
      '::ffff:a00:1': 'private',
    }
    for (const [address, range] of Object.entries(refused)) {
      expect([address, nonPublicRange(address)]).toEqual([address, range])
      expect(none(address, address)).toMatch(/only admins/)
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111']) {
      expect([address, nonPublicRange(address)]).toEqual([address, undefined])
      expect(none(address, address)).toBeUndefined()
    }
  })

  it('reads hosts the way the URL parser normalises them: decimal, hex, short and bracketed forms', () => {
    expect(urlHost('http://2130706433/v1')).toEqual({ host: '127.0.0.1', literal: true })
    expect(urlHost('http://0x7f.1/v1')).toEqual({ host: '127.0.0.1', literal: true })
    expect(urlHost('http://0177.0.0.1/')).toEqual({ host: '127.0.0.1', literal: true })
    expect(urlHost('http://127.1:8000/')).toEqual({ host: '127.0.0.1', literal: true })
    expect(urlHost('http://[::ffff:127.0.0.1]/')).toEqual({ host: '::ffff:7f00:1', literal: true })
    expect(urlHost('http://LOCALHOST./v1')).toEqual({ host: 'localhost', literal: false })
    expect(none('::ffff:7f00:1', '::ffff:7f00:1')).toMatch(/loopback/)
  })

  it('the allow-list takes host names, addresses and CIDR ranges', () => {
    const guard = restrictedGuard(parseAllowList('vllm.lab.internal, 10.0.0.5 192.168.0.0/16,::1'))
    expect(guard('VLLM.lab.internal', '10.9.9.9')).toBeUndefined()
    expect(guard('10.0.0.5', '10.0.0.5')).toBeUndefined()
    expect(guard('10.0.0.6', '10.0.0.6')).toMatch(/private/)
    expect(guard('x', '192.168.44.1')).toBeUndefined()
    expect(guard('x', '::ffff:192.168.44.1')).toBeUndefined()
    expect(guard('::1', '::1')).toBeUndefined()
    expect(guard('127.0.0.1', '127.0.0.1')).toMatch(/loopback/)
  })

  it('a name is resolved when checked: localhost is loopback', async () => {
    expect(await refusalForUrl('http://localhost:11434/v1', none)).toMatch(
      /localhost \((127\.0\.0\.1|::1)\) is a loopback/,
    )
    expect(await refusalForUrl('http://2130706433/v1', none)).toMatch(/127\.0\.0\.1 is a loopback/)
    expect(await refusalForUrl('http://[fd00:ec2::254]/', none)).toMatch(/unique local/)
    // A name that does not resolve now is left to the transport's check.
    expect(await refusalForUrl('http://no-such-host.invalid/v1', none)).toBeUndefined()
  })
})

describe('the guarded transport checks the address it connects to', () => {
  let server: FakeLlmServer
  beforeAll(async () => {
    server = await startFakeLlmServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it('refuses an IP literal and a name resolving to a refused address; never reaches the server', async () => {
    const guarded = createNodeFetch({ guard: none })
    try {
      const byIp = await rejectionOf(guarded(`${server.url}/models`))
      expect(byIp).toBeInstanceOf(BlockedAddressError)
      // The name goes through DNS in the agent's lookup (where a rebinding would show).
      const byName = await rejectionOf(guarded(`http://localhost:${server.port}/v1/models`))
      expect(byName).toBeInstanceOf(BlockedAddressError)
      expect((byName as Error).message).toMatch(/localhost \(.*\) is a loopback address/)
      const decimal = await rejectionOf(guarded(`http://2130706433:${server.port}/v1/models`))
      expect(decimal).toBeInstanceOf(BlockedAddressError)
      expect(server.requests).toHaveLength(0)
    } finally {
      guarded.close()
    }
    // Allowed by name, the same server answers.
    const allowed = createNodeFetch({ guard: restrictedGuard(parseAllowList('localhost')) })
    try {
      expect((await allowed(`http://localhost:${server.port}/v1/models`)).status).toBe(200)
    } finally {
      allowed.close()
    }
  })

  it('a client on it fails with kind blocked, at once (no retries), without the request being sent', async () => {
    const guarded = createNodeFetch({ guard: none })
    const c = createLlmClient({
      id: uniqueId(),
      baseURL: server.url,
      apiKey: 'sk-test-0123456789',
      timeoutMs: 2000,
      maxConcurrency: 2,
      retryBaseMs: 5,
      transport: guarded,
    })
    const before = server.requests.length
    const e = (await rejectionOf(
      c.chat({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] }),
    )) as LlmError
    expect(e).toBeInstanceOf(LlmError)
    expect(e.kind).toBe('blocked')
    expect(e.message).toMatch(/127\.0\.0\.1 is a loopback address/)
    expect(e.attempts).toHaveLength(1)
    expect(((await rejectionOf(c.listModels())) as LlmError).kind).toBe('blocked')
    expect(server.requests.length).toBe(before)
    guarded.close()
  })
})
