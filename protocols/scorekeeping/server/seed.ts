import { strToU8, zipSync } from 'fflate'
import { db, type DemoSeed } from '@/lib/server/sdk'
import { demoGameFiles } from '@/protocols/scorekeeping/server/demo'

const NAME = 'Demo game: clinic visit (scorekeeping)'

/**
 * The demo game (written by us in clembench's layout), imported the way a researcher imports
 * clembench's own folder; a finished run of the demo model, and a run whose answerer seat any member
 * may claim, so people play the same games.
 */
export async function seedScorekeepingDemo(s: DemoSeed): Promise<string[]> {
  const created: string[] = []
  let ds = await db.dataset.findFirst({ where: { studyId: s.studyId, name: NAME } })
  if (!ds) {
    const zip = zipSync(
      Object.fromEntries(Object.entries(demoGameFiles()).map(([k, v]) => [`clinic/${k}`, strToU8(v)])),
    )
    const id = await s.importDataset({
      kind: 'clembench',
      name: NAME,
      file: new File([Buffer.from(zip)], 'clinic-visit.zip'),
    })
    ds = await db.dataset.findUniqueOrThrow({ where: { id } })
    created.push('dataset demo game')
  }
  const model = await s.run('scorekeeping', {
    name: 'Demo game: the simulated model answers',
    datasetId: ds.id,
    answerer: { kind: 'llm', connectionId: s.demoConnectionId },
  })
  if (model.created) {
    await s.play(model.id)
    created.push('run demo game (model)')
  }
  const people = await s.run('scorekeeping', {
    name: 'Demo game: people answer (claim a game)',
    datasetId: ds.id,
    answerer: { kind: 'claimable' },
  })
  if (people.created) {
    await s.play(people.id)
    created.push('run demo game (people)')
  }
  return created
}
