import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createLlmClient } from './client'
import { DEMO_LABEL, DEMO_MODEL_ID, demoReply } from './demo-model'
import { type FakeLlmServer, startFakeLlmServer } from './fake-server'
import { uniqueId } from './test-support'

const user = (content: string) => [{ role: 'user', content }]

describe('demoReply', () => {
  it('is deterministic and labelled', () => {
    const a = demoReply({ messages: user('What is the capital of France?') })
    expect(demoReply({ messages: user('What is the capital of France?') })).toBe(a)
    expect(a.startsWith(DEMO_LABEL)).toBe(true)
    expect(a).toContain('capital of France')
    expect(demoReply({ messages: user('Just a note.') })).toMatch(
      /^\[Simulated demo model\] Noted your message \(3 words\)/,
    )
  })

  it('picks one of the offered options for multiple choice', () => {
    const q = 'Which diagnosis?\nA) Flu\nB) Cold\nC) Allergy'
    const r = demoReply({ messages: user(q) })
    expect(r).toMatch(/^\[Simulated demo model\] I choose (A\) Flu|B\) Cold|C\) Allergy)$/)
  })

  it('answers yes/no and relevance grades within the scale', () => {
    expect(demoReply({ messages: user('Is the sky green? Answer yes or no.') })).toMatch(/ (Yes|No)\.$/)
    for (const doc of ['doc one', 'doc two', 'doc three', 'doc four']) {
      const r = demoReply({ messages: user(`Grade the relevance of ${doc} on a scale 0-3.`) })
      const n = Number(r.slice(DEMO_LABEL.length))
      expect(n >= 0 && n <= 3 && Number.isInteger(n)).toBe(true)
    }
  })

  it('fills a JSON example found in the prompt, keeping its keys and types', () => {
    const r = JSON.parse(
      demoReply({
        messages: [
          { role: 'system', content: 'Reply as JSON like {"label": 1, "why": "…", "tags": ["x"], "sure": true}.' },
          { role: 'user', content: 'Document {not json} here' },
        ],
        response_format: { type: 'json_object' },
      }),
    )
    expect(Object.keys(r)).toEqual(['label', 'why', 'tags', 'sure'])
    expect(Number.isInteger(r.label)).toBe(true)
    expect(typeof r.why).toBe('string')
    expect(r.tags).toHaveLength(1)
    expect(typeof r.sure).toBe('boolean')
  })

  it('falls back to {answer, simulated} in JSON mode without a shape', () => {
    const r = JSON.parse(demoReply({ messages: user('Anything, in JSON'), response_format: { type: 'json_object' } }))
    expect(r.simulated).toBe(true)
    expect(String(r.answer).startsWith(DEMO_LABEL)).toBe(true)
  })
})

describe('the demo model over HTTP', () => {
  let server: FakeLlmServer
  beforeAll(async () => {
    server = await startFakeLlmServer({ defaultReply: 'demo' })
  })
  afterAll(async () => {
    await server.close()
  })
  const client = () =>
    createLlmClient({ id: uniqueId('demo'), baseURL: server.url, apiKey: 'demo', timeoutMs: 5000, maxConcurrency: 4 })

  it('answers through the openai SDK under the simulated model id', async () => {
    const r = await client().chat({ model: 'gpt-whatever', messages: [{ role: 'user', content: 'Hello?' }] })
    expect(r.model).toBe(DEMO_MODEL_ID)
    expect(r.text.startsWith(DEMO_LABEL)).toBe(true)
    const again = await client().chat({ model: 'gpt-whatever', messages: [{ role: 'user', content: 'Hello?' }] })
    expect(again.text).toBe(r.text)
  })

  const Verdict = z.object({
    verdict: z.enum(['support', 'refute', 'unsure']),
    confidence: z.number().min(0).max(1),
    reasons: z.array(z.string()).min(1),
  })

  it('satisfies a zod schema sent as json_schema, first time', async () => {
    const r = await client().structured(
      {
        model: DEMO_MODEL_ID,
        messages: [{ role: 'user', content: 'Judge the claim.' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'verdict', schema: z.toJSONSchema(Verdict) as Record<string, unknown> },
        },
      },
      Verdict,
    )
    expect(Verdict.parse(r.value)).toEqual(r.value)
    expect(r.attempts).toHaveLength(1)
  })

  it('satisfies a JSON Schema written in the prompt in json_object mode', async () => {
    const schema = JSON.stringify(z.toJSONSchema(Verdict))
    const r = await client().structured(
      {
        model: DEMO_MODEL_ID,
        messages: [
          { role: 'system', content: `Answer with JSON matching ${schema}` },
          { role: 'user', content: 'Judge.' },
        ],
      },
      Verdict,
    )
    expect(r.attempts).toHaveLength(1)
    expect(['support', 'refute', 'unsure']).toContain(r.value.verdict)
  })

  it('streams', async () => {
    const tokens: string[] = []
    const r = await client().stream(
      { model: DEMO_MODEL_ID, messages: [{ role: 'user', content: 'Tell me about the weather today please.' }] },
      { onToken: (d) => void tokens.push(d) },
    )
    expect(tokens.length).toBeGreaterThan(3)
    expect(tokens.join('')).toBe(r.text)
    expect(r.text.startsWith(DEMO_LABEL)).toBe(true)
  })
})
