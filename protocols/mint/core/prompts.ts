/**
 * MINT's prompts (mint-and-llm-labelling.md §A.3): the evaluated model's instruction prompt, the feedback
 * model's prompt, the in-context examples and the tool descriptions. The texts are data files in
 * ./prompts/, read once when this module loads (the only I/O of the core; protocol.ts never imports it):
 * - template_with_tool.txt, template_feedback.txt: the authors' mint/prompt/templates (commit 3f7f12c,
 *   Apache-2.0), byte for byte; §A.3.1 / §A.3.2 of the reference are the same texts.
 * - examples/<name>.txt and <name>.feedback.txt: the authors' in-context examples (with_tool.txt,
 *   with_tool_and_feedback.txt; the paper's F.5): reasoning, mbpp, humaneval, alfworld-<subtype>.
 * - tools.json: the tool descriptions per task type (the paper's F.1) as the released prompts render them.
 */
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { mintFile } from './files'
import {
  type AlfworldType,
  type ChatMessage,
  type MintConfig,
  type MintInstance,
  type MintState,
  observationText,
  pyStrip,
  TASK_TYPE_OF,
  type TaskType,
} from './protocol'

const load = (name: string): string => readFileSync(mintFile('core', 'prompts', name), 'utf8')

export const TEMPLATE_WITH_TOOL = load('template_with_tool.txt')
export const TEMPLATE_FEEDBACK = load('template_feedback.txt')

const toolDecl = z.object({ signature: z.string().min(1), description: z.string() })
const toolsFile = z.object({
  reasoning: z.array(toolDecl),
  code_generation: z.array(toolDecl),
  decision_making: z.array(toolDecl),
})
export const TOOLS: Record<TaskType, { signature: string; description: string }[]> = toolsFile.parse(
  JSON.parse(load('tools.json')),
)

/** The tool description block (the authors' get_toolset_description): '' when the task type has no tools. */
export function toolDescription(type: TaskType): string {
  const tools = TOOLS[type]
  if (tools.length === 0) return ''
  let out = 'Tool function available (already imported in <execute> environment):\n'
  tools.forEach((t, i) => {
    out += `[${i + 1}] ${t.signature}\n${t.description}\n`
  })
  return out
}

export type ExampleName = 'reasoning' | 'mbpp' | 'humaneval' | `alfworld-${AlfworldType}`
const EXAMPLE_NAMES: ExampleName[] = [
  'reasoning',
  'mbpp',
  'humaneval',
  'alfworld-put',
  'alfworld-clean',
  'alfworld-heat',
  'alfworld-cool',
  'alfworld-examine',
  'alfworld-puttwo',
]
const EXAMPLES = new Map<string, string>()
for (const n of EXAMPLE_NAMES) {
  EXAMPLES.set(n, load(`examples/${n}.txt`))
  EXAMPLES.set(`${n}.feedback`, load(`examples/${n}.feedback.txt`))
}

/** Which in-context example a task uses: reasoning for the five reasoning sets, its own for code, the sub-type's for ALFWorld. */
export function exampleName(instance: MintInstance): ExampleName {
  const type = TASK_TYPE_OF[instance.dataset]
  if (type === 'reasoning') return 'reasoning'
  if (instance.dataset === 'alfworld') {
    if (!instance.alfworldType) throw new Error(`ALFWorld task ${instance.id} has no sub-type (alfworldType).`)
    return `alfworld-${instance.alfworldType}`
  }
  return instance.dataset as 'mbpp' | 'humaneval'
}

/** The 1-shot in-context example, with the expert's feedback turns or without. */
export function inContextExample(instance: MintInstance, withFeedback: boolean): string {
  const name = exampleName(instance)
  return EXAMPLES.get(withFeedback ? `${name}.feedback` : name) as string
}

/** The task prompt as the authors' Task classes build it from the released `prompt`. */
export function taskPrompt(instance: MintInstance): string {
  const p = instance.prompt
  switch (instance.dataset) {
    case 'theoremqa':
      return `Answer the following question with a number, a list of numbers or True or False. ${pyStrip(p)}`
    case 'mmlu':
      return p // MultipleChoiceTask keeps the prompt as it is (hide_options is never set by the configs)
    case 'humaneval':
      return `Complete the following code:\n\n${p}`
    case 'mbpp':
      return pyStrip(p.replaceAll('"""', ''))
    default:
      return pyStrip(p)
  }
}

function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k]) : m))
}

/** The first user message (the authors' GeneralEnv.reset): the template with the budget, tools, example and task. */
export function instructionPrompt(config: MintConfig, instance: MintInstance): string {
  return fill(TEMPLATE_WITH_TOOL, {
    max_total_steps: config.k,
    max_propose_solution: config.p,
    tool_desc: toolDescription(TASK_TYPE_OF[instance.dataset]),
    in_context_example: inContextExample(instance, config.feedback.mode !== 'none'),
    task_prompt: `Task:\n${taskPrompt(instance)}`,
  })
}

/** The history of the episode so far as the released `state.history` (see protocol.ts chatHistory). */
export { chatHistory } from './protocol'

/**
 * The feedback model's prompt after the latest turn (the authors' OpenAIFeedbackAgent.act): the trajectory
 * from `Task:` on (the instruction prompt after its second "---", the messages so far, the latest
 * observation with its countdown), the feedback-style example from `Task:` on, the tools, and the
 * reference or NOT GIVEN.
 */
export function feedbackPrompt(state: MintState, history: readonly ChatMessage[]): string {
  const last = state.turns[state.turns.length - 1]
  if (!last) throw new Error('Feedback comes after a turn; the episode has none yet.')
  const first = (history[0] as ChatMessage).content
  let trajectory = `${first.split('---\n').slice(2).join('---\n')}\n`
  trajectory += history
    .slice(1)
    .map((m) => m.content)
    .join('\n')
  trajectory += `\n${observationText(last)}`
  trajectory = trajectory.slice(Math.max(0, trajectory.indexOf('Task:')))
  const example = inContextExample(state.instance, true)
  const gt = state.config.feedback.groundTruth ? pyStrip(state.instance.reference) : ''
  const correct = `Correct solution (please DO NOT disclose the correct solution to the assistant): ${gt || 'NOT GIVEN'}\n`
  return fill(TEMPLATE_FEEDBACK, {
    in_context_example: example.slice(Math.max(0, example.indexOf('Task:'))),
    tool_desc: toolDescription(TASK_TYPE_OF[state.instance.dataset]),
    trajectory,
    correct_solution: correct,
  })
}
