import type { Role } from '@/lib/server/auth/roles'
import { creatorStudyRole } from '@/lib/server/auth/study-roles'
import { db } from '@/lib/server/db'
import { writeAudit } from '@/lib/server/services/audit'
import { insertUser } from '@/lib/server/services/users'
import { ensureDemoConnection } from '@/lib/server/llm/runtime'

export const DEMO_PASSWORD = 'parley-demo'

export const DEMO_USERS: Array<{ email: string; name: string; role: Role }> = [
  { email: 'admin@parley.local', name: 'Ada Admin', role: 'admin' },
  { email: 'researcher@parley.local', name: 'Rosalind Researcher', role: 'researcher' },
  { email: 'expert@parley.local', name: 'Elias Expert (chemist)', role: 'expert' },
  { email: 'expert2@parley.local', name: 'Eva Expert (radiologist)', role: 'expert' },
  { email: 'annotator@parley.local', name: 'Anna Annotator', role: 'annotator' },
  { email: 'viewer@parley.local', name: 'Victor Viewer', role: 'viewer' },
]

export const DEMO_STUDY_ID = 'demo-study'
const DEMO_OWNER = 'researcher@parley.local'
export const DEMO_CASES_ID = 'demo-cases'

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

const DEMO_WORK = [
  { id: 'demo-work-expert-1', email: 'expert@parley.local', title: 'Review retrosynthesis proposals (batch 1)' },
  { id: 'demo-work-expert2-1', email: 'expert2@parley.local', title: 'Review chest X-ray reports (batch 1)' },
  { id: 'demo-work-annotator-1', email: 'annotator@parley.local', title: 'Label model explanations (batch 1)' },
]

/**
 * The demo data that ships with Parley: one user per role, a demo study and a work item each for the
 * experts and the annotator. Deterministic and idempotent: running it again changes nothing.
 */
export async function seedDemo(): Promise<{ created: string[] }> {
  const created: string[] = []
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(4242002)`
    const ids: Record<string, string> = {}
    for (const u of DEMO_USERS) {
      const existing = await tx.user.findUnique({ where: { email: u.email } })
      if (existing) {
        ids[u.email] = existing.id
        continue
      }
      const user = await insertUser(tx, { ...u, password: DEMO_PASSWORD })
      ids[u.email] = user.id
      created.push(`user ${u.email}`)
    }
    const study = await tx.study.findUnique({ where: { id: DEMO_STUDY_ID } })
    if (!study) {
      await tx.study.create({
        data: {
          id: DEMO_STUDY_ID,
          name: 'Demo: explaining retrosynthesis and X-ray reads',
          description:
            'A demonstration study written for Parley. Experts review what a model predicts and why; researchers watch agreement.',
          guidelines:
            'Judge the prediction first, then the explanation. Say why you disagree in one or two sentences: the model reads your reasons.',
          createdById: ids[DEMO_OWNER],
        },
      })
      created.push(`study ${DEMO_STUDY_ID}`)
    }
    for (const u of DEMO_USERS) {
      if (u.role === 'admin') continue
      await tx.studyMember.upsert({
        where: { studyId_userId: { studyId: DEMO_STUDY_ID, userId: ids[u.email] as string } },
        // The researcher created the demo study, so they are its study admin (as createStudy makes them).
        create: {
          studyId: DEMO_STUDY_ID,
          userId: ids[u.email] as string,
          role: u.email === DEMO_OWNER ? creatorStudyRole(u.role) : u.role,
        },
        update: {},
      })
    }
    for (const w of DEMO_WORK) {
      if (await tx.assignment.findUnique({ where: { id: w.id } })) continue
      await tx.assignment.create({
        data: {
          id: w.id,
          studyId: DEMO_STUDY_ID,
          userId: ids[w.email] as string,
          kind: 'review',
          title: w.title,
          instructions: 'Open each item, compare the model’s answer with yours, and mark the batch done when finished.',
        },
      })
      created.push(`work ${w.id}`)
    }
    if (!(await tx.dataset.findUnique({ where: { id: DEMO_CASES_ID } }))) {
      await tx.dataset.create({
        data: {
          id: DEMO_CASES_ID,
          studyId: DEMO_STUDY_ID,
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
    if (created.length) {
      await writeAudit(tx, {
        actor: { userId: null, email: null, via: 'seed' },
        action: 'seed.demo',
        resourceType: 'system',
        resourceId: 'seed',
        after: { created },
      })
    }
  })
  await ensureDemoConnection()
  return { created }
}
