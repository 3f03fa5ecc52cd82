import { z } from 'zod'

/** Settings of a debate run's analysis only, never of its debates: label merges for the results. */
const Analysis = z.object({ merges: z.record(z.string(), z.string()).default({}) })
export const analysisOf = (raw: unknown) => Analysis.catch({ merges: {} }).parse(raw ?? {})
