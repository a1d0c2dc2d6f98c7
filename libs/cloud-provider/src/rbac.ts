import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
} from '@kubernetes/client-node';

/**
 * What Karpenter core needs on the workload cluster whatever the platform, after the upstream
 * chart's clusterrole-core.yaml (Karpenter v1.14). Platform rules (the NodeClass kind, CAPI
 * machines, ...) are appended by each provider.
 */
export const KARPENTER_CORE_CLUSTER_RULES: readonly V1PolicyRule[] = [
  // Read
  {
    apiGroups: ['karpenter.sh'],
    resources: [
      'nodeclaims',
      'nodeclaims/status',
      'nodeoverlays',
      'nodeoverlays/status',
      'nodepools',
      'nodepools/status',
    ],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: [''],
    resources: [
      'namespaces',
      'nodes',
      'persistentvolumeclaims',
      'persistentvolumes',
      'pods',
      'podtemplates',
      'replicationcontrollers',
    ],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['storage.k8s.io'],
    resources: ['csinodes', 'storageclasses', 'volumeattachments'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['apps'],
    resources: ['daemonsets', 'deployments', 'replicasets', 'statefulsets'],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroups: ['autoscaling.x-k8s.io'],
    resources: ['capacitybuffers', 'capacitybuffers/status'],
    verbs: ['get', 'list', 'watch'],
  },
  // A rule for an API group the cluster does not serve is inert, so DRA needs no switch.
  {
    apiGroups: ['resource.k8s.io'],
    resources: ['deviceclasses', 'resourceclaims', 'resourceslices'],
    verbs: ['get', 'list', 'watch'],
  },
  // Write
  {
    apiGroups: ['karpenter.sh'],
    resources: ['nodeclaims', 'nodeclaims/status'],
    verbs: ['create', 'delete', 'patch', 'update'],
  },
  {
    apiGroups: ['karpenter.sh'],
    resources: ['nodeoverlays/status', 'nodepools', 'nodepools/status'],
    verbs: ['patch', 'update'],
  },
  {
    apiGroups: ['autoscaling.x-k8s.io'],
    resources: ['capacitybuffers/status'],
    verbs: ['patch', 'update'],
  },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['delete', 'patch', 'update'] },
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
  // Not in the AWS chart: OpenShift enables OwnerReferencesPermissionEnforcement, which lets
  // only whoever may update the owner's finalizers set blockOwnerDeletion. Karpenter sets it on
  // a NodeClaim's ownerReference to its NodePool and on a Node's to its NodeClaim (registration,
  // utils/nodeclaim UpdateNodeOwnerReferences). karpenter-operator and Karpenter's kwok chart
  // grant both; operand-rbac.spec.ts compares the whole role with the v1.14.1 chart.
  {
    apiGroups: ['karpenter.sh'],
    resources: ['nodeclaims/finalizers', 'nodepools/finalizers'],
    verbs: ['update'],
  },
];

/** Leader election and config in the operand's own namespace (upstream role.yaml). */
export const KARPENTER_CORE_NAMESPACE_RULES: readonly V1PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'watch'] },
  {
    apiGroups: [''],
    resources: ['configmaps', 'namespaces', 'secrets'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    resourceNames: ['karpenter-leader-election'],
    verbs: ['patch', 'update'],
  },
  // RBAC cannot restrict create by name.
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
];

/** Karpenter garbage-collects the node leases of nodes it deleted (upstream role `-lease`). */
export const KARPENTER_NODE_LEASE_RULES: readonly V1PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['delete'] },
];

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** Where Karpenter runs on an OpenShift cluster and under which names its RBAC is written. */
export interface OperandRbacNames {
  /** The ClusterRole, ClusterRoleBinding, Roles and RoleBindings share it. */
  name: string;
  namespace: string;
  serviceAccount: string;
  labels: Record<string, string>;
}

/**
 * Karpenter's RBAC on a standalone OpenShift cluster, whatever the cloud: core's cluster rules
 * plus the provider's (its NodeClass kind), core's rules in the operand's namespace and the
 * node-lease rules in kube-node-lease, each bound to the operand's ServiceAccount.
 */
export function operandRbac(
  names: OperandRbacNames,
  providerClusterRules: readonly V1PolicyRule[],
): object[] {
  const { name, namespace, serviceAccount, labels } = names;
  const subjects = [{ kind: 'ServiceAccount', name: serviceAccount, namespace }];
  const clusterRole: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { ...labels } },
    rules: [...KARPENTER_CORE_CLUSTER_RULES, ...providerClusterRules],
  };
  const clusterRoleBinding: V1ClusterRoleBinding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { ...labels } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects,
  };
  const roles: [string, readonly V1PolicyRule[]][] = [
    [namespace, KARPENTER_CORE_NAMESPACE_RULES],
    [NODE_LEASE_NAMESPACE, KARPENTER_NODE_LEASE_RULES],
  ];
  const namespaced = roles.flatMap(([ns, rules]): object[] => {
    const role: V1Role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: ns, labels: { ...labels } },
      rules: [...rules],
    };
    const binding: V1RoleBinding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: ns, labels: { ...labels } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    };
    return [role, binding];
  });
  return [clusterRole, clusterRoleBinding, ...namespaced];
}
