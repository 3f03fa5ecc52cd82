import { describe, expect, expectTypeOf, it } from 'vitest'
import type {
  EvinceAsk,
  EvinceConfig,
  EvinceInstance,
  EvinceMessage,
  EvinceState,
  evince,
} from '@/protocols/evince/core'
import type { PxpAsk, PxpConfig, PxpInstance, PxpMessage, PxpSeat, PxpState, pxp } from '@/protocols/pxp/core'
import type {
  ScorekeepingAsk,
  ScorekeepingConfig,
  ScorekeepingInstanceInput,
  ScorekeepingMessage,
  ScorekeepingState,
  scorekeeping,
} from '@/protocols/scorekeeping/core'
import {
  type Agent,
  type AgentContext,
  type AskOf,
  type ConfigOf,
  definePlugin,
  type HumanContext,
  type InstanceOf,
  type MessageOf,
  type PluginRuntime,
  type SessionConfig,
  type StateOf,
  type ViewContext,
} from '@/lib/server/sdk'
import { sessionTitle } from '@/lib/server/engine/plugins'
import { type ToyConfig, type ToyInstance, type ToyMessage, type ToyState, toy } from './toy/protocol'

/**
 * The plugin SDK's typing, pinned (issue 23 part 5): `definePlugin(protocol, spec)` types every hook's
 * context by the protocol alone (its Config, Instance, State, Ask, Message and seats), so a plugin
 * needs no casts. These are compile-time checks: `tsc --noEmit` (and `vitest --typecheck`) fails when
 * a context loses its types, and every `@ts-expect-error` below fails when a wrong field compiles
 * again (a context typed `any` would accept it). At run time the test only defines the plugin.
 */

type ToyAsk = AskOf<typeof toy>
type ToyExtras = { hintsShown: boolean }

const toyPlugin = definePlugin(toy, {
  sessionConfig: (raw) => ({ config: toy.config.parse(raw), extras: { hintsShown: true } }),
  agents: {
    async llm(ctx) {
      expectTypeOf(ctx.config).toEqualTypeOf<ToyConfig>()
      expectTypeOf(ctx.instance).toEqualTypeOf<ToyInstance>()
      expectTypeOf(ctx.state).toEqualTypeOf<ToyState>()
      expectTypeOf(ctx.ask).toEqualTypeOf<ToyAsk>()
      expectTypeOf(ctx.extras).toEqualTypeOf<ToyExtras>()
      expectTypeOf(ctx.session.messages).toEqualTypeOf<ToyMessage[]>()
      expectTypeOf(ctx.earlierSessions).returns.resolves.toEqualTypeOf<ToyMessage[][]>()
      // @ts-expect-error the toy's config has no k
      void ctx.config.k
      // @ts-expect-error the toy's instance has no prediction
      void ctx.instance.prediction
      // @ts-expect-error a toy message has no prediction
      void ctx.session.messages[0]?.prediction
      // @ts-expect-error the toy asks the guesser or the oracle, never a seat named "m"
      const m: typeof ctx.ask.seat = 'm'
      void m
      return { message: { seq: ctx.ask.j, sender: 'guesser', kind: 'guess', value: 1 } satisfies ToyMessage }
    },
  },
  schedule: {
    waits(config) {
      // The run's config, split as a session's is.
      expectTypeOf(config).toEqualTypeOf<SessionConfig<ToyConfig, ToyExtras>>()
      return false
    },
    onSessionDone(ctx) {
      expectTypeOf(ctx.run.config).toEqualTypeOf<SessionConfig<ToyConfig, ToyExtras>>()
      expectTypeOf(ctx.messages).returns.resolves.toEqualTypeOf<ToyMessage[]>()
      return {}
    },
  },
  human: {
    input: toy.config,
    toMessage(ctx) {
      expectTypeOf(ctx.seat).toEqualTypeOf<'guesser' | 'oracle'>()
      expectTypeOf(ctx.ask).toEqualTypeOf<ToyAsk>()
      expectTypeOf(ctx.state).toEqualTypeOf<ToyState>()
      return { message: { seq: ctx.ask.j, sender: 'guesser', kind: 'guess', value: 50 } satisfies ToyMessage }
    },
  },
  project(m) {
    expectTypeOf(m).toEqualTypeOf<ToyMessage>()
    return { receiver: m.sender === 'guesser' ? 'oracle' : 'guesser' }
  },
  setup: { plan: async () => ({}) as never },
  views: {
    session(ctx) {
      expectTypeOf(ctx.ask).toEqualTypeOf<ToyAsk | null>()
      expectTypeOf(ctx.session.messages).toEqualTypeOf<ToyMessage[]>()
      return null
    },
    participantMessage(m) {
      expectTypeOf(m).toEqualTypeOf<ToyMessage>()
      return m
    },
  },
  title(instance) {
    // The parsed instance (callers with a stored snapshot parse it first: sessionTitle).
    expectTypeOf(instance).toEqualTypeOf<ToyInstance>()
    return `number ${instance.target}`
  },
})

