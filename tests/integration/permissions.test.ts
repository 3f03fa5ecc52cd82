import type { Prisma } from '@/lib/generated/prisma/client'
import { randomUUID } from 'node:crypto'
import { strToU8, zipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { ROLES, type Role } from '@/lib/server/auth/roles'
import type { StudyRole } from '@/lib/server/auth/study-roles'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute, type Operation } from '@/lib/server/operation'
import { allOperations } from '@/lib/server/operations'
import { createApiKey } from '@/lib/server/services/api-keys'
import { labellingDataset } from '@/protocols/labelling/fixture'
import { releasedRecordLine } from '@/protocols/mint/fixture'
import { branchableEpisode } from '../../protocols/mint/tests/parley-run'
import { machineOpens, makeSession, makeStudy, makeUser, makeUsers } from '../support/fixtures'

/** The generic operations and every protocol's own (loaded from its `ops` capability). */
const OPERATIONS = await allOperations()

afterAll(async () => {
  await stopBoss()
  await db.$disconnect()
})

interface Ctx {
  actor: Actor
  studyId: string
  other: Actor
  connectionId: string
  presetId: string
  callId: string
  datasetId: string
}

const ALL: Role[] = [...ROLES]
const STAFF: Role[] = ['admin', 'researcher']
const WORKERS: Role[] = ['admin', 'researcher', 'expert', 'annotator']

/**
 * Each operation, the roles that may run it (written out by hand), and a valid input in a world where
 * the actor belongs to a study and another member exists.
 */
const CASES: Record<
  string,
  {
    allowed: Role[]
    input: (c: Ctx) => Promise<unknown> | unknown
    /** A refused role's status when it is not 403 (its scope passes, the study then refuses it). */
    refused?: Partial<Record<Role, 404>>
  }
