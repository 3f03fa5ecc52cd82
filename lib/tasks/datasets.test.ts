import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  DatasetScanner as Scanner,
  parseDataset as parseRows,
  type RowKind,
  type RowOptions,
  streamRecords,
} from './datasets'
import { casesRows } from '../../protocols/evince/core/cases'
import { drugRows, type GenericMapping, genericRows, RAD_LABELS, radRows } from '../../protocols/pxp/core/datasets'

// The released PXP data, read in place from ../shared (never copied into the project).
import { describeShared, PXP_DATA as DATA, sharedMissing } from '../../tests/support/shared'
const read = (f: string) => readFileSync(path.join(DATA, f), 'utf8')
// Read when a test that needs it runs: at load time it would fail the whole file on a clone without
// ../shared, where the blocks that use it skip.
let xrays: Set<string> | undefined
const images = () => {
  xrays ??= new Set(readdirSync(path.join(DATA, 'xrays')))
  return xrays
}

/** The kinds by the names their plugins declare them under (PXP: rad, drug, generic; EVINCE: cases). */
const KINDS: Record<'rad' | 'drug' | 'generic' | 'cases', RowKind> = {
  rad: radRows,
  drug: drugRows,
  generic: genericRows,
  cases: casesRows,
}
type Opts = { mapping?: GenericMapping; availableAssets?: ReadonlySet<string> }
const rowOptions = ({ mapping, availableAssets }: Opts): RowOptions => ({
  availableAssets,
  ...(mapping ? { options: { mapping } } : {}),
})
const parseDataset = (kind: keyof typeof KINDS, name: string, content: string, opts: Opts = {}) =>
  parseRows(KINDS[kind], name, content, rowOptions(opts))
class DatasetScanner extends Scanner {
  constructor(kind: keyof typeof KINDS, opts: Opts = {}) {
    super(KINDS[kind], rowOptions(opts))
  }
}

describeShared(
  'the released PXP files import as they are',
  () => {
    it('RAD train: 20 rows, five labels with the published counts, every image present', () => {
      const r = parseDataset('rad', 'train_xray_data.csv', read('train_xray_data.csv'), { availableAssets: images() })
      expect(r.errors).toEqual([])
      expect(r.rows).toHaveLength(20)
      const counts: Record<string, number> = {}
      for (const row of r.rows) counts[row.prediction] = (counts[row.prediction] ?? 0) + 1
      expect(counts).toEqual({ Pneumothorax: 6, Cardiomegaly: 6, Atelectasis: 5, 'Pleural Effusion': 2, Pneumonia: 1 })
      expect(r.rows[0]).toMatchObject({
        index: 0,
        input: { image: 'Case 1 Image - Lateral.png' },
        prediction: 'Atelectasis',
      })
      expect(r.rows[0]?.meta).toMatchObject({ case: 'case_1', label_short: 'ATCS' })
      expect(r.rows.every((x) => x.explanation.length > 50)).toBe(true)
    })

    it('RAD val: 27 rows with the published label counts', () => {
      const r = parseDataset('rad', 'val_xray_data.csv', read('val_xray_data.csv'), { availableAssets: images() })
      expect(r.errors).toEqual([])
      const counts: Record<string, number> = {}
      for (const row of r.rows) counts[row.prediction] = (counts[row.prediction] ?? 0) + 1
      expect(counts).toEqual({ Atelectasis: 9, Cardiomegaly: 6, Pneumonia: 6, Pneumothorax: 4, 'Pleural Effusion': 2 })
      expect(Object.keys(counts).every((l) => (RAD_LABELS as readonly string[]).includes(l))).toBe(true)
    })

    it('DRUG: 95 rows, product SMILES in, reactant SMILES out', () => {
      const r = parseDataset('drug', 'retro.csv', read('retro.csv'))
      expect(r.errors).toEqual([])
      expect(r.rows).toHaveLength(95)
      expect(r.rows[0]).toMatchObject({
        input: { smiles: 'N#Cc1ccccc1Oc1ccc(N(Cc2cccnc2)S(=O)(=O)CC(F)(F)F)cc1' },
        prediction: 'N#Cc1ccccc1Oc1ccc(NCc2cccnc2)cc1.O=S(=O)(Cl)CC(F)(F)F',
      })
    })
  },
  'datasets/pxp-interact',
)

