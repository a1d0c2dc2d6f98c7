import { matchesLabelSelector, type LabelRequirement } from '@fleet/contracts';

export type Role = 'VIEWER' | 'OPERATOR' | 'ADMIN';
export const ROLE_RANK: Record<Role, number> = { VIEWER: 1, OPERATOR: 2, ADMIN: 3 };

/** Who is calling: an API token with its role and optional cluster scope. */
export interface Principal {
  tokenId: string;
  name: string;
  role: Role;
  /** When set, the token sees and changes only clusters whose labels match. */
  scope: LabelRequirement[] | null;
  /** The scope as the token's creator wrote it (what `kfleet whoami` shows). */
  labelSelector: string | null;
  expiresAt: Date | null;
}

/**
 * Names of the sessions OIDC sign-in opens (`oidc:<username>`): API token names cannot contain
 * a colon, so a session is never mistaken for a token someone created.
 */
export const OIDC_SESSION_PREFIX = 'oidc:';
export const isOidcSession = (principal: Pick<Principal, 'name'>): boolean =>
  principal.name.startsWith(OIDC_SESSION_PREFIX);

export const hasRole = (principal: Principal, required: Role): boolean =>
  ROLE_RANK[principal.role] >= ROLE_RANK[required];

export const inScope = (principal: Principal, labels: unknown): boolean =>
  principal.scope === null ||
  matchesLabelSelector(principal.scope, (labels ?? {}) as Record<string, string>);
