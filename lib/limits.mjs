// Resource limits a researcher's input cannot exceed, each one setting (README "Configuration").
// Plain JavaScript so next.config.js can read the upload limit too: Next's own body limits are
// derived from the same number, so the limit a person meets is ours, answered with a clear 413.

/** A positive number from the environment, or the fallback. @param {string} name @param {number} fallback */
export function positive(name, fallback) {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got "${raw}").`)
  return n
}

const MB = 1024 * 1024

/**
 * The largest upload of one request (a dataset import: the data file plus its images), in MB.
 * PARLEY_MAX_UPLOAD_MB, 250 by default.
 */
export function maxUploadMb() {
  return positive('PARLEY_MAX_UPLOAD_MB', 250)
}

export function maxUploadBytes() {
  return Math.floor(maxUploadMb() * MB)
}

/**
 * The body limits handed to Next (server actions, and the buffer of the request proxy): the upload
 * limit plus room for the multipart envelope and the form's other fields, so every upload within
 * our limit gets through and one just above it reaches our own check (a 413 with a clear message)
 * instead of being cut off (Next's proxy truncates bodies over its limit, which ended in a 500
 * "Unexpected end of form"). The proxy's buffer is larger still, so a body over the server-action
 * limit is refused by that limit's counter (413) before the proxy could cut it.
 */
export function nextBodyLimits() {
  const action = maxUploadBytes() + 2 * MB
  return { serverActionsBytes: action, proxyBytes: action + MB }
}

/**
 * What a person is told when an upload is over the limit (the import form says it before sending,
 * the server when one arrives anyway). @param {number} bytes @param {number} limitMb
 */
export function uploadTooLargeMessage(bytes, limitMb) {
  const mb = bytes / MB
  return `The upload is ${mb.toFixed(mb < 10 ? 1 : 0)} MB; the limit is ${limitMb} MB in all (PARLEY_MAX_UPLOAD_MB). Nothing was imported.`
}

/** Rows one dataset import may hold (PARLEY_MAX_IMPORT_ROWS, 200,000 by default). */
export function maxImportRows() {
  return Math.floor(positive('PARLEY_MAX_IMPORT_ROWS', 200_000))
}

/** Images of one import, in all, once inflated from their zips (PARLEY_MAX_IMAGES_MB, 200 by default). */
export function maxImagesBytes() {
  return Math.floor(positive('PARLEY_MAX_IMAGES_MB', 200) * MB)
}

/** Sessions one experiment or debate run may have: instances × repetitions (PARLEY_MAX_SESSIONS, 100,000). */
export function maxSessions() {
  return Math.floor(positive('PARLEY_MAX_SESSIONS', 100_000))
}
