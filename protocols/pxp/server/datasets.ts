import { z } from 'zod'
import { type RowKind, scanRows } from '@/lib/tasks/datasets'
import { drugRows, GenericMapping, genericRows, radRows } from '@/protocols/pxp/core/datasets'
import { jsonText, type DatasetKind, type DatasetSource } from '@/lib/server/sdk'

/** A tabular kind's parser: the data file's records through its row checks (protocols/pxp/core/datasets.ts). */
const rows =
  (kind: RowKind) =>
  ({ data, options, availableAssets }: DatasetSource) =>
    scanRows(kind, data.name, data.read(), { options, availableAssets })

const TABLE = '.csv,.jsonl,.json,text/csv'

/** PXP's dataset kinds: the released RAD and DRUG files, and any table with a column mapping. */
export const pxpDatasets: Record<string, DatasetKind> = {
  rad: {
    label: 'RAD',
    description: 'RAD: X-ray label + report (case,label,img_path,report)',
    accepts: TABLE,
    attachments: [
      { field: 'images', label: 'Images (RAD): files or a zip', accept: 'image/*,.zip', multiple: true, images: true },
    ],
    parse: rows(radRows),
  },
  drug: {
    label: 'DRUG',
    description: 'DRUG: retrosynthesis (output,input,explanation)',
    accepts: TABLE,
    show: { prediction: 'molecule' },
    parse: rows(drugRows),
  },
  generic: {
    label: 'GENERIC',
    description: 'Generic CSV/JSONL with a column mapping',
    accepts: TABLE,
    options: z.object({ mapping: jsonText(GenericMapping).optional() }),
    fields: [
      {
        name: 'mapping',
        label: 'Column mapping (generic only, JSON)',
        placeholder: '{"inputColumns": ["question"], "predictionColumn": "answer", "explanationColumn": "rationale"}',
        multiline: true,
      },
    ],
    parse: rows(genericRows),
  },
}
