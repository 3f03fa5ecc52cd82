import { z } from 'zod'
import { ROLE_SCOPES } from '@/lib/server/auth/roles'
import { defineOperation, type Operation } from '@/lib/server/operation'
import { AuditEntry, Me, StudyDetail, StudySummary, Work, pageOfSchema } from '@/lib/server/api/schemas'
import { listAudit } from '@/lib/server/services/audit-log'
import { createStudy, getStudy, listStudies } from '@/lib/server/services/studies'
import { completeWork, getWork, listMyWork } from '@/lib/server/services/work'

/** Where an operation's input comes from in an HTTP request. Path parameters are always merged in. */
export type InputSource = 'query' | 'body' | 'none'

export interface Endpoint {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** OpenAPI path template under /api/v1, e.g. /studies/{studyId} */
  path: string
  summary: string
  tag: string
  op: Operation<any, any>
  source: InputSource
  output: z.ZodType
  status?: 200 | 201
}

const me = defineOperation({
  name: 'me.get',
  scope: 'profile:update',
  input: z.object({}),
  async run(actor) {
    return {
      id: actor.userId,
      email: actor.email,
      name: actor.name,
      role: actor.role,
      via: actor.via,
      scopes: [...ROLE_SCOPES[actor.role]],
    }
  },
})

/** Every authenticated REST endpoint. Route files under app/api/v1 bind these; openapi.json lists them. */
export const endpoints = {
  me: {
    method: 'GET',
    path: '/me',
    summary: 'The account the request acts as',
    tag: 'Account',
    op: me,
    source: 'none',
    output: Me,
  },
  listStudies: {
    method: 'GET',
    path: '/studies',
    summary: 'List the studies you can see (paginated)',
    tag: 'Studies',
    op: listStudies,
    source: 'query',
    output: pageOfSchema(StudySummary, 'StudyPage'),
  },
  createStudy: {
    method: 'POST',
    path: '/studies',
    summary: 'Create a study (you become its first member)',
    tag: 'Studies',
    op: createStudy,
    source: 'body',
    output: StudySummary,
    status: 201,
  },
  getStudy: {
    method: 'GET',
    path: '/studies/{studyId}',
    summary: 'One study with its members',
    tag: 'Studies',
    op: getStudy,
    source: 'none',
    output: StudyDetail,
  },
  listMyWork: {
    method: 'GET',
    path: '/work',
    summary: 'Work assigned to you (paginated)',
    tag: 'Work',
    op: listMyWork,
    source: 'query',
    output: pageOfSchema(Work, 'WorkPage'),
  },
  getWork: {
    method: 'GET',
    path: '/work/{workId}',
    summary: 'One work item you may open',
    tag: 'Work',
    op: getWork,
    source: 'none',
    output: Work,
  },
  completeWork: {
    method: 'POST',
    path: '/work/{workId}/complete',
    summary: 'Mark your work item done',
    tag: 'Work',
    op: completeWork,
    source: 'none',
    output: Work,
  },
  listAudit: {
    method: 'GET',
    path: '/audit',
    summary: 'Browse the audit log (admins)',
    tag: 'Admin',
    op: listAudit,
    source: 'query',
    output: pageOfSchema(AuditEntry, 'AuditPage'),
  },
} satisfies Record<string, Endpoint>
