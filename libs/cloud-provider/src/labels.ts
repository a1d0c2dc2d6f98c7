import { FIELD_MANAGER } from '@fleet/contracts';

/** Marks every object the sidecar writes, so it can prune what it owns and nothing else. */
export const MANAGED_BY_LABEL = 'fleet.karpenter.sh/managed-by';
export const MANAGED_BY_VALUE = FIELD_MANAGER;
export const OWNED_BY_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/** Karpenter labels every NodeClaim and node it launches with its NodePool. */
export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';

/**
 * Field manager for NodeClass enforcement patches. It must differ from FIELD_MANAGER: an apply
 * carrying only amiFamily/amiSelectorTerms/userData under FIELD_MANAGER would release every
 * other field the sidecar applied to the default NodeClass, and the API server would drop them.
 */
export const NODECLASS_ENFORCER_FIELD_MANAGER = `${FIELD_MANAGER}-nodeclass-enforcer`;

export const ownedLabels = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...extra,
  [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
});
