import { readFileSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { DEMO_LABEL, type DemoRequest } from '@/lib/llm/demo-model'
import { contentText } from '@/lib/llm/text'
import { TEMPLATE_FEEDBACK, TEMPLATE_WITH_TOOL } from '@/protocols/mint/core/prompts'
import { pyStrip } from '@/protocols/mint/core/protocol'
import { NO_OUTPUT } from '@/protocols/mint/server/sandbox'

/**
 * The offline demo model playing MINT. As the evaluated model on a demo task (protocols/mint/demo/tasks.jsonl,
 * GSM8K-style word problems, and hotpot-tasks.jsonl, HotpotQA-style questions over demo/corpus.jsonl, all
 * written by us, each with the Python code that solves it as `demo_code`, the questions' through
 * wikipedia_search): its first turn runs that code in the tool, its next turn proposes the one line the
 * tool printed. On any other
 * task it prints what it was asked and then proposes that it does not know. As the feedback model it
 * gives one short sentence: GOOD after a tool output with a number, BAD otherwise (binary mode keeps it).
 */

const demoTask = z.looseObject({ prompt: z.string(), demo_code: z.string().optional() })

/** The demo task files (protocols/mint/demo/) whose tasks carry their `demo_code`. */
export const DEMO_TASK_FILES = ['tasks.jsonl', 'hotpot-tasks.jsonl'] as const

let demoTasks: Array<{ prompt: string; code: string }> | undefined
function tasks(): Array<{ prompt: string; code: string }> {
  if (demoTasks) return demoTasks
  let text = ''
  for (const file of DEMO_TASK_FILES) {
    try {
      text += `${readFileSync(path.join(process.cwd(), 'protocols/mint/demo', file), 'utf8')}\n`
    } catch {
      // a deployment without the demo files: the demo model then knows no task
    }
  }
  demoTasks = text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => demoTask.parse(JSON.parse(l)))
    .filter((t) => t.demo_code)
    .map((t) => ({ prompt: pyStrip(t.prompt), code: t.demo_code as string }))
  return demoTasks
}

/** The marker lines of the two prompts (their first lines, verbatim from the authors' templates). */
const AGENT_MARK = TEMPLATE_WITH_TOOL.split('\n')[0] as string
const FEEDBACK_MARK = TEMPLATE_FEEDBACK.split('\n')[0] as string

/** The task text of an instruction prompt: what follows its last "Task:\n". */
function taskOf(first: string): string {
  const at = first.lastIndexOf('Task:\n')
  return at < 0 ? '' : first.slice(at + 'Task:\n'.length).trim()
}

/** The last observation's output in a user message ("Observation:\n<output>\nYou have …"). */
function lastOutput(text: string): string {
  const at = text.lastIndexOf('Observation:\n')
  if (at < 0) return ''
  return (text.slice(at + 'Observation:\n'.length).split('\nYou have ')[0] ?? '').trim()
}

const label = DEMO_LABEL.replace(/[[\]]/g, '')

export function mintDemo(req: DemoRequest): string | undefined {
  const first = contentText(req.messages[0]?.content ?? '')
  if (first.startsWith(FEEDBACK_MARK)) {
    const out = lastOutput(first.split('\nCorrect solution (please DO NOT disclose')[0] ?? first)
    if (/^-?\d+(\.\d+)?$/.test(out))
      return 'This is GOOD. The tool printed a number: propose it as the solution, in the format the task asks for.'
    return 'This is BAD. Check the last step: run code that prints the quantity the task asks for.'
  }
  if (!first.startsWith(AGENT_MARK)) return undefined
  const turns = req.messages.filter((m) => m.role === 'assistant').length
  const task = taskOf(first)
  const known = tasks().find((t) => task.startsWith(t.prompt) || t.prompt.startsWith(task))
  if (turns === 0) {
    const code = known?.code ?? `print(${JSON.stringify(task.slice(0, 60))})`
    return `<thought> ${label}: I compute the answer with Python. </thought>\n<execute> ${code} </execute>`
  }
  const out = lastOutput(contentText(req.messages.at(-1)?.content ?? ''))
  // A known task's answer is the one line its code printed (a traceback or a search's pages are not one line).
  const answer =
    known && out !== '' && out !== NO_OUTPUT && !out.includes('\n') && out.length <= 200 ? out : 'I do not know'
  return `<thought> ${label}: the tool printed the result. </thought>\nThe answer is <solution> ${answer} </solution>.`
}
