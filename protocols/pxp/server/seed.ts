import { deflateSync } from 'node:zlib'
import type { RAD_LABELS } from '@/protocols/pxp/core/datasets'
import { db, type DemoSeed } from '@/lib/server/sdk'

/**
 * PXP's demo data, written by us: a few synthetic "X-rays" (drawn shapes, not medical images) with
 * one of the five RAD labels and a reason, a few single-step retrosyntheses, a finished experiment on
 * each (R = 2, the demo model as the machine, the ground-truth proxy as the tester), and a session
 * waiting for each demo expert.
 */
const RAD_DEMO: Array<{
  name: string
  label: (typeof RAD_LABELS)[number]
  reason: string
  spot: [number, number, number]
}> = [
  {
    name: 'demo-xray-1.png',
    label: 'Pneumonia',
    reason: 'Synthetic image: a patchy bright area in the right lower zone stands for consolidation.',
    spot: [104, 118, 18],
  },
  {
    name: 'demo-xray-2.png',
    label: 'Cardiomegaly',
    reason: 'Synthetic image: the central bright shape is wider than half the chest.',
    spot: [80, 100, 34],
  },
  {
    name: 'demo-xray-3.png',
    label: 'Pleural Effusion',
    reason: 'Synthetic image: the left base is bright and flat-topped, as fluid would be.',
    spot: [46, 134, 22],
  },
  {
    name: 'demo-xray-4.png',
    label: 'Pneumothorax',
    reason: 'Synthetic image: the right upper field is dark with no markings.',
    spot: [112, 40, 16],
  },
]

const DRUG_DEMO: Array<[string, string, string]> = [
  ['CCOC(C)=O', 'CC(=O)O.CCO', 'Fischer esterification: acetic acid and ethanol with an acid catalyst, water removed.'],
  ['CC(=O)Nc1ccccc1', 'CC(=O)Cl.Nc1ccccc1', 'Acylation of aniline with acetyl chloride; a base takes up the HCl.'],
  ['COc1ccccc1', 'Oc1ccccc1.CI', 'Williamson ether synthesis: phenoxide from phenol and a base, then methyl iodide.'],
  ['O=C(O)c1ccccc1', 'OCc1ccccc1', 'Oxidation of benzyl alcohol to benzoic acid (e.g. with permanganate).'],
]

/** A 160×160 greyscale PNG: a chest-like outline with one bright or dark spot. */
function syntheticXray(spot: [number, number, number], dark: boolean): Uint8Array<ArrayBuffer> {
  const w = 160
  const h = 160
  const raw = Buffer.alloc((w + 1) * h)
  for (let y = 0; y < h; y++) {
    raw[y * (w + 1)] = 0
    for (let x = 0; x < w; x++) {
      const lung = ((x - 50) / 30) ** 2 + ((y - 85) / 55) ** 2 < 1 || ((x - 110) / 30) ** 2 + ((y - 85) / 55) ** 2 < 1
      let v = lung ? 40 : 150
      const d = Math.hypot(x - spot[0], y - spot[1])
      if (d < spot[2]) v = dark ? 10 : 210
      raw[y * (w + 1) + 1 + x] = v + ((x * 7 + y * 13) % 9)
    }
  }
  const crc = (b: Buffer) => {
    let c = ~0
    for (const byte of b) {
      c ^= byte
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1))
    }
    return ~c >>> 0
  }
  const chunk = (type: string, data: Buffer) => {
    const t = Buffer.from(type, 'ascii')
    const len = Buffer.alloc(4)
    len.writeUInt32BE(data.length)
    const c = Buffer.alloc(4)
    c.writeUInt32BE(crc(Buffer.concat([t, data])))
    return Buffer.concat([len, t, data, c])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(w, 0)
  ihdr.writeUInt32BE(h, 4)
  ihdr[8] = 8
  return Uint8Array.from(
    Buffer.concat([
      Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(raw)),
      chunk('IEND', Buffer.alloc(0)),
    ]),
  )
}

async function dataset(s: DemoSeed, id: string, name: string, kind: 'rad' | 'drug') {
  if (await db.dataset.findUnique({ where: { id } })) return false
  await db.dataset.create({
    data: {
      id,
      studyId: s.studyId,
      name,
      kind,
      source: 'written for Parley',
      createdById: s.researcher.userId,
      ...(kind === 'rad'
        ? {
            assets: {
              create: RAD_DEMO.map((r) => ({
                name: r.name,
                mime: 'image/png',
                bytes: syntheticXray(r.spot, r.label === 'Pneumothorax'),
              })),
            },
            instances: {
              create: RAD_DEMO.map((r, index) => ({
                index,
                input: { image: r.name },
                prediction: r.label,
                explanation: r.reason,
                meta: { case: `demo-${index + 1}` },
              })),
            },
          }
        : {
            instances: {
              create: DRUG_DEMO.map(([product, reactants, pathway], index) => ({
                index,
                input: { smiles: product },
                prediction: reactants,
                explanation: pathway,
                meta: { case: `demo-${index + 1}` },
              })),
            },
          }),
    },
  })
  return true
}

export async function seedPxpDemo(s: DemoSeed): Promise<string[]> {
  const created: string[] = []
  if (await dataset(s, 'demo-rad', 'Demo chest images (synthetic)', 'rad')) created.push('dataset demo-rad')
  if (await dataset(s, 'demo-drug', 'Demo retrosyntheses', 'drug')) created.push('dataset demo-drug')
  const demo = { connectionId: s.demoConnectionId }
  for (const [task, datasetId] of [
    ['RAD', 'demo-rad'],
    ['DRUG', 'demo-drug'],
  ] as const) {
    const r = await s.run('pxp', {
      name: `Demo ${task}: simulated model vs the ground truth, R = 2`,
      datasetId,
      repetitions: 2,
      generator: { ...demo, vision: true },
      checker: demo,
    })
    if (r.created) {
      await s.play(r.id)
      created.push(`run ${task} (PXP)`)
    }
  }
  // Work for the demo experts: the chemist tests the DRUG machine, the radiologist the RAD one.
  for (const [task, datasetId, email] of [
    ['DRUG', 'demo-drug', 'expert@parley.local'],
    ['RAD', 'demo-rad', 'expert2@parley.local'],
  ] as const) {
    const expert = s.people[email]
    if (!expert) continue
    const r = await s.run('pxp', {
      name: `Demo ${task}: you test the simulated model`,
      datasetId,
      sample: 2,
      tester: 'expert',
      expertIds: [expert.userId],
      generator: { ...demo, vision: true },
      checker: demo,
    })
    if (r.created) {
      await s.play(r.id)
      created.push(`run ${task} for ${email}`)
    }
  }
  return created
}
