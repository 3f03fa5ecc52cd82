/**
 * Roles map to `resource:action` scopes in this one table (Langfuse's projectAccessRights style).
 * Code checks scopes, never role names. Pure: safe to import from client components for hiding UI,
 * but hiding is cosmetic: every page, action and API route checks the scope on the server.
 */
export const ROLES = ['admin', 'researcher', 'expert', 'annotator', 'viewer'] as const
export type Role = (typeof ROLES)[number]

export const ROLE_LABELS: Record<Role, string> = {
  admin: 'Admin',
  researcher: 'Researcher',
  expert: 'Expert',
  annotator: 'Annotator',
  viewer: 'Viewer',
}

export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  admin: 'Manages users, connections and everything else.',
  researcher: 'Creates studies, runs experiments, sees dashboards and exports.',
  expert: 'Acts as the human agent in sessions assigned to them.',
  annotator: 'Labels items assigned to them.',
  viewer: 'Reads the dashboards of studies they belong to.',
}

export const SCOPES = [
  'studies:read', // see studies (members only, unless studies:read-all)
  'studies:read-all', // see every study
  'studies:pages', // open a protocol's pages under a study; which ones, the study role decides (study-roles.ts)
  'studies:create',
  'studies:update', // edit, archive, manage members of studies they belong to
  'work:read-own', // your work queue: the sessions whose seats you fill, seats you may claim
  'work:submit', // take part: claim seats, send your turns
  'work:read-study', // see every session of the studies you belong to
  'work:assign', // name members on runs' free seats in studies you belong to
  'dashboards:read',
  'exports:read',
  'users:read', // list accounts (to add study members)
  'users:manage', // create users, change roles, disable
  'audit:read',
  'apikeys:own', // create and revoke your own API keys
  'profile:update', // change your own name and password
  'media:read', // drawings a page shows (a molecule from its SMILES): a pure function of the request
  'connections:manage', // add and edit LLM connections and presets of studies you belong to; use global ones
  'connections:manage-global', // add and edit global LLM connections and presets
  'connections:internal-hosts', // point connections at internal addresses (loopback, private, link-local …)
  'calls:read', // the LLM call log of your studies and of calls you caused
  'calls:read-all', // every LLM call
  'prices:manage', // the per-model price table
  'labels:adjudicate', // set final labels of labelling items in studies whose study role adjudicates (study-roles.ts)
] as const
export type Scope = (typeof SCOPES)[number]

const ALL: readonly Scope[] = SCOPES

/**
 * Experts and annotators: their work, and a study's pages only where the study role grants them.
 * labels:adjudicate: only where a study makes them its adjudicator (their study roles expert and
 * annotator do not adjudicate).
 */
const TAKES_PART: readonly Scope[] = [
  'studies:pages',
  'work:read-own',
  'work:submit',
  'apikeys:own',
  'profile:update',
  'media:read',
  'labels:adjudicate',
]

export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  admin: ALL,
  researcher: [
    'studies:read',
    'studies:pages',
    'studies:create',
    'studies:update',
    'work:read-own',
    'work:submit',
    'work:read-study',
    'work:assign',
    'dashboards:read',
    'exports:read',
    'users:read',
    'apikeys:own',
    'profile:update',
    'media:read',
    'connections:manage',
    'calls:read',
    'labels:adjudicate',
  ],
  expert: TAKES_PART,
  annotator: TAKES_PART,
  viewer: ['studies:read', 'studies:pages', 'dashboards:read', 'apikeys:own', 'profile:update', 'media:read'],
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

export function hasScope(role: string | null | undefined, scope: Scope): boolean {
  return isRole(role) && ROLE_SCOPES[role].includes(scope)
}

/** Roles ordered by privilege; a study membership never grants more than the account role. */
const RANK: Record<Role, number> = { viewer: 0, annotator: 1, expert: 1, researcher: 2, admin: 3 }
export function rank(role: Role): number {
  return RANK[role]
}