describe('bad files: every problem reported by line, no rows returned', () => {
  it('reports each bad row and returns nothing', () => {
    const csv = [
      'case,label,img_path,report',
      'a,Atelectasis,x/one.png,fine report',
      'b,Flu,x/two.png,another',
      'c,Pneumonia,,',
      'd,Pneumonia,x/missing.png,ok',
    ].join('\n')
    const r = parseDataset('rad', 'bad.csv', csv, { availableAssets: new Set(['one.png', 'two.png']) })
    expect(r.rows).toEqual([])
    expect(r.errors).toEqual([
      { line: 3, message: expect.stringContaining('label "Flu" is not one of') },
      { line: 4, message: 'img_path is empty; report is empty' },
      { line: 5, message: 'image "missing.png" is not in the uploaded images' },
    ])
  })

  it('missing columns, broken CSV and bad JSONL lines are clear errors', () => {
    expect(parseDataset('drug', 'x.csv', 'input,explanation\nCCO,why').errors).toEqual([
      { line: 1, message: 'Missing column: output.' },
    ])
    expect(parseDataset('drug', 'x.csv', 'output,input,explanation\n"CCO,CC,x\n').errors[0]?.message).toMatch(
      /cannot be read/,
    )
    const jsonl = '{"q":"2+2","a":"4","why":"sum"}\nnot json\n[1]\n{"q":"","a":"","why":""}\n'
    const r = parseDataset('generic', 'x.jsonl', jsonl, {
      mapping: { inputColumns: ['q'], predictionColumn: 'a', explanationColumn: 'why' },
    })
    expect(r.rows).toEqual([])
    expect(r.errors).toEqual([
      { line: 2, message: 'Not valid JSON.' },
      { line: 3, message: 'Each line must be a JSON object.' },
      { line: 4, message: 'all input columns are empty; a is empty' },
    ])
  })

  it('a good generic JSONL maps columns to x, y, e and keeps the rest as meta', () => {
    const r = parseDataset('generic', 'x.jsonl', '{"q":"2+2","a":"4","why":"sum","src":"gsm"}\n', {
      mapping: { inputColumns: ['q'], predictionColumn: 'a', explanationColumn: 'why' },
    })
    expect(r.rows).toEqual([
      { index: 0, input: { q: '2+2' }, prediction: '4', explanation: 'sum', meta: { src: 'gsm' } },
    ])
  })
})

describe('diagnosis cases for EVINCE debates', () => {
  it('reads symptoms and a label (any of label/diagnosis/disease, any case), JSONL too', () => {
    const csv =
      'Symptoms,Diagnosis,notes,source\n"fever, rash",Dengue Fever,seen in 2024,clinic A\n"thirst, frequent urination",,,\n'
    const r = parseDataset('cases', 'cases.csv', csv)
    expect(r.errors).toEqual([])
    expect(r.rows).toEqual([
      {
        index: 0,
        input: { symptoms: 'fever, rash' },
        prediction: 'Dengue Fever',
        explanation: 'seen in 2024',
        meta: { source: 'clinic A' },
      },
      {
        index: 1,
        input: { symptoms: 'thirst, frequent urination' },
        prediction: '',
        explanation: '',
        meta: { source: '' },
      },
    ])
    const jsonl = '{"symptoms": "cough, phlegm", "disease": "Pneumonia"}\n'
    expect(parseDataset('cases', 'cases.jsonl', jsonl).rows[0]).toMatchObject({
      input: { symptoms: 'cough, phlegm' },
      prediction: 'Pneumonia',
    })
  })

  it('reads the Kaggle disease-symptom layout: Symptom_1 … Symptom_17 joined, underscores as spaces', () => {
    const csv =
      'Disease,Symptom_1,Symptom_2,Symptom_3\nFungal infection, itching, skin_rash,nodal_skin_eruptions\nAllergy, continuous_sneezing,,\n'
    const r = parseDataset('cases', 'dataset.csv', csv)
    expect(r.errors).toEqual([])
    expect(r.rows.map((x) => [x.input.symptoms, x.prediction])).toEqual([
      ['itching, skin rash, nodal skin eruptions', 'Fungal infection'],
      ['continuous sneezing', 'Allergy'],
    ])
  })

  it('refuses a file without symptoms, and empty symptoms by line, importing nothing', () => {
    expect(parseDataset('cases', 'x.csv', 'label\nFlu\n').errors).toEqual([
      { line: 1, message: 'Missing column: symptoms (or Symptom_1 … Symptom_17).' },
    ])
    const r = parseDataset('cases', 'x.csv', 'symptoms,label\nfever,Flu\n,Cold\n')
    expect(r.rows).toEqual([])
    expect(r.errors).toEqual([{ line: 3, message: 'symptoms are empty' }])
  })
})

