import { db, type DemoSeed } from '@/lib/server/sdk'

/** A small case set for EVINCE debates, written by us (symptom lists in the style of the paper's cases). */
export const DEMO_CASES: Array<[string, string]> = [
  ['high fever, severe joint pain, pain behind the eyes, skin rash, headache, muscle pain', 'Dengue Fever'],
  ['yellowish skin, dark urine, itching, abdominal pain, loss of appetite, fatigue', 'Jaundice'],
  ['fever with chills, sweating, headache, nausea, vomiting, recurring every two days', 'Malaria'],
  ['increased thirst, frequent urination, blurred vision, fatigue, weight loss', 'Diabetes'],
  ['burning urination, frequent urge to urinate, cloudy urine, lower abdominal pain', 'Urinary Tract Infection'],
  ['chest pain on exertion, shortness of breath, sweating, pain spreading to the left arm', 'Heart Attack'],
  ['persistent cough with phlegm, fever, chest pain when breathing, fatigue', 'Pneumonia'],
  ['itchy red patches, silvery scales on elbows and knees, joint stiffness', 'Psoriasis'],
]
export const DEMO_CASES_ID = 'demo-cases'

/** The demo case set, a finished debate batch of the demo model, and a debate waiting for the radiologist. */
export async function seedEvinceDemo(s: DemoSeed): Promise<string[]> {
  const created: string[] = []
  if (!(await db.dataset.findUnique({ where: { id: DEMO_CASES_ID } }))) {
    await db.dataset.create({
      data: {
        id: DEMO_CASES_ID,
        studyId: s.studyId,
        name: 'Demo diagnosis cases (EVINCE)',
        kind: 'cases',
        source: 'written for Parley',
        instances: {
          create: DEMO_CASES.map(([symptoms, label], index) => ({
            index,
            input: { symptoms },
            prediction: label,
            explanation: '',
          })),
        },
      },
    })
    created.push(`dataset ${DEMO_CASES_ID}`)
  }
  const demo = (temperature: number) => ({ kind: 'llm', connectionId: s.demoConnectionId, temperature })
  const batch = await s.run('evince', {
    name: 'Demo debates: simulated A (T=0.2) vs B (T=1.0)',
    datasetId: DEMO_CASES_ID,
    A: demo(0.2),
    B: demo(1),
    judge: { connectionId: s.demoConnectionId },
    config: { k: 3, maxRounds: 4 },
  })
  if (batch.created) {
    await s.play(batch.id)
    created.push('run demo debates')
  }
  const radiologist = s.people['expert2@parley.local']
  if (radiologist) {
    const mine = await s.run('evince', {
      name: 'Demo debate: you against the simulated model',
      datasetId: DEMO_CASES_ID,
      sample: 1,
      A: demo(0.2),
      B: { kind: 'human', userId: radiologist.userId },
      judge: { connectionId: s.demoConnectionId },
      config: { k: 3, maxRounds: 3 },
    })
    if (mine.created) {
      await s.play(mine.id)
      created.push('run debate for expert2@parley.local')
    }
  }
  return created
}
