/**
 * ReHAC prompts (pure).
 *
 * 1. The Prompt baseline (rehac.md §2.5 item 4, §5.8): ChatGPT is asked whether the next step should
 *    be done by "ChatGPT or a human". The templates are the paper's Tables 5 (QA) and 6 (InterCode)
 *    character for character, taken from the paper text (seeds/002…txt lines 351–403). One character
 *    differs from rehac.md's copy: the paper writes "ChatGPT’s" with U+2019, rehac.md normalised it
 *    to an ASCII apostrophe; the paper's character is kept here.
 *    The two few-shot examples (${example1}, ${example2}) are not in the paper (rehac.md A8): the
 *    caller passes two finished trajectories; `pickFewShotExamples` is Parley's default choice.
 *    `${current trajectory}` receives the state with its trailing open "<solver>" marker removed and
 *    the earlier "<solver> agent|human" markers kept, so the model sees who did which step (the paper
 *    does not say how the trajectory was rendered; this is Parley's choice).
 * 2. The reply parser: [ChatGPT] → agent, [Human] → human, anything else is refused (the template
 *    says "Only return [ChatGPT] or [Human]").
 * 3. The ReAct agent's step prompt pieces (rehac.md §3.1 and §1.6, from the authors' code): the
 *    instruction, the decoding constants and the stop sequence "\nObservation {t}:".
 */
import type { Solver } from './deciders'

export const QA_PROMPT_TEMPLATE = `Imagine you are a clever planner.

Given an unfinished trajectory with several steps, your task is to decide whether the next step should be carried out by ChatGPT or a human. This decision should be based on a thoughtful evaluation of the difficulty of the next step and the progress made in the current trajectory. Here are two finished trajectory examples.

Example 1:

\${example1}

Example 2:

\${example2}

Now please decide whether the next step should be carried out by ChatGPT or a human. Please consider the following factors:

1. If the next step is relatively straightforward and well within ChatGPT’s capabilities, instruct ChatGPT to proceed with the next step. If the task is deemed challenging or requires human judgment, recommend human intervention.

2. If the trajectory has been consistently handled by ChatGPT without notable issues, encourage ChatGPT to continue. If there have been challenges or uncertainties in the trajectory, consider suggesting human involvement for the next step.

3. Note that human intervention will significantly increase the cost, so try to balance the accuracy and efficiency.

If the next step should be carried out by ChatGPT, return [ChatGPT], otherwise, return [Human]. Only return [ChatGPT] or [Human].

#Your unfinished trajectory#: \${current trajectory}

#Your return#:`

export const SQL_PROMPT_TEMPLATE = `Imagine you are a clever planner in SQL.

Given an unfinished trajectory with several SQL commands, your task is to decide whether the next command should be carried out by ChatGPT or a human. This decision should be based on a thoughtful evaluation of the difficulty of the next command and the progress made in the current trajectory. Here are two finished trajectory examples.

Example 1:

\${example1}

Example 2:

\${example2}

Now please decide whether the next command should be carried out by ChatGPT or a human. Please consider the following factors:

1. If the next command is relatively straightforward and well within ChatGPT’s capabilities, instruct ChatGPT to proceed with the next command. If the task is deemed challenging or requires human judgment, recommend human intervention.

2. If the trajectory has been consistently handled by ChatGPT without notable issues, encourage ChatGPT to continue. If there have been challenges or uncertainties in the trajectory, consider suggesting human involvement for the next command.

3. Note that human intervention will significantly increase the cost, so try to balance the accuracy and efficiency.

If the next command should be carried out by ChatGPT, return [ChatGPT], otherwise, return [Human]. Only return [ChatGPT] or [Human].

#Your unfinished trajectory#: \${current trajectory}

#Your return#:`

export interface PromptFields {
  example1: string
  example2: string
  currentTrajectory: string
}

/** Fills the three fields; a literal "${…}" inside a field's text is left alone (single pass). */
function fill(template: string, f: PromptFields): string {
  const values: Record<string, string> = {
    example1: f.example1,
    example2: f.example2,
    'current trajectory': f.currentTrajectory,
  }
  return template.replace(/\$\{(example1|example2|current trajectory)\}/g, (_, k: string) => values[k]!)
}

/** Table 5 prompt (HotpotQA, StrategyQA). */
export function qaCollabPrompt(fields: PromptFields): string {
  return fill(QA_PROMPT_TEMPLATE, fields)
}

/** Table 6 prompt (InterCode-SQL). */
export function sqlCollabPrompt(fields: PromptFields): string {
  return fill(SQL_PROMPT_TEMPLATE, fields)
}

