import { describe, expect, it } from 'vitest'
import { ROLES, type Role } from './roles'
import {
  creatorStudyRole,
  isStudyRole,
  mayHoldStudyRole,
  mayTakePart,
  STUDY_PERMISSIONS,
  STUDY_ROLE_PERMISSIONS,
  STUDY_ROLES,
  type StudyPermission,
  type StudyRole,
  studyPermissions,
  studyRolesWith,
} from './study-roles'

// The study access model written out by hand: account role (rows) × study role (columns) → the
// permissions in that study. Admin accounts (studies:read-all) have all of them in every study.
// R = read, W = write, M = manage, A = adjudicate. A change to the table in study-roles.ts must change this too.
const R: StudyPermission[] = ['read']
const A: StudyPermission[] = ['adjudicate']
const RA: StudyPermission[] = ['read', 'adjudicate']
const RWA: StudyPermission[] = ['read', 'write', 'adjudicate']
const RWMA: StudyPermission[] = ['read', 'write', 'manage', 'adjudicate']
const NONE: StudyPermission[] = []

const EXPECTED: Record<Role, Record<StudyRole | 'not a member', StudyPermission[]>> = {
  admin: {
    admin: RWMA,
    researcher: RWMA,
    adjudicator: RWMA,
    expert: RWMA,
    annotator: RWMA,
    viewer: RWMA,
    'not a member': RWMA,
  },
  researcher: {
    admin: RWMA,
    researcher: RWA,
    adjudicator: RA,
    expert: NONE,
    annotator: NONE,
    viewer: R,
    'not a member': NONE,
  },
  // Expert and annotator accounts read no study; made adjudicator, they adjudicate (labels:adjudicate
  // is theirs; their own study roles grant it not). Study admin or researcher they are never made
  // (mayHoldStudyRole); a stored row saying so would give them no more than an adjudicator.
  expert: {
    admin: A,
    researcher: A,
    adjudicator: A,
    expert: NONE,
    annotator: NONE,
    viewer: NONE,
    'not a member': NONE,
  },
  annotator: {
    admin: A,
    researcher: A,
    adjudicator: A,
    expert: NONE,
    annotator: NONE,
    viewer: NONE,
    'not a member': NONE,
  },
  // A viewer account reads where it is a member; roles above viewer are never given to it, and
  // even if a stored row said so, the account scopes (no studies:update, no labels:adjudicate) keep it to reading.
  viewer: { admin: R, researcher: R, adjudicator: R, expert: NONE, annotator: NONE, viewer: R, 'not a member': NONE },
}

describe('study role → study permissions', () => {
  for (const account of ROLES) {
    for (const studyRole of [...STUDY_ROLES, 'not a member'] as const) {
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
    for (const r of STUDY_ROLES) for (const p of STUDY_ROLE_PERMISSIONS[r]) expect(STUDY_PERMISSIONS).toContain(p)
    expect(studyRolesWith('read').sort()).toEqual(['adjudicator', 'admin', 'researcher', 'viewer'])
    expect(studyRolesWith('write').sort()).toEqual(['admin', 'researcher'])
    expect(studyRolesWith('manage')).toEqual(['admin'])
    expect(studyRolesWith('adjudicate').sort()).toEqual(['adjudicator', 'admin', 'researcher'])
  })

  it('every account role is a study role; adjudicator is a study role only', () => {
    for (const r of ROLES) expect(isStudyRole(r)).toBe(true)
    expect(isStudyRole('adjudicator')).toBe(true)
    expect((ROLES as readonly string[]).includes('adjudicator')).toBe(false)
    expect(isStudyRole('owner')).toBe(false)
  })
})

describe('which study roles an account may hold', () => {
  // Rows: account role; the study roles it may be given, by hand.
  // Any account that labels may adjudicate a study; a viewer account may not.
  const MAY_HOLD: Record<Role, StudyRole[]> = {
    admin: ['admin', 'researcher', 'adjudicator', 'expert', 'annotator', 'viewer'],
    researcher: ['admin', 'researcher', 'adjudicator', 'expert', 'annotator', 'viewer'],
    expert: ['adjudicator', 'expert', 'annotator', 'viewer'],
    annotator: ['adjudicator', 'expert', 'annotator', 'viewer'],
    viewer: ['viewer'],
  }
  for (const account of ROLES) {
    it(`a ${account} account may be: ${MAY_HOLD[account].join(', ')}`, () => {
      expect(STUDY_ROLES.filter((r) => mayHoldStudyRole(account, r))).toEqual(MAY_HOLD[account])
    })
  }

  it('the creator of a study becomes its study admin when their account may be one', () => {
    expect(creatorStudyRole('admin')).toBe('admin')
    expect(creatorStudyRole('researcher')).toBe('admin')
    expect(creatorStudyRole('viewer')).toBe('viewer')
  })
})

describe("who takes part in a study's sessions (claims a seat, sends turns)", () => {
  // Rows: account role; the study roles under which it takes part, by hand. Viewers and adjudicators
  // never do (an adjudicator's own labels would not be blind); an account without work:submit (viewer)
  // never does; admin accounts do under any study role.
  const TAKES_PART: Record<Role, StudyRole[]> = {
    admin: ['admin', 'researcher', 'adjudicator', 'expert', 'annotator', 'viewer'],
    researcher: ['admin', 'researcher', 'expert', 'annotator'],
    expert: ['admin', 'researcher', 'expert', 'annotator'],
    annotator: ['admin', 'researcher', 'expert', 'annotator'],
    viewer: [],
  }
  for (const account of ROLES) {
    it(`a ${account} account takes part as: ${TAKES_PART[account].join(', ') || 'nothing'}`, () => {
      expect(STUDY_ROLES.filter((r) => mayTakePart(account, r))).toEqual(TAKES_PART[account])
      expect(mayTakePart(account, null)).toBe(false)
    })
  }
})