> = {
  'studies.list': { allowed: ['admin', 'researcher', 'viewer'], input: () => ({}) },
  'studies.get': { allowed: ['admin', 'researcher', 'viewer'], input: (c) => ({ studyId: c.studyId }) },
  'studies.create': { allowed: STAFF, input: () => ({ name: 'A new study' }) },
  'studies.update': { allowed: STAFF, input: (c) => ({ studyId: c.studyId, name: 'Renamed' }) },
  'studies.archive': { allowed: STAFF, input: (c) => ({ studyId: c.studyId }) },
  'studies.add-member': {
    allowed: STAFF,
    input: async (c) => ({ studyId: c.studyId, email: (await makeUser('viewer')).email }),
  },
  'studies.remove-member': { allowed: STAFF, input: (c) => ({ studyId: c.studyId, userId: c.other.userId }) },
  'studies.set-member-role': {
    allowed: STAFF,
    input: (c) => ({ studyId: c.studyId, userId: c.other.userId, role: 'annotator' }),
  },
  'users.list': { allowed: STAFF, input: () => ({}) },
  'users.create': {
    allowed: ['admin'],
    input: () => ({
      email: `new-${randomUUID().slice(0, 8)}@test.parley`,
      name: 'New',
      role: 'viewer',
      password: 'long enough and odd',
    }),
  },
  'users.update-role': { allowed: ['admin'], input: (c) => ({ userId: c.other.userId, role: 'annotator' }) },
  'users.set-disabled': { allowed: ['admin'], input: (c) => ({ userId: c.other.userId, disabled: true }) },
  'users.set-password': {
    allowed: ['admin'],
    input: (c) => ({ userId: c.other.userId, password: 'long enough and odd' }),
  },
  'users.issue-reset-link': { allowed: ['admin'], input: (c) => ({ userId: c.other.userId }) },
  'profile.update': { allowed: ALL, input: () => ({ name: 'Renamed Person' }) },
  'profile.change-password': {
    allowed: ALL,
    input: () => ({ currentPassword: 'correct horse battery', newPassword: 'another good one' }),
  },
  'apikeys.list': { allowed: ALL, input: () => ({}) },
  'apikeys.create': { allowed: ALL, input: () => ({ name: 'notebook' }) },
  'apikeys.revoke': {
    allowed: ALL,
    input: async (c) => {
      // Create the key directly as the actor would (bypassing scopes only for the fixture).
      const r = await execute(createApiKey, { ...c.actor, role: 'admin' }, { name: 'to revoke' })
      if (!r.ok) throw new Error(r.error)
      await db.apiKey.update({ where: { id: r.data.id }, data: { userId: c.actor.userId } })
      return { keyId: r.data.id }
    },
  },
  'audit.list': { allowed: ['admin'], input: () => ({}) },
  'connections.list': { allowed: STAFF, input: () => ({}) },
  'connections.get': { allowed: STAFF, input: (c) => ({ connectionId: c.connectionId }) },
  'connections.create': {
    allowed: STAFF,
    // A public address: a researcher's connection may not point inside the network
    // (tests/integration/connection-ssrf.test.ts); nothing is contacted on create.
    input: (c) => ({
      name: 'Lab gateway',
      provider: 'openai-compatible',
      baseUrl: 'https://llm.example.org/v1',
      defaultModel: 'qwen',
      studyId: c.studyId,
    }),
  },
  'connections.update': {
    allowed: STAFF,
    input: (c) => ({ connectionId: c.connectionId, name: 'Renamed connection' }),
  },
  'connections.move': {
    allowed: STAFF,
    // Within its own study (a no-op move): the permission, not the destination, is what is tested here.
    input: async (c) => ({ connectionId: (await makeConnection(c.studyId)).id, studyId: c.studyId }),
  },
  'connections.delete': {
    allowed: STAFF,
    input: async (c) => ({ connectionId: (await makeConnection(c.studyId)).id }),
  },
  'connections.test': { allowed: STAFF, input: (c) => ({ connectionId: c.connectionId }) },
  'connections.models': { allowed: STAFF, input: (c) => ({ connectionId: c.connectionId }) },
  'llm.run-prompt': { allowed: STAFF, input: (c) => ({ connectionId: c.connectionId, prompt: 'Say hello.' }) },
  'presets.list': { allowed: STAFF, input: () => ({}) },
  'presets.get': { allowed: STAFF, input: (c) => ({ presetId: c.presetId }) },
  'presets.create': {
    allowed: STAFF,
    input: (c) => ({
      name: 'Checker',
      studyId: c.studyId,
      connectionId: c.connectionId,
      model: 'parley-demo-simulated',
      temperature: '0',
    }),
  },
  'presets.update': {
    allowed: STAFF,
    input: (c) => ({
      presetId: c.presetId,
      connectionId: c.connectionId,
      model: 'parley-demo-simulated',
      temperature: 0.7,
    }),
  },
  'calls.list': { allowed: STAFF, input: (c) => ({ studyId: c.studyId }) },
  'calls.get': { allowed: STAFF, input: (c) => ({ callId: c.callId }) },
  'prices.list': { allowed: STAFF, input: () => ({}) },
  'prices.upsert': {
    allowed: ['admin'],
    input: () => ({ model: `model-${randomUUID().slice(0, 6)}`, inputPerMTok: 2.5, outputPerMTok: 10 }),
  },
  'prices.delete': {
    allowed: ['admin'],
    input: async () => ({
      priceId: (
        await db.modelPrice.create({
          data: { model: `gone-${randomUUID().slice(0, 6)}`, inputPerMTok: 1, outputPerMTok: 1 },
        })
      ).id,
    }),
  },
  'datasets.import': {
    allowed: STAFF,
    input: (c) => ({
      studyId: c.studyId,
      name: 'Tiny',
      kind: 'generic',
      file: new File(['q,a,why\n2+2,4,sum\n'], 'tiny.csv'),
      mapping: JSON.stringify({ inputColumns: ['q'], predictionColumn: 'a', explanationColumn: 'why' }),
    }),
  },
  'runs.create': {
    allowed: STAFF,
    input: async (c) => {
      const ds = await db.dataset.create({
        data: {
          studyId: c.studyId,
          name: 'drug',
          kind: 'drug',
          source: 'x.csv',
          instances: {
            create: {
              index: 0,
              input: { smiles: 'CCOC(C)=O' },
              prediction: 'CCO.CC(=O)O',
              explanation: 'esterification',
            },
          },
        },
      })
      return {
        studyId: c.studyId,
        protocol: 'pxp',
        name: 'pilot',
        datasetId: ds.id,
        generator: { connectionId: c.connectionId },
        checker: { connectionId: c.connectionId },
      }
    },
  },
  'runs.list': { allowed: ['admin', 'researcher', 'viewer'], input: (c) => ({ studyId: c.studyId }) },
  'runs.get': {
    allowed: ['admin', 'researcher', 'viewer'],
    input: async (c) => ({ runId: (await runWithSession(c)).runId }),
  },
  'runs.view': {
    allowed: ['admin', 'researcher', 'viewer'],
    input: async (c) => ({ runId: (await debateSession(c)).runId }),
  },
  'runs.dashboard': {
    allowed: ['admin', 'researcher', 'viewer'],
    input: async (c) => ({ runId: (await runWithSession(c)).runId }),
  },
  'runs.compare': {
    allowed: ['admin', 'researcher', 'viewer'],
    input: async (c) => ({
      a: (await runWithSession(c)).runId,
      b: (await runWithSession(c)).runId,
    }),
  },
  'runs.compare-choices': {
    allowed: ['admin', 'researcher', 'viewer'],
    // A run in the study, so that a list that may show the study's runs does.
    input: async (c) => {
      await runWithSession(c)
      return {}
    },
  },
  'runs.import': {
    allowed: STAFF,
    input: (c) => ({
      studyId: c.studyId,
      name: 'Imported',
      kind: 'rehac-results-qa',
      file: new File(
        [
          `${JSON.stringify({
            trajectory:
              'Question: Is it?\n<solver> agent\nThought 1: Yes.\nAction 1: Finish[true]\nObservation 1: Episode finished, reward = 1\n',
            em: 1,
            f1: 1,
          })}\n`,
        ],
        'results.jsonl',
      ),
    }),
  },
  'runs.import-kinds': { allowed: ['admin', 'researcher', 'viewer'], input: (c) => ({ studyId: c.studyId }) },
  'runs.export': {
    allowed: STAFF,
    input: async (c) => ({ runId: (await runWithSession(c)).runId, table: 'd' }),
  },
  'runs.export-file': {
    allowed: STAFF,
    input: async (c) => ({ runId: (await scorekeepingRun(c)).runId, file: 'clembench' }),
  },
  'runs.start': {
    allowed: STAFF,
    input: async (c) => ({ runId: (await runWithSession(c)).runId }),
  },
  'runs.pause': {
    allowed: STAFF,
    input: async (c) => ({ runId: (await runWithSession(c, 'running')).runId }),
  },
  'runs.resume': {
    allowed: STAFF,
    input: async (c) => ({ runId: (await runWithSession(c, 'paused')).runId }),
  },
  'runs.cancel': {
    allowed: STAFF,
    input: async (c) => ({ runId: (await runWithSession(c)).runId }),
  },
  'runs.retry-session': {
    allowed: STAFF,
    input: async (c) => {
      const s = await runWithSession(c, 'paused')
      await db.protocolSession.update({ where: { id: s.id }, data: { status: 'stalled', stallError: 'boom' } })
      return { sessionId: s.id }
    },
  },
  'runs.retry-stalled': {
    allowed: STAFF,
    input: async (c) => {
      const s = await runWithSession(c, 'paused')
      await db.protocolSession.update({ where: { id: s.id }, data: { status: 'stalled', stallError: 'boom' } })
      return { runId: s.runId }
    },
  },
  'runs.change-seat-model': {
    allowed: STAFF,
    input: async (c) => ({
      runId: (await runWithSession(c)).runId,
      seat: 'm',
      model: { connectionId: c.connectionId, model: 'another' },
    }),
  },
  'sessions.queue': { allowed: WORKERS, input: () => ({}) },
  'sessions.get': { allowed: WORKERS, input: async (c) => ({ sessionId: (await humanSession(c)).id }) },
  'sessions.inspect': {
    allowed: STAFF,
    input: async (c) => ({ sessionId: (await runWithSession(c)).id }),
  },
  'sessions.submit': {
    allowed: WORKERS,
    input: async (c) => {
      const s = await humanSession(c)
      await machineOpens(s.id, { prediction: 'CCO', explanation: 'a guess' })
      return {
        sessionId: s.id,
        seq: 2,
        matchPrev: 'false',
        agreePrev: 'false',
        prediction: 'CCO.CC(=O)O',
        explanation: 'esterification',
      }
    },
  },
  'sessions.save-draft': {
    allowed: WORKERS,
    input: async (c) => ({ sessionId: (await humanSession(c)).id, seq: 1, data: { y: 'CCO' } }),
  },
  'pxp.check-answer': {
    allowed: WORKERS,
    input: async (c) => ({ sessionId: (await humanSession(c)).id, prediction: 'CCO.CC(=O)O' }),
  },
  'rehac.preview-step': {
    allowed: WORKERS,
    input: async (c) => ({
      sessionId: (await rehacStepSession(c)).id,
      seq: 2,
      action: { type: 'search', arg: 'Calder Lighthouse' },
    }),
  },
  'rehac.suggest-step': {
    allowed: WORKERS,
    input: async (c) => ({ sessionId: (await rehacStepSession(c)).id, seq: 2 }),
  },
  'rehac.train': {
    allowed: STAFF,
    input: async (c) => ({ studyId: c.studyId, runIds: [(await rehacTreeRun(c)).runId], epochs: 1 }),
  },
  // Setting an item's final label: the labels:adjudicate scope (every account that labels) AND the study
  // permission adjudicate. Expert and annotator accounts have the scope but, in the study they made (study
  // role expert or annotator), not the permission: the study is not theirs to see (404).
  'labelling.adjudicate': {
    allowed: STAFF,
    refused: { expert: 404, annotator: 404 },
    input: async (c) => ({ runId: await labellingRun(c), position: 0, value: 1, note: 'probe' }),
  },
  // Sessions of the study as a dataset of transcripts to label: changing the study's data (staff).
  'labelling.import-sessions': {
    allowed: STAFF,
    input: async (c) => ({ studyId: c.studyId, name: 'probe transcripts', runIds: [(await rehacTreeRun(c)).runId] }),
  },
  // The authors' released MINT results as rows of the study: changing the study's data (staff).
  'mint.import-results': {
    allowed: STAFF,
    input: async (c) => ({
      studyId: c.studyId,
      file: new File(
        [zipSync({ 'm/F=None/max1_p1+tool+cd/reasoning/gsm8k/results.jsonl': strToU8(releasedRecordLine()) })],
        't.zip',
      ),
    }),
  },
  // Branching a MINT episode at a feedback turn: a new session of the study's run (staff, as creating a run).
  'mint.branch': {
    allowed: STAFF,
    input: async (c) => ({ sessionId: await branchableEpisode(c.studyId), turn: 1 }),
  },
  // A prompt-lab run: starting one (and retrying it) changes the study's runs (staff); its state is study reading.
  'labelling.lab-runs.start': {
    allowed: STAFF,
    input: async (c) => ({
      studyId: c.studyId,
      datasetId: await labellingDataset(c.studyId, 1),
      connectionId: c.connectionId,
      prompts: [{ variant: '-DNA-' }],
    }),
  },
  'labelling.lab-runs.get': {
    allowed: ['admin', 'researcher', 'viewer'],
    input: async (c) => ({ labRunId: await labRunRow(c) }),
  },
  'labelling.lab-runs.retry': { allowed: STAFF, input: async (c) => ({ labRunId: await labRunRow(c) }) },
  // A drawing is a pure function of the SMILES sent: every signed-in role may ask.
  'pxp.molecule': { allowed: ALL, input: () => ({ smiles: 'CCO', size: 'sm' }) },
  'sessions.claim': {
    allowed: WORKERS,
    input: async (c) => ({ sessionId: (await claimableSession(c)).id, seat: 'h' }),
  },
  // The next free seat of a run (a session of it whose claimable seat h is free).
  'sessions.claim-next': {
    allowed: WORKERS,
    input: async (c) => ({ runId: (await claimableRunSession(c)).runId }),
  },
  'sessions.open-seats': { allowed: STAFF, input: (c) => ({ studyId: c.studyId }) },
  'sessions.assign': {
    allowed: STAFF,
    input: async (c) => ({
      studyId: c.studyId,
      runId: (await claimableRunSession(c)).runId,
      seat: 'h',
      userId: c.other.userId,
      count: 1,
    }),
  },
  'sessions.heartbeat': {
    allowed: WORKERS,
    input: async (c) => ({ sessionId: (await claimedSession(c)).id }),
  },
  'sessions.release': {
    allowed: WORKERS,
    input: async (c) => ({ sessionId: (await claimedSession(c)).id }),
  },
  'scorekeeping.import': {
    allowed: STAFF,
    input: async (c) => {
      const { demoGameFiles } = await import('@/protocols/scorekeeping/server/demo')
      const { strToU8, zipSync } = await import('fflate')
      const zip = zipSync(Object.fromEntries(Object.entries(demoGameFiles(2)).map(([k, v]) => [k, strToU8(v)])))
      return { studyId: c.studyId, name: 'games', file: new File([Buffer.from(zip)], 'game.zip') }
    },
  },
  'debates.merge-labels': {
    allowed: STAFF,
    input: async (c) => ({
      runId: (await debateSession(c)).runId,
      from: 'Obstructive Jaundice',
      into: 'Jaundice',
    }),
  },
  'task-templates.create': {
    allowed: STAFF,
    input: (c) => ({
      studyId: c.studyId,
      name: 'Dose',
      systemPrompt: 'You are a pharmacist.',
      queryPrompt: 'Dose of {drug}?',
      match: { mode: 'numeric', tolerance: 1 },
    }),
  },
  'task-templates.list': { allowed: ['admin', 'researcher', 'viewer'], input: (c) => ({ studyId: c.studyId }) },
  'task-templates.get': {
    allowed: ['admin', 'researcher', 'viewer'],
    input: async (c) => ({ templateId: (await templateIn(c.studyId)).id }),
  },
  'task-templates.try-match': {
    allowed: STAFF,
    input: () => ({ match: { mode: 'set' }, a: 'a,b', b: 'b,a' }),
  },
  'studies.protocol-panels': { allowed: ['admin', 'researcher', 'viewer'], input: (c) => ({ studyId: c.studyId }) },
  // Every account may ask (studies:pages); a template page needs the study permission read, which an
  // expert or annotator account never has (no studies:read): as a study they cannot see, 404.
  'studies.protocol-page': {
    allowed: ['admin', 'researcher', 'viewer'],
    refused: { expert: 404, annotator: 404 },
    input: async (c) => ({
      studyId: c.studyId,
      protocol: 'pxp',
      path: ['templates', (await templateIn(c.studyId)).id],
    }),
  },
  'runs.setup-data': { allowed: STAFF, input: (c) => ({ studyId: c.studyId, protocol: 'pxp' }) },
  'datasets.list': { allowed: ['admin', 'researcher', 'viewer'], input: (c) => ({ studyId: c.studyId }) },
  'datasets.await-import': {
    allowed: ['admin', 'researcher', 'viewer'],
    input: (c) => ({ datasetId: c.datasetId }),
  },
  'datasets.dismiss': {
    allowed: STAFF,
    input: async (c) => ({
      datasetId: (
        await db.dataset.create({
          data: { studyId: c.studyId, name: 'failed', kind: 'drug', source: 'x.csv', status: 'failed', error: 'x' },
        })
      ).id,
    }),
  },
  'datasets.get': { allowed: ['admin', 'researcher', 'viewer'], input: (c) => ({ datasetId: c.datasetId }) },
}

