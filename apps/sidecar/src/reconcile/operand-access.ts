import type { KubeObject } from '@fleet/cloud-provider';

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
