import { scanRows } from '@/lib/tasks/datasets'
import { casesRows } from '@/protocols/evince/core/cases'
import type { DatasetKind } from '@/lib/server/sdk'

/** EVINCE's dataset kind: diagnosis cases (symptoms and, where known, the diagnosis). */
export const evinceDatasets: Record<string, DatasetKind> = {
  cases: {
    label: 'CASES',
    description: 'Diagnosis cases for EVINCE debates (symptoms,label)',
    accepts: '.csv,.jsonl,.json,text/csv',
    parse: ({ data }) => scanRows(casesRows, data.name, data.read()),
  },
}
