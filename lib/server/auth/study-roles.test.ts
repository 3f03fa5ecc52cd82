import { describe, expect, it } from 'vitest'
import { ROLES, type Role } from './roles'
import {
  creatorStudyRole,
  mayHoldStudyRole,
  mayTakePart,
  STUDY_PERMISSIONS,
  STUDY_ROLE_PERMISSIONS,
  type StudyPermission,
  studyPermissions,
  studyRolesWith,
} from './study-roles'

// The study access model written out by hand: account role (rows) × study role (columns) → the
// permissions in that study. Admin accounts (studies:read-all) have all of them in every study.
// R = read, W = write, M = manage. A change to the table in study-roles.ts must change this too.
const R: StudyPermission[] = ['read']
const RW: StudyPermission[] = ['read', 'write']
const RWM: StudyPermission[] = ['read', 'write', 'manage']
const NONE: StudyPermission[] = []

const EXPECTED: Record<Role, Record<Role | 'not a member', StudyPermission[]>> = {
  //          study role:  admin  researcher  expert  annotator  viewer  not a member
  admin: { admin: RWM, researcher: RWM, expert: RWM, annotator: RWM, viewer: RWM, 'not a member': RWM },
  researcher: { admin: RWM, researcher: RW, expert: NONE, annotator: NONE, viewer: R, 'not a member': NONE },
  expert: { admin: NONE, researcher: NONE, expert: NONE, annotator: NONE, viewer: NONE, 'not a member': NONE },
  annotator: { admin: NONE, researcher: NONE, expert: NONE, annotator: NONE, viewer: NONE, 'not a member': NONE },
  // A viewer account reads where it is a member; roles above viewer are never given to it, and
  // even if a stored row said so, the account scopes (no studies:update) keep it to reading.
  viewer: { admin: R, researcher: R, expert: NONE, annotator: NONE, viewer: R, 'not a member': NONE },
}

describe('study role → study permissions', () => {
  for (const account of ROLES) {
    for (const studyRole of [...ROLES, 'not a member'] as const) {
      const expected = EXPECTED[account][studyRole]
      it(`a ${account} account as ${studyRole}: ${expected.join(', ') || 'nothing'}`, () => {
        expect(studyPermissions(account, studyRole === 'not a member' ? null : studyRole)).toEqual(expected)
      })
    }
  }

  it('an unknown study role grants nothing', () => {
    expect(studyPermissions('researcher', 'owner')).toEqual([])
    expect(studyPermissions('viewer', undefined)).toEqual([])
  })

  it('every permission a study role lists is known, and studyRolesWith inverts the table', () => {
    for (const r of ROLES) for (const p of STUDY_ROLE_PERMISSIONS[r]) expect(STUDY_PERMISSIONS).toContain(p)
    expect(studyRolesWith('read').sort()).toEqual(['admin', 'researcher', 'viewer'])
    expect(studyRolesWith('write').sort()).toEqual(['admin', 'researcher'])
    expect(studyRolesWith('manage')).toEqual(['admin'])
  })
})

describe('which study roles an account may hold', () => {
  // Rows: account role; the study roles it may be given, by hand.
  const MAY_HOLD: Record<Role, Role[]> = {
    admin: ['admin', 'researcher', 'expert', 'annotator', 'viewer'],
    researcher: ['admin', 'researcher', 'expert', 'annotator', 'viewer'],
    expert: ['expert', 'annotator', 'viewer'],
    annotator: ['expert', 'annotator', 'viewer'],
    viewer: ['viewer'],
  }
  for (const account of ROLES) {
    it(`a ${account} account may be: ${MAY_HOLD[account].join(', ')}`, () => {
      expect(ROLES.filter((r) => mayHoldStudyRole(account, r))).toEqual(MAY_HOLD[account])
    })
  }

  it('the creator of a study becomes its study admin when their account may be one', () => {
    expect(creatorStudyRole('admin')).toBe('admin')
    expect(creatorStudyRole('researcher')).toBe('admin')
    expect(creatorStudyRole('viewer')).toBe('viewer')
  })
})

describe("who takes part in a study's sessions (claims a seat, sends turns)", () => {
  // Rows: account role; the study roles under which it takes part, by hand. Viewers never do; an
  // account without work:submit (viewer) never does; admin accounts do under any study role.
  const TAKES_PART: Record<Role, Role[]> = {
    admin: ['admin', 'researcher', 'expert', 'annotator', 'viewer'],
    researcher: ['admin', 'researcher', 'expert', 'annotator'],
    expert: ['admin', 'researcher', 'expert', 'annotator'],
    annotator: ['admin', 'researcher', 'expert', 'annotator'],
    viewer: [],
  }
  for (const account of ROLES) {
    it(`a ${account} account takes part as: ${TAKES_PART[account].join(', ') || 'nothing'}`, () => {
      expect(ROLES.filter((r) => mayTakePart(account, r))).toEqual(TAKES_PART[account])
      expect(mayTakePart(account, null)).toBe(false)
    })
  }
})