const llmSeat = (c: Ctx) => ({
  kind: 'llm',
  model: { connectionId: c.connectionId },
  helpers: { checker: { connectionId: c.connectionId } },
})

/** A PXP session in the world's study whose human seat is the actor. */
async function humanSession(c: Ctx) {
  return makeSession(c.studyId, {
    protocol: 'pxp',
    config: { n: 10, k: 3 },
    task: 'drug',
    instance: { input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'esterification' },
    seats: { m: llmSeat(c), h: { kind: 'human', userId: c.actor.userId } },
  })
}

/** A ReHAC QA session of the world's study whose step 1 (message 2) waits for the actor in the human seat. */
async function rehacStepSession(c: Ctx) {
  const s = await makeSession(c.studyId, {
    protocol: 'rehac',
    config: {},
    task: 'qa',
    instance: {
      id: 'q1',
      kind: 'qa',
      question: 'Who designed the Calder Lighthouse?',
      answer: 'Halvard Brenn',
      pages: [{ title: 'Calder Lighthouse', paragraphs: ['The Calder Lighthouse was designed by Halvard Brenn.'] }],
    },
    seats: {
      decider: { kind: 'program', program: 'human-only' },
      agent: { kind: 'llm', model: { connectionId: c.connectionId } },
      human: { kind: 'human', userId: c.actor.userId },
      environment: { kind: 'program', program: 'environment' },
    },
  })
  await db.protocolSession.update({ where: { id: s.id }, data: { status: 'awaiting', awaitingSeat: 'human' } })
  await db.protocolMessage.create({
    data: {
      sessionId: s.id,
      seq: 1,
      sender: 'decider',
      receiver: 'human',
      label: 'decide',
      value: 'human',
      body: { seq: 1, sender: 'decider', kind: 'decide', t: 1, solver: 'human', pHuman: 1 },
    },
  })
  return s
}

