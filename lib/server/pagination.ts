import { z } from 'zod'

export const pageInput = {
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
}

export interface Page<T> {
  items: T[]
  page: number
  pageSize: number
  total: number
  pageCount: number
}

export function pageOf<T>(items: T[], total: number, page: number, pageSize: number): Page<T> {
  return { items, page, pageSize, total, pageCount: Math.max(1, Math.ceil(total / pageSize)) }
}

export const skipTake = (page: number, pageSize: number) => ({ skip: (page - 1) * pageSize, take: pageSize })

/** A boolean from a query string or form: true/false, "true"/"false", "1"/"0", "on". */
export const boolParam = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0', 'on']).transform((v) => v === 'true' || v === '1' || v === 'on'),
])
