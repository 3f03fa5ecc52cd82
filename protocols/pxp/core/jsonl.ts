/**
 * The PXP message-list format of `parley pxp stats` and `parley pxp import-tags`: JSON Lines, one
 * message per line,
 *
 *   {"repetition": 1, "session": "3f2a", "j": 1, "sender": "m", "tag": "INIT"}
 *
 * - repetition: integer ≥ 0, default 1 (which run of INTERACT the session belongs to);
 * - session: a string or a number (numbers are read as their decimal string);
 * - j: the message number, integer ≥ 1;
 * - sender: "m" or "h" (any case), and it must be PXP's: the machine at odd j, the human at even j;
 * - tag: INIT, RATIFY, REFUTE, REVISE or REJECT in any case; INIT exactly at j = 1 (Procedure 2).
 * Other fields are allowed and ignored. Blank lines are skipped.
 */
import { z } from 'zod'
import { type PxpSeat, type PxpTag, pxpSeat, pxpTagAnyCase, seatForMessage } from './tags'

/** An input line the reader refuses; the message starts with "line N:". */
export class LineError extends Error {
  constructor(
    readonly line: number,
    detail: string,
  ) {
    super(`line ${line}: ${detail}`)
    this.name = 'LineError'
  }
}

export const pxpJsonlLine = z
  .object({
    repetition: z.number().int().min(0).default(1),
    session: z.union([z.string().min(1), z.number()]).transform(String),
    j: z.number().int().min(1),
    sender: z
      .string()
      .transform((s) => s.trim().toLowerCase())
      .pipe(pxpSeat),
    tag: pxpTagAnyCase,
  })
  .superRefine((m, ctx) => {
    const seat = seatForMessage(m.j)
    if (m.sender !== seat)
      ctx.addIssue({
        code: 'custom',
        path: ['sender'],
        message: `message ${m.j} is the ${seat === 'm' ? 'machine' : 'human'}'s ("${seat}"): the machine writes odd j, the human even j`,
      })
    if (m.j === 1 && m.tag !== 'INIT')
      ctx.addIssue({ code: 'custom', path: ['tag'], message: `message 1 is tagged INIT, not ${m.tag}` })
    if (m.j !== 1 && m.tag === 'INIT')
      ctx.addIssue({
        code: 'custom',
        path: ['tag'],
        message: `INIT is the tag of message 1 only (this is message ${m.j})`,
      })
  })

export interface PxpJsonlMessage {
  repetition: number
  session: string
  j: number
  sender: PxpSeat
  tag: PxpTag
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ')
}

/** Parses one line (1-based number `line` for errors); null for a blank line. Throws {@link LineError}. */
export function parseJsonlLine(text: string, line: number): PxpJsonlMessage | null {
  if (text.trim() === '') return null
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (e) {
    throw new LineError(line, `not valid JSON (${e instanceof Error ? e.message : String(e)})`)
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new LineError(line, 'expected a JSON object with repetition, session, j, sender and tag')
  const parsed = pxpJsonlLine.safeParse(raw)
  if (!parsed.success) throw new LineError(line, describeIssues(parsed.error))
  return parsed.data
}

/** One line of the format, fields in a fixed order; `extra` fields follow them (they cannot replace one). */
export function formatJsonlLine(m: PxpJsonlMessage, extra: Record<string, unknown> = {}): string {
  const base = { repetition: m.repetition, session: m.session, j: m.j, sender: m.sender, tag: m.tag }
  const rest = Object.fromEntries(Object.entries(extra).filter(([key]) => !(key in base)))
  return JSON.stringify({ ...base, ...rest })
}