/** The state as shown to the prompt policy: the trailing open "<solver>" marker and outer blank space removed. */
export function trajectoryForPrompt(state: string): string {
  return state.replace(/\s*<solver>\s*$/, '').trim()
}

/**
 * Parley's default few-shot pair from a study's finished trajectories (records in file order):
 * example 1 = the first correct (em = 1) trajectory done by the agent alone; example 2 = the first
 * correct trajectory of another question with at least one human step. Returns the indices used so a
 * run can record which examples it showed; null when the data has no such pair.
 */
export function pickFewShotExamples(
  records: readonly { idx: number; trajectory: string; em: number | boolean }[],
): { example1: string; example2: string; indices: [number, number] } | null {
  const ok = (r: { em: number | boolean }) => r.em === true || r.em === 1
  const i1 = records.findIndex(
    (r) => ok(r) && !r.trajectory.includes('<solver> human') && r.trajectory.includes('<solver> agent'),
  )
  if (i1 < 0) return null
  const q1 = records[i1]!.idx
  const i2 = records.findIndex((r) => ok(r) && r.idx !== q1 && r.trajectory.includes('<solver> human'))
  if (i2 < 0) return null
  return { example1: records[i1]!.trajectory.trim(), example2: records[i2]!.trajectory.trim(), indices: [i1, i2] }
}

export type CollabReply = { ok: true; solver: Solver } | { ok: false; reason: string }

/**
 * Parses the prompt policy's reply. 'strict' (default): the reply, trimmed, must be exactly
 * "[ChatGPT]" or "[Human]". 'lenient': exactly one of the two tokens (case-insensitive) appears,
 * possibly with other words around it; both or neither is still refused.
 */
export function parseCollabReply(reply: string, mode: 'strict' | 'lenient' = 'strict'): CollabReply {
  const text = reply.trim()
  if (mode === 'strict') {
    if (text === '[ChatGPT]') return { ok: true, solver: 'agent' }
    if (text === '[Human]') return { ok: true, solver: 'human' }
    return {
      ok: false,
      reason: `the reply must be exactly [ChatGPT] or [Human], got ${JSON.stringify(text.slice(0, 80))}`,
    }
  }
  const agent = /\[chatgpt\]/i.test(text)
  const human = /\[human\]/i.test(text)
  if (agent && !human) return { ok: true, solver: 'agent' }
  if (human && !agent) return { ok: true, solver: 'human' }
  return {
    ok: false,
    reason: agent
      ? 'the reply names both [ChatGPT] and [Human]'
      : `the reply names neither [ChatGPT] nor [Human]: ${JSON.stringify(text.slice(0, 80))}`,
  }
}

// ───────────────────────────── ReAct agent step ─────────────────────────────

/** The instruction the agent and the simulated human get (rehac.md §3.1, from the authors' code). */
export const REACT_INSTRUCTION =
  'Solve a question answering task with interleaving Thought, Action, Observation steps. Thought can reason about the current situation, and Action can be three types: (1) Search[entity], which searches the exact entity on Wikipedia and returns the first paragraph if it exists. If not, it will return some similar entities to search. (2) Lookup[keyword], which returns the next sentence containing keyword in the current passage. (3) Finish[answer], which returns the answer and finishes the task. Here are some examples.'

/** Decoding of every LLM step (rehac.md §1.6, from the authors' code). */
export const REACT_DECODING = { temperature: 0, max_tokens: 100, top_p: 1 } as const

/** Stop sequence of step t: the model writes Thought t and Action t, then stops before the observation. */
export function reactStop(t: number): string {
  return `\nObservation ${t}:`
}

/** Removes the "<solver> agent|human" lines: the agent's own prompt is plain ReAct (Parley's choice). */
export function stripSolverMarkers(text: string): string {
  return text.replace(/<solver> (agent|human)\n/g, '').replace(/\s*<solver>\s*$/, '\n')
}

/**
 * The agent's prompt for step t, assembled as in the original ReAct code (instruction + few-shot
 * examples + "Question: …" + the steps so far + "Thought t:"); the examples (`webthink_simple6` in the
 * authors' code) are passed in, not shipped. This assembly is INFERRED from ReAct, not stated in ReHAC.
 */
export function reactStepPrompt({ examples, state, t }: { examples: string; state: string; t: number }): string {
  const history = stripSolverMarkers(state).replace(/\n*$/, '\n')
  return `${REACT_INSTRUCTION}\n${examples}\n${history}Thought ${t}:`
}