/**
 * A ReHAC run of the world's study with one question's tree of two ended episodes: the agent finishes
 * right at step 1, the human finishes wrong (both actions seen at the first state: one advantage row).
 */
/** A labelling run of the world's study with one item's session (position 0), for adjudication. */
/** A failed prompt-lab run of the study (nothing created yet), as the lab-run job leaves one. */
async function labRunRow(c: Ctx) {
  const row = await db.labellingLabRun.create({
    data: {
      studyId: c.studyId,
      datasetId: await labellingDataset(c.studyId, 1),
      status: 'failed',
      error: 'probe',
      spec: { connectionId: c.connectionId, prompts: [{ variant: '-DNA-' }], args: {} },
      actor: { userId: c.actor.userId, email: c.actor.email, name: c.actor.name, role: c.actor.role, via: 'probe' },
    },
  })
  return row.id
}

async function labellingRun(c: Ctx) {
  const schema = {
    version: 1,
    questions: [
      {
        id: 'O',
        text: 'Relevant?',
        type: 'ordinal',
        required: true,
        options: [0, 1, 2].map((v) => ({ value: v, label: String(v) })),
      },
    ],
    overall: 'O',
    rationale: 'off',
    perTurn: false,
    guidelines: '',
  }
  const run = await db.run.create({
    data: {
      studyId: c.studyId,
      name: 'probe labelling',
      protocol: 'labelling',
      task: 'labelling',
      datasetId: c.datasetId,
      config: { schema },
      seats: { annotator: { kind: 'human', claimable: true } },
      repetitions: 1,
    },
  })
  const instance = { kind: 'text', id: 'i0', text: 'probe' }
  const s = await makeSession(c.studyId, {
    protocol: 'labelling',
    config: { schema },
    task: 'labelling',
    instance,
    seats: {},
  })
  await db.protocolSession.update({ where: { id: s.id }, data: { runId: run.id, position: 0 } })
  return run.id
}

