import { z } from 'zod'

/**
 * PXP message tags (paper Sec. 3 and Procedure 2). INIT is the tag of the machine's first message
 * (j = 1); the other four are the PXP tags proper.
 */
export const PXP_TAGS = ['INIT', 'RATIFY', 'REFUTE', 'REVISE', 'REJECT'] as const
export type PxpTag = (typeof PXP_TAGS)[number]
export const pxpTag = z.enum(PXP_TAGS)

/** The two agents: m (machine) speaks at odd j, h (human) at even j. */
export const PXP_SEATS = ['m', 'h'] as const
export type PxpSeat = (typeof PXP_SEATS)[number]
export const pxpSeat = z.enum(PXP_SEATS)

/** The seat that writes message number j (j ≥ 1): the machine at odd j, the human at even j. */
export function seatForMessage(j: number): PxpSeat {
  return j % 2 === 1 ? 'm' : 'h'
}

export function otherSeat(seat: PxpSeat): PxpSeat {
  return seat === 'm' ? 'h' : 'm'
}

/** A tag in any letter case ("ratify", "Ratify", "RATIFY"), as the authors' code writes them lower-case. */
export const pxpTagAnyCase = z
  .string()
  .transform((s) => s.trim().toUpperCase())
  .pipe(pxpTag)
