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
import { makeStep, renderStep, renderTrajectory, type TrajectoryAction } from './trajectory'

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

/** The trajectory so far (finished steps); `open` appends the "<solver>" marker of the step being decided. */
export function stateText(state: Pick<RehacState, 'instance' | 'steps'>, open = false): string {
  const text = renderTrajectory({
    preamble: preambleOf(state.instance),
    steps: finishedSteps(state.steps),
    epilogue: null,
  })
  return open ? `${text}\n<solver>` : text
}

/** The whole trajectory of an ended episode with the authors' final blank line. */
export function trajectoryText(state: Pick<RehacState, 'instance' | 'steps'>): string {
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