async function rehacTreeRun(c: Ctx) {
  const instance = {
    id: 'q1',
    kind: 'qa',
    question: 'Who designed the Calder Lighthouse?',
    answer: 'Halvard Brenn',
    pages: [{ title: 'Calder Lighthouse', paragraphs: ['The Calder Lighthouse was designed by Halvard Brenn.'] }],
  }
  const seats = {
    decider: { kind: 'program', program: 'tree' },
    agent: { kind: 'llm', model: { connectionId: c.connectionId } },
    human: { kind: 'llm', model: { connectionId: c.connectionId } },
    environment: { kind: 'program', program: 'environment' },
  }
  const run = await db.run.create({
    data: {
      studyId: c.studyId,
      name: 'probe tree',
      protocol: 'rehac',
      task: 'qa',
      datasetId: c.datasetId,
      config: {},
      seats,
      repetitions: 1,
    },
  })
  for (const [solver, answer] of [
    ['agent', 'Halvard Brenn'],
    ['human', 'Port Calder'],
  ] as const) {
    const s = await makeSession(c.studyId, { protocol: 'rehac', config: {}, task: 'qa', instance, seats })
    await db.protocolSession.update({ where: { id: s.id }, data: { runId: run.id, status: 'done' } })
    const bodies = [
      { seq: 1, sender: 'decider', kind: 'decide', t: 1, solver, pHuman: null },
      { seq: 2, sender: solver, kind: 'step', t: 1, thought: 'I know it.', action: { type: 'finish', arg: answer } },
      { seq: 3, sender: 'environment', kind: 'observation', t: 1, text: 'Episode finished.', finished: true },
    ]
    await db.protocolMessage.createMany({
      data: bodies.map((body) => ({ sessionId: s.id, seq: body.seq, sender: body.sender, receiver: 'all', body })),
    })
  }
  return { runId: run.id }
}

/** A PXP session of the world's study whose human seat anyone of the study may claim. */
async function claimableSession(c: Ctx) {
  return makeSession(c.studyId, {
    protocol: 'pxp',
    config: { n: 10, k: 3 },
    task: 'drug',
    instance: { input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'esterification' },
    seats: { m: llmSeat(c), h: { kind: 'human', claimable: true } },
  })
}

/** A draft PXP run of the world's study with one session whose claimable seat h is free. */
async function claimableRunSession(c: Ctx) {
  const s = await runWithSession(c, 'draft', { m: llmSeat(c), h: { kind: 'human', claimable: true } })
  await db.sessionSeat.create({ data: { sessionId: s.id, seat: 'h', claimable: true } })
  return s
}

/** A session whose claimable seat h the actor has claimed (a lease of 15 minutes). */
async function claimedSession(c: Ctx) {
  const s = await claimableSession(c)
  await db.sessionSeat.update({
    where: { sessionId_seat: { sessionId: s.id, seat: 'h' } },
    data: { userId: c.actor.userId, claimedAt: new Date(), leaseUntil: new Date(Date.now() + 15 * 60_000) },
  })
  return s
}

/** A scorekeeping run of the world's study (its clembench files can be exported before any episode). */
async function scorekeepingRun(c: Ctx) {
  const experiment = await db.run.create({
    data: {
      studyId: c.studyId,
      name: 'probe game',
      protocol: 'scorekeeping',
      task: 'clembench',
      datasetId: c.datasetId,
      config: {},
      seats: {
        questioner: { kind: 'program', program: 'game-master' },
        answerer: { kind: 'llm', model: { connectionId: c.connectionId } },
      },
      repetitions: 1,
    },
  })
  return { runId: experiment.id }
}

