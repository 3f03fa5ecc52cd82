import type { PxpSeat, PxpTag } from '@/protocols/pxp/core/tags'
import { RAD_LABELS } from './datasets'

/**
 * ASSEMBLE_PROMPT and UPDATE_CONTEXT for the paper's two tasks (Examples 1–2 of seeds/000 and the
 * authors' task prompts, reference-implementations.md §1.6). Pure: strings in, chat messages out.
 *
 * The context C is a chat history seen from the machine: its own messages are `assistant` turns,
 * the tester's are `user` turns, each phrased from its tag ("I think you made a mistake …").
 * ASSEMBLE_PROMPT puts the task's system message first ("… Use the following as context:"), then
 * C, then the query q about the instance (for RAD with the X-ray as an image part).
 */
export type PxpTaskKind = 'rad' | 'drug'

export type ChatTurn =
  | { role: 'system' | 'assistant'; content: string }
  | {
      role: 'user'
      content: string | Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }>
    }

const NOUN: Record<PxpTaskKind, string> = { rad: 'diagnosis', drug: 'opinion' }

export const EXPLANATION_KEY: Record<PxpTaskKind, string> = { rad: 'Explanation', drug: 'Pathway' }

export function systemPrompt(kind: PxpTaskKind): string {
  if (kind === 'rad') {
    return [
      `You are a radiology expert, with detailed knowledge of ${RAD_LABELS.join(', ')}.`,
      'Analyse the X-ray, make a diagnosis (exactly one of those five ailments) and give an evidence-based explanation.',
      'Adhere to the following output format strictly, no extra text:',
      'Prediction: <ailment>',
      'Explanation: <explanation>',
      'Never write protocol phrases such as "I made a mistake", "You made a mistake" or "This conversation is ratified".',
    ].join('\n')
  }
  return [
    'You are a synthetic chemist. Always give SMILES strings of molecules.',
    'Propose a single-step retrosynthesis: the reactants that make the given product, and the pathway that connects them,',
    'with the reasoning behind it (regioselectivity, stereoselectivity, functional group compatibility as applicable).',
    'Adhere to the below format and provide no extra text; join several reactant SMILES with ".":',
    'Prediction: <reactant SMILES>',
    'Pathway: <pathway and explanation>',
    'Never write protocol phrases such as "I made a mistake", "You made a mistake" or "This conversation is ratified".',
  ].join('\n')
}

/** The query q about instance x. `imageUrl` is a data: URL (RAD; sent only to vision models). */
export function queryTurn(kind: PxpTaskKind, input: { imageUrl?: string; smiles?: string }): ChatTurn {
  if (kind === 'rad') {
    const text = `Predict which one of ${RAD_LABELS.join(', ')} is present in this X-ray, and explain why.`
    return input.imageUrl
      ? {
          role: 'user',
          content: [
            { type: 'text', text },
            { type: 'image_url', image_url: { url: input.imageUrl } },
          ],
        }
      : { role: 'user', content: text }
  }
  if (!input.smiles) throw new RangeError('a DRUG query needs the product SMILES')
  return { role: 'user', content: `You have to predict a single step retrosynthetic pathway for ${input.smiles}.` }
}

/** An answer (y, e) in the format the system prompt asks for. */
export function formatAnswer(kind: PxpTaskKind, answer: { y: string; e: string }): string {
  return `Prediction: ${answer.y}\n${EXPLANATION_KEY[kind]}: ${answer.e}`
}

/** The words an agent puts before its answer, from its tag (the authors' UPDATE_CONTEXT phrases). */
export function tagPhrase(kind: PxpTaskKind, tag: PxpTag): string {
  const noun = NOUN[kind]
  switch (tag) {
    case 'INIT':
      return kind === 'rad'
        ? 'This is my initial diagnosis of the X-ray:'
        : 'This is the preliminary retrosynthesis pathway I propose:'
    case 'RATIFY':
      return `Our ${noun === 'diagnosis' ? 'diagnoses' : 'opinions'} match. I agree with you. This conversation is ratified.`
    case 'REFUTE':
      return `I think you made a mistake. I refute your ${noun}. I think:`
    case 'REVISE':
      return `I think I made a mistake. I revise my ${noun} to:`
    case 'REJECT':
      return `I disagree with you and reject your ${noun}. ${kind === 'rad' ? 'My diagnosis of this X-ray is:' : 'I think the retrosynthesis pathway is:'}`
  }
}

/**
 * UPDATE_CONTEXT: the turn message j adds to C. A RATIFY carries no answer (the agents agree);
 * every other tag is the phrase followed by the answer.
 */
export function contextTurn(kind: PxpTaskKind, msg: { sender: PxpSeat; tag: PxpTag; y: string; e: string }): ChatTurn {
  const content =
    msg.tag === 'RATIFY' ? tagPhrase(kind, 'RATIFY') : `${tagPhrase(kind, msg.tag)}\n${formatAnswer(kind, msg)}`
  return msg.sender === 'm' ? { role: 'assistant', content } : { role: 'user', content }
}

/** ASSEMBLE_PROMPT(q, C): system message, the context as prior turns, then the query. */
export function assemblePrompt(kind: PxpTaskKind, context: readonly ChatTurn[], query: ChatTurn): ChatTurn[] {
  const system = systemPrompt(kind) + (context.length ? '\n\nUse the following as context:' : '')
  return [{ role: 'system', content: system }, ...context, query]
}
