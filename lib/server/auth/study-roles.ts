import { hasScope, type Role, rank, type Scope } from './roles'

/**
 * The roles a member can have in one study (StudyMember.role, a string column): the account roles, and
 * `adjudicator`, which exists only in a study (no account is an adjudicator everywhere).
 */
export const STUDY_ROLES = ['admin', 'researcher', 'adjudicator', 'expert', 'annotator', 'viewer'] as const
export type StudyRole = (typeof STUDY_ROLES)[number]

export function isStudyRole(value: unknown): value is StudyRole {
  return typeof value === 'string' && (STUDY_ROLES as readonly string[]).includes(value)
}

/**
 * What a member may do in one study, by their study role (StudyMember.role). Pure, beside the
 * account table in roles.ts. The effective permission in a study is the account's scope AND the
 * study role's permission: an operation needs its scope (roles.ts, checked by `execute`) and the
 * study permission below (checked by `requireStudyAccess` / `studiesWhere` in services/studies.ts).
 *
 * - read: see the study, its members, work, datasets, templates, experiments, debates, sessions,
 *   dashboards, study connections and presets, and its LLM calls.
 * - write: change its content: import datasets, create templates, experiments and debates, run
 *   them (start, pause, resume, cancel, Retry), label merges, study connections and presets (and
 *   spending their keys: test, prompt), assign work, and export data.
 * - manage: the study itself: rename and edit it, archive it, add and remove members and change
 *   their study roles.
 * - adjudicate: set the final label of a labelling item with a note, and read what that needs (the
 *   study's agreement and adjudication pages). Study admins, researchers and adjudicators.
 *
 * An adjudicator (a study role only) reads the study and adjudicates; it does not change the study's
 * content (no imports, runs, exports) and does not take part in its sessions (its labels would not be
 * blind). Its account half: `read` needs studies:read as always, `adjudicate` needs labels:adjudicate,
 * which every account that labels has (admin, researcher, expert, annotator: roles.ts), so the study
 * role alone decides where an annotator or expert account adjudicates. An annotator or expert account
 * made adjudicator therefore sets final labels (`labelling.adjudicate`) without reading the rest of the
 * study; the adjudication and agreement pages are study pages (studies:read), so they open for an
 * adjudicator whose account reads studies (viewer, researcher).
 *
 * Experts and annotators have no study permission: they open and submit only the work, sessions
 * and debates assigned to them (and the images of those sessions), whatever their account may do.
 * The creator of a study becomes its first study admin (`creatorStudyRole`). An account with
 * studies:read-all (admins) has every permission in every study, member or not.
 */
export const STUDY_PERMISSIONS = ['read', 'write', 'manage', 'adjudicate'] as const
export type StudyPermission = (typeof STUDY_PERMISSIONS)[number]

export const STUDY_ROLE_PERMISSIONS: Record<StudyRole, readonly StudyPermission[]> = {
  admin: ['read', 'write', 'manage', 'adjudicate'],
  researcher: ['read', 'write', 'adjudicate'],
  adjudicator: ['read', 'adjudicate'],
  expert: [],
  annotator: [],
  viewer: ['read'],
}

export const STUDY_ROLE_LABELS: Record<StudyRole, string> = {
  admin: 'Study admin',
  researcher: 'Researcher',
  adjudicator: 'Adjudicator',
  expert: 'Expert',
  annotator: 'Annotator',
  viewer: 'Viewer',
}

export const STUDY_ROLE_DESCRIPTIONS: Record<StudyRole, string> = {
  admin: 'Manages the study: settings, archive, members and their roles; and everything a researcher does.',
  researcher: 'Reads everything; imports datasets, runs experiments and debates, assigns work, exports.',
  adjudicator:
    'Reads the study and its labelling agreement; sets the final label of disputed items with a note. Runs nothing, exports nothing.',
  expert: 'Works on the sessions assigned to them, nothing else of the study.',
  annotator: 'Works on the items assigned to them, nothing else of the study.',
  viewer: 'Reads the study and its dashboards; changes nothing, exports nothing.',
}

/** The account scope each study permission also needs (the account half of "account AND study"). */
const ACCOUNT_SCOPE: Record<StudyPermission, Scope> = {
  read: 'studies:read',
  write: 'studies:update',
  manage: 'studies:update',
  adjudicate: 'labels:adjudicate',
}

/**
 * The permissions an account has in one study: every one with studies:read-all; otherwise those
 * of its study role (none without a membership) that its account scopes back.
 */
export function studyPermissions(accountRole: Role, studyRole: string | null | undefined): StudyPermission[] {
  if (hasScope(accountRole, 'studies:read-all')) return [...STUDY_PERMISSIONS]
  if (!isStudyRole(studyRole)) return []
  return STUDY_ROLE_PERMISSIONS[studyRole].filter((p) => hasScope(accountRole, ACCOUNT_SCOPE[p]))
}

/**
 * Taking part in a study's sessions (claiming a claimable seat, sending a turn, being named in a
 * seat) is apart from read/write/manage: experts and annotators take part without reading the study,
 * and a viewer reads it but never takes part (a turn is study data). It needs a membership whose
 * study role takes part and the account's `work:submit`; an admin account (studies:read-all) takes
 * part in any study it is a member of, whatever its study role.
 */
export const TAKE_PART_STUDY_ROLES: readonly StudyRole[] = ['admin', 'researcher', 'expert', 'annotator']

/** The study roles under which this account takes part (for queries: `role = ANY(…)`). */
export function takePartStudyRoles(accountRole: Role): StudyRole[] {
  if (!hasScope(accountRole, 'work:submit')) return []
  return hasScope(accountRole, 'studies:read-all') ? [...STUDY_ROLES] : [...TAKE_PART_STUDY_ROLES]
}

/** May a member with this study role (null: not a member) take part in the study's sessions? */
export function mayTakePart(accountRole: Role, studyRole: string | null | undefined): boolean {
  return isStudyRole(studyRole) && takePartStudyRoles(accountRole).includes(studyRole)
}

/** Study roles that grant a permission (for queries: `role IN (…)`). */
export function studyRolesWith(permission: StudyPermission): StudyRole[] {
  return STUDY_ROLES.filter((r) => STUDY_ROLE_PERMISSIONS[r].includes(permission))
}

/**
 * May an account hold this study role? Never a role above the account role, with one exception: a
 * researcher may be a study admin, which manages that one study and grants nothing anywhere else
 * (account scopes come from the account role only). An adjudicator ranks with experts and annotators:
 * any account that labels (admin, researcher, expert, annotator) may adjudicate a study; a viewer
 * account, which labels nothing, may not.
 */
export function mayHoldStudyRole(accountRole: Role, studyRole: StudyRole): boolean {
  const r = studyRole === 'adjudicator' ? rank('annotator') : rank(studyRole)
  return r <= rank(accountRole) || (accountRole === 'researcher' && studyRole === 'admin')
}

/** The study role the creator of a study gets: study admin when their account may hold it. */
export function creatorStudyRole(accountRole: Role): StudyRole {
  return mayHoldStudyRole(accountRole, 'admin') ? 'admin' : accountRole
}
