import path from 'node:path'

/**
 * The released data sets live in ../shared beside the project (never copied into it). Set
 * PARLEY_SHARED_DIR to read them from elsewhere.
 */
export const SHARED_DIR = process.env.PARLEY_SHARED_DIR
  ? path.resolve(process.env.PARLEY_SHARED_DIR)
  : path.resolve(import.meta.dirname, '../../../shared')

export const PXP_DATA = path.join(SHARED_DIR, 'datasets', 'pxp-interact')
