/**
 * The state text s_t of a live episode (pure): the authors' trajectory format (trajectory.ts) built from
 * the protocol's steps, what the policies read and what the exports write.
 *
 *   <preamble>\nQuestion: <q>          (QA: just the question line)
 *   <solver> agent|human               one marker line per finished step
 *   Thought t: … / Action t: … / Observation t: …
 *   <solver>                           the open marker when a decision is due (`open`)
 */
import type { RehacInstance, RehacState, RehacStep } from './protocol'
import { makeStep, renderStep, type TrajectoryAction, type TrajectoryStep } from './trajectory'

/** The preamble of the trajectory: InterCode's instructions (SQL) and the question line. */
export function preambleOf(instance: Pick<RehacInstance, 'question' | 'preamble'>): string {
  return `${instance.preamble ? `${instance.preamble}\n` : ''}Question: ${instance.question}`
}

function finishedSteps(steps: readonly RehacStep[]) {
  return steps
    .filter((s) => s.action !== null && s.observation !== null)
    .map((s) =>
      makeStep({
        solver: s.solver,
        n: s.t,
        thought: s.thought,
        action: s.action as TrajectoryAction,
        observation: s.observation as string,
      }),
    )
}

/** A finished step as the file wrote it (an imported step), or null. */
function writtenText(s: RehacStep): string | null {
  if (s.written === undefined || s.writtenObservation === undefined) return null
  return `<solver> ${s.solver}\n${s.written}\n${s.writtenObservation}`
}

/**
 * The trajectory so far (finished steps); `open` appends the "<solver>" marker of the step being decided.
 * An imported step renders as its file wrote it (blank lines, odd parts and the epilogue included).
 */
export function stateText(state: Pick<RehacState, 'instance' | 'steps'>, open = false): string {
  const done = state.steps.filter((s) => s.action !== null && s.observation !== null)
  const canonical = finishedSteps(done)
  const chunks = [
    preambleOf(state.instance),
    ...done.map((s, k) => writtenText(s) ?? renderStep(canonical[k] as TrajectoryStep)),
  ]
  const text = chunks.join('\n')
  return open ? `${text}\n<solver>` : text
}

/**
 * The whole trajectory of an ended episode with the authors' final blank line (an imported episode's last
 * observation, as written, holds the file's own ending).
 */
export function trajectoryText(state: Pick<RehacState, 'instance' | 'steps'>): string {
  const last = state.steps.filter((s) => s.action !== null && s.observation !== null).at(-1)
  if (last && writtenText(last) !== null) return stateText(state)
  return `${stateText(state)}\n`
}

/** One finished step in the authors' format (for a history list). */
export function stepText(step: RehacStep): string | null {
  if (!step.action || step.observation === null) return null
  return renderStep(
    makeStep({
      solver: step.solver,
      n: step.t,
      thought: step.thought,
      action: step.action,
      observation: step.observation,
    }),
  )
}
