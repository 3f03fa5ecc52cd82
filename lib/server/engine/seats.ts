import { z } from 'zod'
import type { AgentKind, AnyProtocol, SeatDecl } from '@/lib/protocols/types'

/**
 * Who fills a seat, for every protocol (the engine's one `SeatFill`): a person (named, or claimable
 * by any eligible member of the study), an LLM (a model plus named helpers such as a checker or a
 * judge), a proxy over the instance's ground truth, or a named program with parameters. A run's
 * seats are validated against the protocol's seat declarations when the run is created.
 */
const id = z.string().trim().min(1).max(100)

export const LlmRef = z.object({
  connectionId: id,
  /** The connection's default model when absent. */
  model: z.string().trim().max(200).optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** The model accepts images (an X-ray goes only to such models). */
  vision: z.boolean().optional(),
  /** A display name (the preset's or the model's), for the pages. */
  name: z.string().max(200).optional(),
})
export type LlmRef = z.infer<typeof LlmRef>

const helpers = z.record(z.string().max(60), LlmRef).default({})
const params = z.record(z.string().max(60), z.unknown()).default({})
/**
 * The seat's time limit per step in seconds (default: the plugin's `timeouts`, else none): past it the
 * step is aborted and the session stalls, resumable with Retry. Below the job expiry, which writeRun checks.
 */
const timeoutSeconds = z
  .number()
  .int('Enter the time limit in whole seconds.')
  .min(1, 'A time limit is at least 1 second.')
  .max(86_400, 'A time limit is at most 86,400 seconds (a day).')
  .optional()

export const HumanFill = z.object({
  kind: z.literal('human'),
  /** The person; absent while the seat waits to be claimed. */
  userId: id.optional(),
  /** Any member of the study with the work:submit scope may claim the seat (first come). */
  claimable: z.boolean().default(false),
})
export const LlmFill = z.object({ kind: z.literal('llm'), model: LlmRef, helpers, timeoutSeconds })
export const ProxyFill = z.object({ kind: z.literal('proxy'), helpers, params, timeoutSeconds })
export const ProgramFill = z.object({
  kind: z.literal('program'),
  program: z.string().min(1).max(60),
  helpers,
  params,
  timeoutSeconds,
})

export const SeatFill = z.discriminatedUnion('kind', [HumanFill, LlmFill, ProxyFill, ProgramFill])
export type SeatFill = z.output<typeof SeatFill>
export type SeatFillInput = z.input<typeof SeatFill>
export type HumanFill = z.output<typeof HumanFill>
export type LlmFill = z.output<typeof LlmFill>

export const Seats = z.record(z.string().max(60), SeatFill)
export type Seats = z.output<typeof Seats>

/** What is wrong with a set of seat fills for a protocol, as field errors by seat (empty = fine). */
export function seatProblems(protocol: Pick<AnyProtocol, 'seats'>, seats: Seats): Record<string, string[]> {
  const problems: Record<string, string[]> = {}
  const add = (seat: string, msg: string) => {
    problems[seat] ??= []
    problems[seat].push(msg)
  }
  const decls = new Map(protocol.seats.map((d: SeatDecl) => [d.name, d]))
  for (const name of Object.keys(seats)) if (!decls.has(name)) add(name, `This protocol has no seat "${name}".`)
  for (const decl of protocol.seats) {
    const fill = seats[decl.name]
    if (!fill) {
      add(decl.name, `Choose who fills the ${decl.label} seat.`)
      continue
    }
    if (!decl.kinds.includes(fill.kind as AgentKind)) {
      add(
        decl.name,
        `The ${decl.label} seat cannot be filled by ${kindLabel(fill.kind)}; it takes ${decl.kinds.map(kindLabel).join(', ')}.`,
      )
      continue
    }
    if (fill.kind === 'program' && !(decl.programs ?? []).includes(fill.program))
      add(decl.name, `Unknown program "${fill.program}" for the ${decl.label} seat.`)
    if (fill.kind === 'human' && !fill.userId && !fill.claimable)
      add(decl.name, `Name the person for the ${decl.label} seat, or make it claimable.`)
    if (fill.kind !== 'human') {
      for (const h of decl.helpers ?? []) {
        const used = !h.for || h.for.includes(fill.kind)
        if (used && h.required && !fill.helpers[h.name])
          add(decl.name, `Choose the ${h.label} for the ${decl.label} seat.`)
      }
    }
  }
  return problems
}

