import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { describe, expect, it } from 'vitest'
import type { SessionViewProps, SetupFormProps, TurnFormProps } from '@/components/protocols/types'
import type { MintSessionView as View } from '@/protocols/mint/server/views'
import { mintSetupFromForm } from '@/protocols/mint/server/setup'
import { MintMessageBody } from '@/protocols/mint/ui/message-body'
import { MintRunSummary } from '@/protocols/mint/ui/run-summary'
import { MintSessionView } from '@/protocols/mint/ui/session-view'
import { MintSetupForm } from '@/protocols/mint/ui/setup-form'
import { MintTurnForm } from '@/protocols/mint/ui/turn-form'

/**
 * MINT's pages as the browser first gets them (rendered to markup): the model's output is text, never
 * HTML; the expert's page shows the ground truth only behind its banner; binary mode offers GOOD / BAD;
 * the set-up form says when the tool is unavailable and why; its fields read back into a run body.
 */
const HOSTILE = '<thought> <script>alert(1)</script> </thought>\n<execute> print("<b>x</b>") </execute>'

function view(over: Partial<View> = {}): View {
  return {
    dataset: 'gsm8k',
    taskType: 'reasoning',
    task: 'How many rolls are left?',
    k: 5,
    p: 2,
    feedback: { mode: 'textual', groundTruth: true, frequency: 'dense' },
    turns: [
      {
        t: 1,
        reply: HOSTILE,
        action: 'use_tool',
        code: 'print("<b>x</b>")',
        answer: null,
        correct: null,
        observation: 'Observation:\n<b>x</b>\nYou have 4 steps left and 2 chances to propose solution left.\n',
        stepsLeft: 4,
        proposalsLeft: 2,
        feedback: null,
      },
    ],
    pending: 'feedback',
    finished: false,
    success: false,
    reason: null,
    counts: { propose_solution: 0, use_tool: 1, invalid_action: 0 },
    groundTruth: '12',
    sandbox: { available: true },
    branchOf: null,
    branches: [],
    branchable: [],
    ...over,
  }
}

const session = (v: View, kind: string) =>
  ({
    id: 's1',
    protocol: 'mint',
    ask: { j: 3, seat: kind === 'turn' ? 'agent' : 'feedback', kind },
    draft: null,
    view: v,
  }) as unknown as TurnFormProps['session']

/** The episode page as the expert waiting to give feedback first gets it. */
const renderEpisode = (v: View) =>
  renderToStaticMarkup(
    createElement(MintSessionView, { session: session(v, 'feedback'), turnForm: null, live: null } as SessionViewProps),
  )