/** An EVINCE debate of the actor's study (in a run) whose debater B is the actor. */
async function debateSession(c: Ctx) {
  const seats = {
    A: { kind: 'llm', model: { connectionId: c.connectionId }, helpers: {} },
    B: { kind: 'human', userId: c.actor.userId },
    moderator: { kind: 'program', program: 'no-judge' },
  }
  const config = { k: 3, maxRounds: 2, crit: false, report: false }
  const experiment = await db.run.create({
    data: {
      studyId: c.studyId,
      name: 'probe debate',
      protocol: 'evince',
      task: 'diagnosis',
      datasetId: c.datasetId,
      config,
      seats,
      repetitions: 1,
    },
  })
  const s = await makeSession(c.studyId, {
    protocol: 'evince',
    config,
    task: 'diagnosis',
    instance: { input: { symptoms: 'fever, rash' }, prediction: 'Dengue Fever', explanation: '' },
    seats,
  })
  return db.protocolSession.update({ where: { id: s.id }, data: { runId: experiment.id } })
}

/** An experiment of the actor's study with one session (its human seat a proxy unless `seats` says otherwise). */
async function runWithSession(
  c: Ctx,
  status = 'draft',
  seats: Prisma.InputJsonObject = {
    m: llmSeat(c),
    h: { kind: 'proxy', helpers: { checker: { connectionId: c.connectionId } } },
  },
) {
  const experiment = await db.run.create({
    data: {
      studyId: c.studyId,
      name: 'probe',
      protocol: 'pxp',
      task: 'drug',
      datasetId: c.datasetId,
      config: { n: 10, k: 3 },
      seats,
      repetitions: 1,
      status,
    },
  })
  return db.protocolSession.create({
    data: {
      studyId: c.studyId,
      runId: experiment.id,
      protocol: 'pxp',
      protocolVersion: '1',
      config: { n: 10, k: 3 },
      task: 'drug',
      instance: { input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'esterification' },
      seats,
    },
  })
}

async function makeConnection(studyId: string) {
  return db.llmConnection.create({
    data: {
      studyId,
      name: 'Demo in study',
      provider: 'demo',
      baseUrl: 'builtin:demo',
      defaultModel: 'parley-demo-simulated',
    },
  })
}

/**
 * The world an operation runs in. Without `studyRole` the actor created the study (as createStudy
 * would make them its member); with it, another researcher created the study and the actor is a
 * member with that study role.
 */
async function world(role: Role, opts: { studyRole?: StudyRole } = {}): Promise<Ctx> {
  const [actor, owner, other] = await makeUsers([role, 'researcher', 'expert'])
  const study = opts.studyRole
    ? await makeStudy(owner, [{ ...actor, role: opts.studyRole }, other])
    : await makeStudy(actor, [owner, other])
  const connection = await makeConnection(study.id)
  const [preset, call, dataset] = await Promise.all([
    db.modelPreset.create({
      data: {
        name: 'Generator',
        studyId: study.id,
        versions: { create: { version: 1, connectionId: connection.id, model: 'parley-demo-simulated' } },
      },
    }),
    db.llmCall.create({
      data: {
        studyId: study.id,
        connectionId: connection.id,
        purpose: 'test',
        provider: 'demo',
        modelRequested: 'parley-demo-simulated',
        params: {},
        promptHash: 'x',
        request: {},
        status: 'ok',
        attempt: 1,
      },
    }),
    db.dataset.create({ data: { studyId: study.id, name: 'd', kind: 'generic', source: 'd.csv' } }),
  ])
  return {
    actor,
    other,
    studyId: study.id,
    connectionId: connection.id,
    presetId: preset.id,
    callId: call.id,
    datasetId: dataset.id,
  }
}

/**
 * Operations that change nothing another case could see: they read, or write only an append-only
 * audit row (runs.export, runs.export-file: no case reads the audit log's content, audit.list only
 * has to succeed) or a rate-limit counter of their own (pxp.check-answer: keyed by operation and user,
 * and each operation runs once per actor). Written out by hand; an operation missing here gets a fresh
 * world whenever it is allowed, which is always sound, only slower.
 */
const READ_ONLY = new Set([
  'studies.protocol-panels',
  'studies.protocol-page', // its input adds a template to the study, a row no other case reads
  'runs.setup-data',
  'runs.import-kinds',
  'studies.list',
  'studies.get',
  'users.list',
  'apikeys.list',
  'audit.list',
  'connections.list',
  'connections.get',
  'connections.models', // lists the demo provider's models; connections.test is not here: it records a call
  'presets.list',
  'presets.get',
  'calls.list',
  'calls.get',
  'prices.list',
  'runs.list',
  'runs.get',
  'runs.view',
  'runs.dashboard',
  'runs.compare',
  'runs.compare-choices',
  'runs.export',
  'runs.export-file',
  'sessions.queue',
  'sessions.get',
  'sessions.inspect',
  'pxp.check-answer',
  'pxp.molecule',
  'rehac.preview-step', // writes only its rate-limit counter (keyed by operation and user)
  'sessions.open-seats',
  'task-templates.list',
  'task-templates.get',
  'task-templates.try-match',
  'datasets.list',
  'datasets.await-import',
  'datasets.get',
])

