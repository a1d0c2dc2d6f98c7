import type { KubeObject } from '@fleet/cloud-provider';

import type { ClusterClient } from '../kube/cluster-client.js';

/**
 * The sidecar's rights inside the operand's namespace come from a ClusterRole that deploy/ ships
 * and the sidecar binds there itself, right after creating the namespace: the namespace does not
 * exist when deploy/ is applied, and granting the same verbs cluster-wide would let the sidecar
 * read and delete Deployments, ServiceAccounts and RBAC in every namespace.
 */
export const OPERAND_ACCESS_CLUSTER_ROLE = 'karpenter-fleet-sidecar-operand';
export const OPERAND_ACCESS_BINDING = 'karpenter-fleet-sidecar';

/** The service account the sidecar runs as (the subject of the binding). */
export interface SidecarIdentity {
  namespace: string;
  serviceAccount: string;
}

/**
 * Deliberately without the fleet's owned-by label: pruning must never remove the binding that
 * lets it prune; it goes with the namespace.
 */
export function operandAccessBinding(namespace: string, identity: SidecarIdentity): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: {
      name: OPERAND_ACCESS_BINDING,
      namespace,
      labels: { 'app.kubernetes.io/part-of': 'karpenter-fleet' },
    },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: OPERAND_ACCESS_CLUSTER_ROLE,
    },
    subjects: [
      { kind: 'ServiceAccount', name: identity.serviceAccount, namespace: identity.namespace },
    ],
  };
}

/**
 * Waits (at most `timeoutMs`) until the API server authorizes the sidecar in the operand's
 * namespace: a binding takes effect once the RBAC authorizer's cache has it, a moment after the
 * write on a real server, and the first write there would otherwise be refused. Asked for `list`
 * on ServiceAccounts, which the operand-access role grants for every name on every platform (its
 * writes are for named objects only). Past the deadline the writes go ahead, and a refusal is an
 * ApplyFailed, retried like any.
 */
export async function untilOperandAccess(
  client: Pick<ClusterClient, 'allowed'>,
  namespace: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await client.allowed({ verb: 'list', resource: 'serviceaccounts', namespace }))) {
    if (Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
