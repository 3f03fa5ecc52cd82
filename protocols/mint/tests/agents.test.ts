import { describe, expect, it } from 'vitest'
import type { AgentContext, ExecResult } from '@/lib/server/sdk'
import { mintConfig, mintProtocol } from '@/protocols/mint/core/protocol'
import { checkAgent, earlierCells, toolAgent } from '@/protocols/mint/server/agents'
import { INSTALL_HINT } from '@/protocols/mint/server/sandbox'

/**
 * The program seats' own logic on a hand-made step context (its `exec` answers as the engine's does when
 * the sandbox cannot start): the step stalls with a message that says the tool is unavailable, why, and
 * how to install it, instead of writing an observation the model would read as its code's output.
 */
const instance = { id: 't1', dataset: 'gsm8k' as const, prompt: 'How many?', reference: '12' }

function ctxAfter(replies: string[], exec: ExecResult) {
  const config = mintConfig.parse({})
  // Every reply but the last is answered; the last is left for the seat under test.
  const last = replies.at(-1) as string
  let state = mintProtocol.init(config, instance)
  let seq = 0
  for (const content of replies.slice(0, -1)) {
    state = mintProtocol.apply(state, { seq: ++seq, sender: 'agent', kind: 'turn', content, error: null })
    if (state.pending === 'execute')
      state = mintProtocol.apply(state, { seq: ++seq, sender: 'tool', kind: 'observation', output: 'ok', done: false })
  }
  state = mintProtocol.apply(state, { seq: ++seq, sender: 'agent', kind: 'turn', content: last, error: null })
  const ask = mintProtocol.next(state)
  const calls: Array<{ program: string; input: unknown }> = []
  const ctx = {
    state,
    config,
    instance,
    session: { instance },
    ask,
    async exec(program: string, input: unknown) {
      calls.push({ program, input })
      return exec
    },
  } as unknown as AgentContext<typeof mintProtocol>
  return { ctx, calls }
}

const failed: ExecResult = {
  output: null,
  exitStatus: 1,
  limitsHit: null,
  error: 'The Python sandbox is unavailable: bubblewrap (bwrap) is not installed',
  durationMs: 1,
  reused: false,
}

describe('MINT program seats', () => {
  it('the tool runs the latest code after the earlier cells; an unavailable sandbox stalls the step, saying why', async () => {
    const { ctx, calls } = ctxAfter(
      ['<execute> a = 1 </execute>', 'no code here', '<execute> print(a) </execute>'],
      failed,
    )
    expect(earlierCells(ctx.state)).toEqual(['a = 1'])
    await expect(toolAgent(ctx)).rejects.toThrow(
      `MINT's Python tool is unavailable: The Python sandbox is unavailable: bubblewrap (bwrap) is not installed. Install it with: ${INSTALL_HINT}`,
    )
    // A reasoning task of a set without a corpus: the sandbox defines the wikipedia_search that says so.
    expect(calls).toEqual([{ program: 'python', input: { cells: ['a = 1'], code: 'print(a)', withoutCorpus: true } }])
  })

  it('the success check judges a reasoning proposal without the sandbox', async () => {
    const right = ctxAfter(['<solution> 12 </solution>'], failed)
    expect((await checkAgent(right.ctx)).message).toMatchObject({ sender: 'env', correct: true })
    expect(right.calls).toEqual([])
    const wrong = ctxAfter(['<solution> 13 </solution>'], failed)
    expect((await checkAgent(wrong.ctx)).message).toMatchObject({ sender: 'env', correct: false })
  })
})
