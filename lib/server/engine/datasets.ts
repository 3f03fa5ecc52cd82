import type { z } from 'zod'

/**
 * A dataset kind: what a protocol's plugin declares (`datasets: { <kind>: DatasetKind }`) so that its
 * files can be imported. The one streaming import job (lib/server/services/dataset-import.ts) finds
 * the kind among the plugins and streams the uploaded files through its `parse`, with the job's caps
 * (PARLEY_MAX_UPLOAD_MB at the request, PARLEY_MAX_IMPORT_ROWS, PARLEY_MAX_IMAGES_MB), its progress
 * and its all-or-nothing: nothing is stored unless every item parsed, on whichever worker takes it.
 * Generic code never names a kind; the list of kinds is the plugins' (an unknown kind is refused at
 * the request, naming the kinds there are).
 */

/** An uploaded file of an import, read one stored piece at a time (bounded memory). */
export interface ImportFile {
  /** `data` for the data file, otherwise the attachment's field. */
  role: string
  name: string
  size: number
  read(): AsyncIterable<Uint8Array>
}

/** What a kind's parser reads. */
export interface DatasetSource<O = unknown> {
  /** The data file (the request's `file`). */
  data: ImportFile
  /** The files uploaded beside it, in order (the kind's `attachments`, by role). */
  attachments: ImportFile[]
  /** The import's options as the kind's `options` schema read them at the request. */
  options: O
  /**
   * The image files uploaded with it, by file name (loose or inside zips), when the kind takes an
   * `images` attachment: a row that names one the upload lacks is a problem of that row.
   */
  availableAssets?: ReadonlySet<string>
}

/**
 * One item of a parse: an instance (x, y, e and the row's other columns) with the image file it
 * refers to, or a problem. `line` is the 1-based line of the file (0: the file as a whole); a `fatal`
 * problem means nothing after it can be read (a missing column).
 */
export type DatasetItem =
  | {
      line: number
      row: {
        index: number
        input: Record<string, unknown>
        prediction: string
        explanation: string
        meta: Record<string, unknown>
      }
      asset?: string
    }
  | { line: number; problem: string; fatal?: boolean }

/** A file (or several) uploaded beside the data file. */
export interface DatasetAttachment {
  /** The request's field (a multipart field of that name; several files may share it). */
  field: string
  /** The upload form's label. */
  label: string
  /** The upload form's file types (an <input accept>). */
  accept: string
  multiple?: boolean
  /**
   * Images the rows name by file name, as loose files or zips: the job lists them (declared sizes,
   * nothing inflated) for `availableAssets`, then stores only those the rows refer to (the image route
   * serves them), within PARLEY_MAX_IMAGES_MB.
   */
  images?: boolean
}

/** A text field of the generic upload form, read by the kind's `options`. */
export interface DatasetField {
  name: string
  label: string
  placeholder?: string
  multiline?: boolean
}

export interface DatasetKind<O = any> {
  /** A few words: the upload form's choice and the dataset page's heading (e.g. "RAD"). */
  label: string
  /** What the file holds (columns, what becomes x, y and e), shown with the choice. */
  description: string
  /** The data file's types (an <input accept>, e.g. ".csv,.jsonl"). */
  accepts: string
  attachments?: DatasetAttachment[]
  /**
   * The import's own options, read from the request's fields (a form's, or a REST upload's): refused
   * with 400 before anything is stored. They reach `parse` as parsed, through the job.
   */
  options?: z.ZodType<O, any>
  /** The fields the generic upload form shows for `options` (none: the protocol has its own form). */
  fields?: DatasetField[]
  /** The protocol imports this kind with its own form (the generic upload form does not offer it). */
  ownForm?: boolean
  /** How the dataset page shows a row's prediction (default: as text). */
  show?: { prediction?: 'text' | 'molecule' }
  /**
   * The streaming parser: every record of the files → an instance or a problem naming its line, in
   * order, without holding the whole file where it can help it. The job calls it twice (check every
   * item, then insert them), so it must be deterministic for the same files and options.
   */
  parse(source: DatasetSource<O>): AsyncIterable<DatasetItem>
}