/**
 * One world per (account role, study role) for the cases that may share it; building a world for each
 * of ~850 cases was most of this file's time. Sharing is sound because
 * - a refused case writes nothing (the scope or study check comes before any write), so it leaves the
 *   world as it found it;
 * - an allowed case of a READ_ONLY operation writes nothing another case reads;
 * - an allowed case of any other operation (it may rename, archive, disable, delete, move or re-role
 *   something of the world) gets a fresh world of its own, so no case sharing a world ever sees what it
 *   changed;
 * - what the inputs make in the shared world (sessions, runs, connections, datasets … of its study, a
 *   user, a price) is only more of the same kinds of rows, each case still making its own: no input
 *   reads or counts what another case's input made;
 * - a case that checks whether an answer mentions the study ('listed' / 'unlisted') gets a fresh world:
 *   lists are newest first and paged, and a world made long before could have been pushed off the page
 *   by the worlds made since (an admin account sees every study), which would not be the permission's
 *   doing.
 */
const shared = new Map<string, Promise<Ctx>>()
/** A task template of the study (written directly: the permission, not the template, is tested). */
function templateIn(studyId: string) {
  return db.taskTemplate.create({
    data: {
      studyId,
      name: 't',
      spec: { name: 't', systemPrompt: 's', queryPrompt: 'q', match: { mode: 'exact' } },
    },
  })
}

function worldFor(share: boolean, role: Role, opts: { studyRole?: StudyRole } = {}): Promise<Ctx> {
  if (!share) return world(role, opts)
  const key = `${role}/${opts.studyRole ?? '-'}`
  let w = shared.get(key)
  if (!w) {
    w = world(role, opts)
    shared.set(key, w)
  }
  return w
}

describe('every role × every operation, enforced on the server', () => {
  it('the table covers every registered operation', () => {
    expect(OPERATIONS.map((o) => o.name).sort()).toEqual(Object.keys(CASES).sort())
  })

  for (const op of OPERATIONS as Operation<unknown, unknown>[]) {
    const spec = CASES[op.name]
    for (const role of ROLES) {
      const allowed = spec?.allowed.includes(role) ?? false
      it(`${role} ${allowed ? 'can' : 'cannot'} ${op.name}`, async () => {
        const c = await worldFor(!allowed || READ_ONLY.has(op.name), role)
        const r = await execute(op, c.actor, await spec?.input(c))
        if (allowed) expect(r).toMatchObject({ ok: true })
        else expect(r).toMatchObject({ ok: false, status: spec?.refused?.[role] ?? 403 })
      })
    }
  }

  it('nobody signed in gets 401 from every operation', async () => {
    for (const op of OPERATIONS) expect(await execute(op, null, {})).toMatchObject({ ok: false, status: 401 })
  })
})

/**
 * Study roles: what a member may do in one study, on top of what their account may do anywhere.
 * Each row is one operation run by a *researcher account* (who could do everything in a study they
 * manage) that is a member of someone else's study with the study role of the column, and by an
 * *admin account* that is only a viewer member (studies:read-all keeps full access). Written out by
 * hand, operation by operation: 'ok' succeeds, 'listed'/'unlisted' succeed and do/do not mention the
 * study anywhere in the answer, 403/404 are refused. Sessions and debates in the inputs are the
 * actor's own (members do their own work whatever their study role).
 */
type Outcome = 'ok' | 'listed' | 'unlisted' | 403 | 404
const COLUMNS = [
  'viewer',
  'adjudicator',
  'annotator',
  'expert',
  'researcher',
  'admin',
  'admin account as viewer',
] as const
type Row = readonly [Outcome, Outcome, Outcome, Outcome, Outcome, Outcome, Outcome]
//                          viewer  adjudicator annotator expert  researcher study admin admin acct as viewer
const READ: Row = /*     */ ['ok', /**/ 'ok', /**/ 404, /**/ 404, /**/ 'ok', /**/ 'ok', /*  */ 'ok']
const WRITE: Row = /*    */ [403, /* */ 403, /* */ 404, /**/ 404, /**/ 'ok', /**/ 'ok', /*  */ 'ok']
const MANAGE: Row = /*   */ [403, /* */ 403, /* */ 404, /**/ 404, /**/ 403, /* */ 'ok', /*  */ 'ok']
const LISTED: Row = /*   */ ['listed', 'listed', 'unlisted', 'unlisted', 'listed', 'listed', 'listed']
const ANY: Row = /*      */ ['ok', /**/ 'ok', /**/ 'ok', /**/ 'ok', /**/ 'ok', /**/ 'ok', /*  */ 'ok']
const ADMIN_ONLY: Row = /**/ [403, /* */ 403, /* */ 403, /**/ 403, /**/ 403, /* */ 403, /*  */ 'ok']
/** Taking part in a session (claiming, sending a turn): every study role but viewer and adjudicator (study-roles.ts). */
const TAKE_PART: Row = /* */ [403, /* */ 403, /* */ 'ok', /**/ 'ok', /**/ 'ok', /**/ 'ok', /*  */ 'ok']
/** Setting final labels: study admins, researchers and adjudicators (the study permission adjudicate). */
const ADJUDICATE: Row = /**/ [403, /* */ 'ok', /**/ 404, /**/ 404, /**/ 'ok', /**/ 'ok', /*  */ 'ok']