describe('MINT pages', () => {
  it('the trajectory renders the model’s output as text, coloured by part, with the countdown', () => {
    const html = renderToStaticMarkup(
      createElement(MintSessionView, {
        session: session(view(), 'feedback'),
        turnForm: null,
        live: null,
      } as SessionViewProps),
    )
    expect(html).not.toContain('<script>')
    expect(html).not.toContain('<b>x</b>')
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    for (const part of ['thought', 'code', 'output']) expect(html).toContain(`data-part="${part}"`)
    expect(html).toContain('4 of 5 steps and 2 of 2 proposals left.')
    const body = renderToStaticMarkup(
      createElement(MintMessageBody, {
        body: { seq: 1, sender: 'agent', kind: 'turn', content: HOSTILE, error: null },
      }),
    )
    expect(body).not.toContain('<script>')
  })

  it('the episode offers a step-through replay once it has two turns, and shows every turn until asked', () => {
    const turn = view().turns[0] as View['turns'][number]
    const one = renderEpisode(view())
    expect(one).not.toContain('Replay turn by turn')
    const two = renderEpisode(view({ turns: [turn, { ...turn, t: 2 }] }))
    expect(two).toContain('role="toolbar" aria-label="Replay"')
    expect(two).toContain('Replay turn by turn')
    expect(two.match(/data-testid="mint-turn"/g)).toHaveLength(2)
  })

  it('a feedback turn offers “Branch from here” to whom may branch; a branch names its parent and turn, an episode its branches', () => {
    const turn = view().turns[0] as View['turns'][number]
    const withFeedback = view({
      turns: [
        { ...turn, feedback: 'Print it.' },
        { ...turn, t: 2, feedback: null },
      ],
    })
    const none = renderEpisode(withFeedback)
    expect(none).not.toContain('Branch from here')
    expect(none).not.toContain('data-testid="mint-branch-of"')
    const staff = renderEpisode({
      ...withFeedback,
      branchable: [1],
      branchOf: { sessionId: 'p1', turn: 2 },
      branches: [{ sessionId: 'b1', turn: 1, status: 'awaiting' }],
    })
    // One button, on the turn with feedback, posting the session and the turn.
    expect(staff.match(/Branch from here/g)).toHaveLength(1)
    expect(staff).toContain('name="turn" value="1"')
    expect(staff).toContain('name="feedbackBy"')
    expect(staff).toContain('name="sessionId" value="s1"')
    expect(staff).toContain('href="/sessions/p1"')
    expect(staff).toContain('at turn 2')
    expect(staff).toContain('href="/sessions/b1"')
  })

  it("the expert's feedback page: the ground truth behind a do-not-disclose banner, a textarea or GOOD / BAD", () => {
    const textual = renderToStaticMarkup(createElement(MintTurnForm, { session: session(view(), 'feedback') }))
    expect(textual).toMatch(/Do not disclose/i)
    expect(textual).toContain('12')
    expect(textual).toMatch(/<textarea[^>]*name="text"/)
    expect(textual).toContain('name="elapsedMs"')
    const binary = renderToStaticMarkup(
      createElement(MintTurnForm, {
        session: session(
          view({ feedback: { mode: 'binary', groundTruth: false, frequency: 'dense' }, groundTruth: null }),
          'feedback',
        ),
      }),
    )
    expect(binary).not.toMatch(/Do not disclose/i)
    expect(binary).toMatch(/<input[^>]*type="radio"[^>]*name="text"[^>]*value="GOOD"/)
    expect(binary).toMatch(/value="BAD"/)
    expect(binary).not.toContain('<textarea')
    // A person answering as the model gets a reply box and never the reference.
    const agent = renderToStaticMarkup(
      createElement(MintTurnForm, { session: session(view({ groundTruth: null }), 'turn') }),
    )
    expect(agent).toMatch(/<textarea[^>]*name="text"/)
    expect(agent).not.toMatch(/Do not disclose/i)
  })

  it('the run summary: SR at the run’s k, per type, and the invalid-action flag above 20 %', () => {
    const html = renderToStaticMarkup(
      createElement(MintRunSummary, {
        data: {
          k: 3,
          p: 2,
          feedback: 'none',
          total: 4,
          finished: 4,
          sr: 25,
          byType: { reasoning: 25 },
          byTask: { gsm8k: 25 },
          reasons: { task_success: 1, max_steps: 3 },
          invalidRatio: 30,
          invalidFlagged: true,
          sandbox: { available: true },
        },
      } as never),
    )
    expect(html).toContain('SR at k = 3')
    expect(html).toContain('25.00 %')
    expect(html).toContain('30.00 % (above 20 %)')
    expect(html).toContain('max_steps 3')
  })

  it('the set-up form names the task sets whose reasoning tasks can search, and those that cannot', () => {
    const html = renderToStaticMarkup(
      createElement(MintSetupForm, {
        studyId: 'st',
        protocol: 'mint',
        datasets: [
          { id: 'd1', name: 'hotpot', kind: 'mint-tasks', instances: 3 },
          { id: 'd2', name: 'gsm8k', kind: 'mint-tasks', instances: 5 },
          { id: 'd3', name: 'mbpp', kind: 'mint-tasks', instances: 2 },
        ],
        models: [{ value: '{"connectionId":"c1"}', label: 'fake' }],
        experts: [],
        extra: {
          taskSets: {
            d1: { taskType: 'reasoning', corpusPages: 6 },
            d2: { taskType: 'reasoning', corpusPages: 0 },
            d3: { taskType: 'code_generation', corpusPages: 0 },
          },
        },
      } satisfies SetupFormProps),
    )
    expect(html).toContain('hotpot · 3 tasks · wikipedia_search over 6 corpus pages')
    expect(html).toContain('gsm8k · 5 tasks · no corpus: no search')
    expect(html).toContain('mbpp · 2 tasks</option>')
  })

  it('the set-up form says the tool is unavailable and why; its fields read back into a run body', () => {
    const props: SetupFormProps = {
      studyId: 'st',
      protocol: 'mint',
      datasets: [{ id: 'd1', name: 'gsm8k', kind: 'mint-tasks', instances: 5 }],
      models: [{ value: '{"connectionId":"c1"}', label: 'fake' }],
      experts: [],
      extra: {
        sandbox: {
          available: false,
          reason: 'bubblewrap (bwrap) is not installed',
          installHint: 'apt-get install -y bubblewrap',
        },
      },
    }
    const html = renderToStaticMarkup(createElement(MintSetupForm, props))
    expect(html).toContain('Python tool is unavailable')
    expect(html).toContain('bubblewrap (bwrap) is not installed')
    expect(html).toContain('Reasoning runs without a corpus have no search')
    expect(html).toContain('name="k"')
    expect(
      mintSetupFromForm({
        name: 'r',
        datasetId: 'd1',
        k: '3',
        'seats.agent.kind': 'llm',
        'seats.agent.model': '{"connectionId":"c1"}',
        'seats.feedback.kind': 'llm',
        'seats.feedback.model': '{"connectionId":"c1"}',
        'feedback.mode': 'binary',
        'feedback.groundTruth': 'on',
        'feedback.frequency': 'sparse',
      }),
    ).toMatchObject({
      config: { k: 3, feedback: { mode: 'binary', groundTruth: true, frequency: 'sparse' } },
      seats: { feedback: { kind: 'llm' } },
    })
    expect(
      mintSetupFromForm({
        'seats.agent.kind': 'llm',
        'seats.feedback.kind': 'program:no-feedback',
        'feedback.mode': 'binary',
      }),
    ).toMatchObject({
      config: { feedback: { mode: 'none' } },
      seats: { feedback: { kind: 'program', program: 'no-feedback' } },
    })
  })
})
