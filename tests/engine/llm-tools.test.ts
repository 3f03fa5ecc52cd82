import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { llmTools } from '@/lib/server/engine/llm'
import { promptHash } from '@/lib/server/llm/runtime'
import * as sdk from '@/lib/server/sdk'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

/**
 * The decoding a plugin asks for reaches the model as asked: stop sequences (ReAct's agent stops
 * before "\nObservation t:"), top_p and the frequency/presence penalties (the relevance labeller's
 * 0.5 and 0) are passed through, and left out of the request when not given.
 */
const fake = useFakeLlm()

describe('the LLM tools pass the decoding a protocol asks for', () => {
  it('sends stop, top_p and the penalties when given, none of them when not', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher, [])
    const conn = await fakeConnection(study.id, fake())
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: 'ok' }] }])
    fake().reset()
    const tools = llmTools({ studyId: study.id, sessionId: 'no-session', seq: 1, clock: { llmMs: 0 } })
    const ref = { connectionId: conn.id, model: 'gen' }
    const messages = [{ role: 'user' as const, content: 'Thought 1:' }]
    await tools.chat(
      ref,
      {
        messages,
        temperature: 0,
        max_tokens: 100,
        top_p: 1,
        stop: ['\nObservation 1:'],
        frequency_penalty: 0.5,
        presence_penalty: 0,
      },
      { purpose: 'test' },
    )
    await tools.chat(ref, { messages }, { purpose: 'test' })
    const bodies = fake()
      .requests.filter((r) => r.path.endsWith('/chat/completions'))
      .map((r) => r.body as Record<string, unknown>)
    expect(bodies).toHaveLength(2)
    expect(bodies[0]).toMatchObject({
      temperature: 0,
      max_tokens: 100,
      top_p: 1,
      stop: ['\nObservation 1:'],
      frequency_penalty: 0.5,
      presence_penalty: 0,
    })
    expect(bodies[1]).not.toHaveProperty('stop')
    expect(bodies[1]).not.toHaveProperty('top_p')
    expect(bodies[1]).not.toHaveProperty('frequency_penalty')
    expect(bodies[1]).not.toHaveProperty('presence_penalty')
  })

  it('the penalties are part of the replay-cache key, and leave the key of a call without them unchanged', () => {
    const base = { model: 'gen', messages: [{ role: 'user' as const, content: 'q' }], temperature: 0 }
    const without = promptHash(base)
    // The key of a call without penalties is the key computed before they existed (no new fields).
    expect(without).toBe(
      createHash('sha256')
        .update(JSON.stringify({ model: 'gen', messages: base.messages, temperature: 0 }))
        .digest('hex'),
    )
    expect(promptHash({ ...base, frequency_penalty: 0.5 })).not.toBe(without)
    expect(promptHash({ ...base, presence_penalty: 0.5 })).not.toBe(without)
    expect(promptHash({ ...base, frequency_penalty: 0.5 })).not.toBe(promptHash({ ...base, presence_penalty: 0.5 }))
  })

  it("the SDK's llmTools (a plugin's own operation asking a model on demand) logs each call against its session and message", async () => {
    expect(sdk.llmTools).toBe(llmTools)
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher, [])
    const conn = await fakeConnection(study.id, fake())
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: 'a suggestion' }] }])
    const tools = sdk.llmTools({ studyId: study.id, sessionId: 'session-x', seq: 7, clock: { llmMs: 0 } })
    const r = await tools.chat(
      { connectionId: conn.id, model: 'gen' },
      { messages: [{ role: 'user', content: 'q' }] },
      { purpose: 'on-demand' },
    )
    expect(r.text).toBe('a suggestion')
    const calls = await db.llmCall.findMany({ where: { studyId: study.id, purpose: 'on-demand' } })
    expect(calls.map((c) => [c.sessionRef, c.messageRef, c.id])).toEqual([['session-x', '7', r.callId]])
  })
})