export function kindLabel(kind: string): string {
  return kind === 'human'
    ? 'a person'
    : kind === 'llm'
      ? 'an LLM'
      : kind === 'proxy'
        ? 'the ground-truth proxy'
        : 'a program'
}

/** The people named in a set of seats, by seat. */
export function humanSeats(seats: Seats): Array<{ seat: string; userId: string | null; claimable: boolean }> {
  return Object.entries(seats)
    .filter((e): e is [string, HumanFill] => e[1].kind === 'human')
    .map(([seat, f]) => ({ seat, userId: f.userId ?? null, claimable: f.claimable }))
}

/** Every LLM a set of seats uses (main models and helpers): their connections must be usable. */
export function llmRefs(seats: Seats): LlmRef[] {
  const out: LlmRef[] = []
  for (const f of Object.values(seats)) {
    if (f.kind === 'llm') out.push(f.model)
    if (f.kind !== 'human') out.push(...Object.values(f.helpers))
  }
  return out
}

/**
 * A copy of `seats` with every LLM reference (a seat's model and its helpers) passed through `f`,
 * which is told where the reference sits (the seat, and the helper's name or null for the seat's model).
 */
export function mapLlmRefs(seats: Seats, f: (ref: LlmRef, seat: string, helper: string | null) => LlmRef): Seats {
  const out: Seats = {}
  for (const [seat, fill] of Object.entries(seats)) {
    if (fill.kind === 'human') {
      out[seat] = fill
      continue
    }
    const helpers = Object.fromEntries(Object.entries(fill.helpers).map(([h, ref]) => [h, f(ref, seat, h)]))
    out[seat] = fill.kind === 'llm' ? { ...fill, model: f(fill.model, seat, null), helpers } : { ...fill, helpers }
  }
  return out
}

/**
 * Seats whose LLM references all name their model: a reference without one (the connection's default
 * model) gets the default the connection has now, so the run records, and its pages name, the model
 * that runs, and a later change of the connection's default does not change a run under way.
 */
export function pinModels(seats: Seats, defaults: ReadonlyMap<string, string>): Seats {
  return mapLlmRefs(seats, (ref) => {
    const model = ref.model || defaults.get(ref.connectionId)
    return model && model !== ref.model ? { ...ref, model } : ref
  })
}

/**
 * A seat as a run-create body gives it: one fill, or a list of fills the run's sessions take round
 * robin (session i gets fill i mod length), e.g. several experts sharing PXP's tester seat.
 */
export const SeatChoice = z.union([
  SeatFill,
  z.array(SeatFill).min(1, 'Give at least one fill for the seat.').max(100, 'At most 100 fills per seat.'),
])
export const SeatChoices = z.record(z.string().max(60), SeatChoice)
export type SeatChoices = z.output<typeof SeatChoices>

/**
 * The choices with every seat that only one program may fill (kinds `program`, one program) filled
 * with it when absent: a client need not name scorekeeping's game master to create a run.
 */
export function withFixedSeats(protocol: Pick<AnyProtocol, 'seats'>, choices: SeatChoices): SeatChoices {
  const out = { ...choices }
  for (const d of protocol.seats)
    if (!(d.name in out) && d.kinds.length === 1 && d.kinds[0] === 'program' && d.programs?.length === 1)
      out[d.name] = { kind: 'program', program: d.programs[0] as string, helpers: {}, params: {} }
  return out
}

/**
 * The seat sets of a run's sessions: variant i takes fill i mod length of every seat, so there are as
 * many variants as the longest list (one when no seat lists several fills).
 */
export function seatCycleOf(choices: SeatChoices): Seats[] {
  const lists = Object.entries(choices).map(([seat, c]) => [seat, Array.isArray(c) ? c : [c]] as const)
  const length = Math.max(1, ...lists.map(([, l]) => l.length))
  return Array.from({ length }, (_, i) =>
    Object.fromEntries(lists.map(([seat, l]) => [seat, l[i % l.length] as SeatFill])),
  )
}