// @ts-expect-error an agent writes its protocol's message, not PXP's
const _writesPxp: Agent<typeof toy> = async (ctx) => ({
  message: { seq: ctx.ask.j, sender: 'm', tag: 'INIT', prediction: '42', explanation: 'e' } satisfies PxpMessage,
})

/** An agent written for another protocol (PXP's). */
declare const pxpAgent: Agent<typeof pxp>

describe('the plugin SDK types every hook by its protocol', () => {
  it('defines the typed toy plugin (the checks above are compile-time)', () => {
    expect(toyPlugin.protocol.id).toBe('toy')
  })

  it("title gets the instance parsed by the protocol's schema; an unparsable snapshot gives no title (lists show #n)", () => {
    expect(sessionTitle(toyPlugin, { target: 42 }, 'numbers')).toBe('number 42')
    expect(sessionTitle(toyPlugin, { target: 'forty-two' }, 'numbers')).toBeNull()
    expect(sessionTitle(toyPlugin, null, 'numbers')).toBeNull()
    expect(sessionTitle(undefined, { target: 42 }, 'numbers')).toBeNull()
  })

  it('the protocol alone fixes the types: a hook of another protocol does not compile', () => {
    // NoInfer: without it, the spec's hooks could widen P; a hook typed for PXP is refused here.
    const define = () =>
      definePlugin(toy, {
        // @ts-expect-error PXP's agent cannot fill the toy's seats
        agents: { llm: pxpAgent },
        human: { input: toy.config, toMessage: () => ({}) as never },
        project: () => ({ receiver: '' }),
        setup: { plan: async () => ({}) as never },
        views: { session: () => null },
      })
    expect(typeof define).toBe('function')
  })

  it('the built-in protocols: every context carries their types', () => {
    expectTypeOf<ConfigOf<typeof pxp>>().toEqualTypeOf<PxpConfig>()
    expectTypeOf<InstanceOf<typeof pxp>>().toEqualTypeOf<PxpInstance>()
    expectTypeOf<StateOf<typeof pxp>>().toEqualTypeOf<PxpState<PxpInstance>>()
    expectTypeOf<AskOf<typeof pxp>>().toEqualTypeOf<PxpAsk>()
    expectTypeOf<MessageOf<typeof pxp>>().toEqualTypeOf<PxpMessage>()
    expectTypeOf<AgentContext<typeof pxp>['session']['messages']>().toEqualTypeOf<PxpMessage[]>()
    expectTypeOf<HumanContext<typeof pxp>['seat']>().toEqualTypeOf<PxpSeat>()
    expectTypeOf<ReturnType<AgentContext<typeof pxp>['earlierSessions']>>().toEqualTypeOf<Promise<PxpMessage[][]>>()

    expectTypeOf<AgentContext<typeof evince>['config']>().toEqualTypeOf<EvinceConfig>()
    expectTypeOf<AgentContext<typeof evince>['instance']>().toEqualTypeOf<EvinceInstance>()
    expectTypeOf<AgentContext<typeof evince>['state']>().toEqualTypeOf<EvinceState>()
    expectTypeOf<AgentContext<typeof evince>['ask']>().toEqualTypeOf<EvinceAsk>()
    expectTypeOf<ViewContext<typeof evince>['ask']>().toEqualTypeOf<EvinceAsk | null>()
    expectTypeOf<AgentContext<typeof evince>['session']['messages']>().toEqualTypeOf<EvinceMessage[]>()
    expectTypeOf<HumanContext<typeof evince>['seat']>().toEqualTypeOf<'A' | 'B' | 'moderator'>()

    expectTypeOf<AgentContext<typeof scorekeeping>['config']>().toEqualTypeOf<ScorekeepingConfig>()
    expectTypeOf<AgentContext<typeof scorekeeping>['instance']>().toEqualTypeOf<ScorekeepingInstanceInput>()
    expectTypeOf<AgentContext<typeof scorekeeping>['state']>().toEqualTypeOf<ScorekeepingState>()
    expectTypeOf<AgentContext<typeof scorekeeping>['ask']>().toEqualTypeOf<ScorekeepingAsk>()
    expectTypeOf<AgentContext<typeof scorekeeping>['session']['messages']>().toEqualTypeOf<ScorekeepingMessage[]>()
    expectTypeOf<HumanContext<typeof scorekeeping>['seat']>().toEqualTypeOf<'questioner' | 'answerer'>()
    expectTypeOf<
      Parameters<NonNullable<PluginRuntime<typeof scorekeeping>['title']>>[0]
    >().toEqualTypeOf<ScorekeepingInstanceInput>()
    // A debate's judge reads the debate's turns, never a PXP answer.
    type EvinceTurn = Extract<EvinceMessage, { kind: 'turn' }>
    expectTypeOf<EvinceTurn['sender']>().toEqualTypeOf<'A' | 'B'>()
    const seatOfTurn = (ask: EvinceAsk) => (ask.kind === 'turn' ? ask.seat : null)
    expectTypeOf(seatOfTurn).returns.toEqualTypeOf<'A' | 'B' | null>()
  })
})