const STUDY_ROLE_CASES: Record<string, Row> = {
  'studies.list': LISTED,
  'studies.get': READ,
  'studies.create': ANY, // not study-scoped
  'studies.update': MANAGE,
  'studies.archive': MANAGE,
  'studies.add-member': MANAGE,
  'studies.remove-member': MANAGE,
  'studies.set-member-role': MANAGE,
  'users.list': ANY,
  'users.create': ADMIN_ONLY,
  'users.update-role': ADMIN_ONLY,
  'users.set-disabled': ADMIN_ONLY,
  'users.set-password': ADMIN_ONLY,
  'users.issue-reset-link': ADMIN_ONLY,
  'profile.update': ANY,
  'profile.change-password': ANY,
  'apikeys.list': ANY,
  'apikeys.create': ANY,
  'apikeys.revoke': ANY,
  'audit.list': ADMIN_ONLY,
  'connections.list': LISTED,
  'connections.get': READ,
  'connections.create': WRITE,
  'connections.update': WRITE,
  'connections.move': WRITE,
  'connections.delete': WRITE,
  'connections.test': WRITE,
  'connections.models': WRITE,
  'llm.run-prompt': WRITE,
  'presets.list': LISTED,
  'presets.get': READ,
  'presets.create': WRITE,
  'presets.update': WRITE,
  'calls.list': LISTED,
  'calls.get': READ,
  'prices.list': ANY,
  'prices.upsert': ADMIN_ONLY,
  'prices.delete': ADMIN_ONLY,
  'datasets.import': WRITE,
  'datasets.list': READ,
  'datasets.get': READ,
  'datasets.await-import': READ,
  'datasets.dismiss': WRITE,
  'task-templates.create': WRITE,
  'task-templates.list': READ,
  'task-templates.get': READ,
  'task-templates.try-match': ANY, // compares two strings, touches no study
  'studies.protocol-panels': READ,
  'studies.protocol-page': READ,
  'runs.setup-data': WRITE,
  'runs.create': WRITE,
  'runs.list': READ, // of the study named in the input
  'runs.get': READ,
  'runs.view': READ,
  'runs.dashboard': READ,
  'runs.compare': READ,
  'runs.compare-choices': LISTED, // the runs of the studies the member reads
  'runs.import': WRITE,
  'runs.import-kinds': READ,
  'runs.export': WRITE, // exporting is researcher work: viewers read results, they do not export
  'runs.export-file': WRITE,
  'runs.start': WRITE,
  'runs.pause': WRITE,
  'runs.resume': WRITE,
  'runs.cancel': WRITE,
  'runs.retry-session': WRITE,
  'runs.retry-stalled': WRITE,
  'runs.change-seat-model': WRITE,
  'sessions.queue': ANY,
  'sessions.get': ANY, // their own session
  'sessions.submit': TAKE_PART, // their own session; a viewer member seated in it sends nothing
  'pxp.check-answer': ANY, // their own session
  'pxp.molecule': ANY, // no study in it: a drawing of what the asker sent
  'rehac.preview-step': TAKE_PART, // their own step, as sending it (a viewer member seated in it: 403)
  'rehac.suggest-step': TAKE_PART,
  'rehac.train': WRITE, // reads every trajectory of the study, as its exports do
  'labelling.adjudicate': ADJUDICATE, // the study permission adjudicate, on top of labels:adjudicate
  'labelling.import-sessions': WRITE, // a new dataset of the study, as an import
  'mint.import-results': WRITE, // imported runs are study data, as an import
  'mint.branch': WRITE, // a new session of the study's run, as creating one
  'labelling.lab-runs.start': WRITE, // creates runs of the study
  'labelling.lab-runs.retry': WRITE,
  'labelling.lab-runs.get': READ, // its progress and tables: study reading (an annotator account has no studies:read)
  'sessions.save-draft': ANY, // their own session
  'sessions.claim': TAKE_PART, // a claimable seat: any member of the study who takes part (not a viewer)
  'sessions.claim-next': TAKE_PART, // as sessions.claim, for the next free seat of a run
  'sessions.heartbeat': TAKE_PART, // renewing their own claim is taking part
  'sessions.open-seats': WRITE,
  'sessions.assign': WRITE, // naming a member on a run's free seats is changing the run
  'sessions.release': ANY, // giving their own claimed seat back (a member made a viewer may too)
  'sessions.inspect': READ,
  'scorekeeping.import': WRITE,
  'debates.merge-labels': WRITE,
}

/** Inputs that differ from the account walk's (none at present; kept for operations that need one). */
const STUDY_ROLE_INPUTS: Record<string, (c: Ctx) => Promise<unknown>> = {}

describe('every study role × every operation, on top of the account role', () => {
  it('the table covers every registered operation', () => {
    expect(OPERATIONS.map((o) => o.name).sort()).toEqual(Object.keys(STUDY_ROLE_CASES).sort())
  })

  for (const op of OPERATIONS as Operation<unknown, unknown>[]) {
    COLUMNS.forEach((column, i) => {
      const expected = STUDY_ROLE_CASES[op.name]?.[i] ?? 404
      const [account, studyRole]: [Role, StudyRole] =
        column === 'admin account as viewer' ? ['admin', 'viewer'] : ['researcher', column]
      it(`a ${account} account with study role ${studyRole}: ${op.name} → ${expected}`, async () => {
        const checksMention = expected === 'listed' || expected === 'unlisted'
        const share = (typeof expected === 'number' || READ_ONLY.has(op.name)) && !checksMention
        const c = await worldFor(share, account, { studyRole })
        const input = STUDY_ROLE_INPUTS[op.name] ?? CASES[op.name]?.input
        const r = await execute(op, c.actor, await input?.(c))
        if (typeof expected === 'number') {
          expect(r).toMatchObject({ ok: false, status: expected })
          return
        }
        expect(r).toMatchObject({ ok: true })
        const mentioned = r.ok && JSON.stringify(r.data)?.includes(c.studyId)
        if (expected === 'listed') expect(mentioned).toBe(true)
        if (expected === 'unlisted') expect(mentioned).toBe(false)
      })
    })
  }
})
