import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'

/**
 * The `labelling-items` kind through the engine's one import job: CSV (id, text, title, format, gold)
 * and JSON Lines (every item kind, optional gold), all or nothing, problems by line; gold kept in the
 * instance's prediction (JSON), never in its input (what a session runs on).
 */
useBulkWorkers()

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  return { researcher, studyId: study.id }
}
const file = (name: string, text: string) => new File([text], name)

describe('labelling-items import', () => {
  it('CSV: one text item per row, gold in the prediction only', async () => {
    const { researcher, studyId } = await world()
    const csv =
      'id,text,title,format,gold\na1,"The cat sat, quietly.",Cats,plain,2\na2,**bold** claim,,markdown,\na3,Third,,,unsure\n'
    const r = await importAndWait(researcher, {
      studyId,
      name: 'items',
      kind: 'labelling-items',
      file: file('items.csv', csv),
    })
    expect(r).toMatchObject({ ok: true, data: { status: 'ready', instances: 3 } })
    const rows = await db.instance.findMany({
      where: { dataset: { studyId } },
      orderBy: { index: 'asc' },
      select: { input: true, prediction: true },
    })
    expect(rows.map((x) => x.input)).toEqual([
      { kind: 'text', id: 'a1', text: 'The cat sat, quietly.', title: 'Cats', format: 'plain' },
      { kind: 'text', id: 'a2', text: '**bold** claim', format: 'markdown' },
      { kind: 'text', id: 'a3', text: 'Third', format: 'plain' },
    ])
    expect(rows.map((x) => x.prediction)).toEqual(['2', '', '"unsure"'])
  })

  it('JSON Lines: every item kind, with gold as a value or answers', async () => {
    const { researcher, studyId } = await world()
    const lines = [
      {
        kind: 'query-doc',
        id: 'q1-d1',
        topicId: '101',
        query: 'hubble',
        docId: 'd1',
        document: 'Hubble text',
        gold: 1,
      },
      { id: 't', text: 'a plain text item' },
      {
        kind: 'transcript',
        id: 'tr',
        sessionId: 's9',
        protocol: 'evince',
        title: 'A debate',
        turns: [{ index: 0, who: 'A', text: 'hi' }],
        gold: { O: 2, M: 1 },
      },
    ]
    const r = await importAndWait(researcher, {
      studyId,
      name: 'items',
      kind: 'labelling-items',
      file: file('items.jsonl', lines.map((l) => JSON.stringify(l)).join('\n')),
    })
    expect(r).toMatchObject({ ok: true, data: { status: 'ready', instances: 3 } })
    const rows = await db.instance.findMany({
      where: { dataset: { studyId } },
      orderBy: { index: 'asc' },
      select: { input: true, prediction: true, meta: true },
    })
    expect(rows.map((x) => (x.input as { kind: string }).kind)).toEqual(['query-doc', 'text', 'transcript'])
    expect(rows.map((x) => x.prediction)).toEqual(['1', '', '{"O":2,"M":1}'])
    for (const x of rows) expect(JSON.stringify(x.input)).not.toContain('gold')
    expect(rows[0]?.meta).toMatchObject({ itemId: 'q1-d1', topicId: '101', docId: 'd1' })
  })

  it('refuses a whole file for one bad line, naming the lines, and stores nothing', async () => {
    const { researcher, studyId } = await world()
    const lines = [
      JSON.stringify({ id: 'ok1', text: 'fine' }),
      JSON.stringify({ kind: 'query-doc', id: 'bad', topicId: '1', query: 'q', docId: 'd' }),
      'not json',
      JSON.stringify({ id: 'ok1', text: 'again' }),
      JSON.stringify({ id: 'long', text: 'x'.repeat(200_001) }),
    ]
    const r = await importAndWait(researcher, {
      studyId,
      name: 'items',
      kind: 'labelling-items',
      file: file('items.jsonl', lines.join('\n')),
    })
    expect(r.ok).toBe(false)
    const msg = r.ok ? '' : JSON.stringify(r)
    expect(msg).toMatch(/line 2/i)
    expect(msg).toMatch(/document/)
    expect(msg).toMatch(/line 3/i)
    expect(msg).toMatch(/appears twice/)
    expect(msg).toMatch(/200,000/)
    expect(await db.instance.count({ where: { dataset: { studyId } } })).toBe(0)
    const csv = await importAndWait(researcher, {
      studyId,
      name: 'items',
      kind: 'labelling-items',
      file: file('items.csv', 'id,body\na,b\n'),
    })
    expect(csv.ok).toBe(false)
    expect(csv.ok ? '' : JSON.stringify(csv)).toMatch(/columns id and text/)
  })
})
