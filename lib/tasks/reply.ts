/**
 * Parsing a model's "Prediction: … / Explanation: …" reply (paper Examples 1–2; DRUG uses
 * "Pathway:" for the explanation in the paper's prompt and "Prediction:" for the reactant SMILES).
 *
 * The last "Prediction:" line is the prediction (models sometimes restate); the explanation is
 * everything after the last explanation marker, across lines. Markdown emphasis around the fields
 * ("*Prediction: Pneumonia*") is removed. Unlike the authors' parser, no character is chopped off.
 */
export interface ParsedReply {
  prediction: string
  explanation: string
}

const strip = (s: string) => s.replace(/^[\s*_`"']+|[\s*_`"']+$/g, '').trim()

export function parseReply(
  text: string,
  keys: { prediction?: string; explanation?: string[] } = {},
): { ok: true; value: ParsedReply } | { ok: false; error: string } {
  const predKey = keys.prediction ?? 'Prediction'
  const explKeys = keys.explanation ?? ['Explanation']
  const lines = text.replace(/\r\n/g, '\n').split('\n')
  const keyRe = (k: string) => new RegExp(`^[\\s*_#>-]*${k}\\s*:\\s*(.*)$`, 'i')
  let prediction: string | undefined
  let explIndex = -1
  let explFirst = ''
  lines.forEach((line, i) => {
    const p = keyRe(predKey).exec(line)
    if (p) prediction = strip(p[1] ?? '')
    for (const k of explKeys) {
      const e = keyRe(k).exec(line)
      if (e) {
        explIndex = i
        explFirst = e[1] ?? ''
      }
    }
  })
  if (prediction === undefined && explIndex < 0) {
    return { ok: false, error: `The reply has neither a "${predKey}:" nor an "${explKeys[0]}:" line.` }
  }
  if (prediction === undefined || !prediction) return { ok: false, error: `The reply has no "${predKey}:" value.` }
  // The explanation runs to the end, unless a later prediction line follows it.
  const rest = explIndex >= 0 ? [explFirst, ...lines.slice(explIndex + 1).filter((l) => !keyRe(predKey).test(l))] : []
  const explanation = strip(rest.join('\n'))
  if (!explanation) return { ok: false, error: `The reply has no "${explKeys[0]}:" value.` }
  return { ok: true, value: { prediction, explanation } }
}

/**
 * MATCH for labels (RAD): case-insensitive, ignoring punctuation and extra spaces; like the
 * authors' code, one label contained in the other also matches ("effusion" vs "Pleural Effusion").
 */
export function labelsMatch(a: string, b: string): boolean {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .trim()
  const x = norm(a)
  const y = norm(b)
  if (!x || !y) return false
  return x === y || x.includes(y) || y.includes(x)
}