describe('streaming: the same rows and problems from any split of the file', () => {
  /** The file in pieces of `size` bytes (cutting through lines and multi-byte characters). */
  async function* pieces(text: string, size: number) {
    const bytes = Buffer.from(text)
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
  }
  async function scan(kind: 'rad' | 'drug' | 'generic' | 'cases', name: string, text: string, size: number, opts = {}) {
    const scanner = new DatasetScanner(kind, opts)
    const out = []
    for await (const rec of streamRecords(name, pieces(text, size))) out.push(scanner.push(rec))
    out.push(scanner.end())
    return out.filter(Boolean)
  }
  const expected = (kind: 'rad' | 'drug', name: string, text: string, opts = {}) => parseDataset(kind, name, text, opts)

  // The released files are the inputs of these three; on a clone without ../shared they skip.
  const released = sharedMissing('datasets/pxp-interact')
  for (const size of [7, 1000, 1 << 20])
    it.skipIf(!!released)(`RAD and DRUG in pieces of ${size} bytes`, async () => {
      for (const [kind, name, opts] of [
        ['rad', 'train_xray_data.csv', { availableAssets: images() }],
        ['drug', 'retro.csv', {}],
      ] as const) {
        const items = await scan(kind, name, read(name), size, opts)
        expect(items.map((i) => i && 'row' in i && i.row)).toEqual(expected(kind, name, read(name), opts).rows)
      }
    })

  it('JSONL with CRLF and a multi-byte character cut in two; problems by line', async () => {
    const jsonl = '{"q":"2+2 → 4","a":"4","why":"sum"}\r\nnot json\r\n\r\n{"q":"é","a":"","why":""}'
    const mapping = { inputColumns: ['q'], predictionColumn: 'a', explanationColumn: 'why' }
    const items = await scan('generic', 'x.jsonl', jsonl, 3, { mapping })
    expect(items).toEqual([
      { line: 1, row: { index: 0, input: { q: '2+2 → 4' }, prediction: '4', explanation: 'sum', meta: {} } },
      { line: 2, problem: 'Not valid JSON.' },
      { line: 4, problem: 'a is empty' },
    ])
  })

  it('a CSV that cannot be read ends with the line where reading stopped; an empty file has no rows', async () => {
    const items = await scan('drug', 'x.csv', 'output,input,explanation\nCCO,CC,x\n"CCO,CC,x\n', 5)
    expect(items.at(-1)).toEqual({ line: 3, problem: expect.stringMatching(/^The CSV cannot be read: /) })
    expect(await scan('drug', 'x.csv', '', 5)).toEqual([{ line: 1, problem: 'The file has no rows.', fatal: true }])
  })
})

describe('sourceIdOf: the source file’s own id of a row', () => {
  it('prefers RAD’s case, then case_id or id; null when the file has none', async () => {
    const { sourceIdOf } = await import('./datasets')
    expect(sourceIdOf({ case: 'case_1', label_short: 'ATCS', id: 'x' })).toBe('case_1')
    expect(sourceIdOf({ case_id: 7 })).toBe('7')
    expect(sourceIdOf({ id: ' p-12 ' })).toBe('p-12')
    expect(sourceIdOf({ matchOK: 'True' })).toBeNull()
    expect(sourceIdOf({ case: '' })).toBeNull()
    expect(sourceIdOf(null)).toBeNull()
  })
})
