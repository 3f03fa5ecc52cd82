import { describe, expect, it } from 'vitest'
import { hasScope, ROLE_SCOPES, ROLES, SCOPES, type Role, type Scope } from './roles'

// The access model written out by hand, role by role. If the scope table changes, this table must be
// changed deliberately too: the test is the second signature on a permission change.
const EXPECTED: Record<Scope, Role[]> = {
  'studies:read': ['admin', 'researcher', 'viewer'],
  'studies:read-all': ['admin'],
  'studies:create': ['admin', 'researcher'],
  'studies:update': ['admin', 'researcher'],
  'work:read-own': ['admin', 'researcher', 'expert', 'annotator'],
  'work:submit': ['admin', 'researcher', 'expert', 'annotator'],
  'work:read-study': ['admin', 'researcher'],
  'work:assign': ['admin', 'researcher'],
  'dashboards:read': ['admin', 'researcher', 'viewer'],
  'exports:read': ['admin', 'researcher'],
  'users:read': ['admin', 'researcher'],
  'users:manage': ['admin'],
  'audit:read': ['admin'],
  'apikeys:own': ['admin', 'researcher', 'expert', 'annotator', 'viewer'],
  'profile:update': ['admin', 'researcher', 'expert', 'annotator', 'viewer'],
  'studies:pages': ['admin', 'researcher', 'expert', 'annotator', 'viewer'],
  'media:read': ['admin', 'researcher', 'expert', 'annotator', 'viewer'],
  'connections:manage': ['admin', 'researcher'],
  'connections:manage-global': ['admin'],
  'connections:internal-hosts': ['admin'],
  'calls:read': ['admin', 'researcher'],
  'calls:read-all': ['admin'],
  'prices:manage': ['admin'],
  // Where the study role adjudicates (study-roles.ts): every account that labels.
  'labels:adjudicate': ['admin', 'researcher', 'expert', 'annotator'],
}

describe('role → scope table', () => {
  for (const role of ROLES) {
    for (const scope of SCOPES) {
      const allowed = EXPECTED[scope].includes(role)
      it(`${role} ${allowed ? 'has' : 'lacks'} ${scope}`, () => {
        expect(hasScope(role, scope)).toBe(allowed)
      })
    }
  }

  it('every scope a role lists is a known scope', () => {
    for (const role of ROLES) for (const s of ROLE_SCOPES[role]) expect(SCOPES).toContain(s)
  })

  it('unknown or missing roles have no scope at all', () => {
    for (const scope of SCOPES) {
      expect(hasScope('superuser', scope)).toBe(false)
      expect(hasScope(undefined, scope)).toBe(false)
      expect(hasScope(null, scope)).toBe(false)
    }
  })
})
