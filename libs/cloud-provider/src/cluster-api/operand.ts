import type { KarpenterDesiredState } from '@fleet/contracts';
import { CAPI_GROUP, CLUSTER_NAME_LABEL, type ClusterApiInfrastructure } from '@fleet/discovery';
import { canonical } from '../canonical.js';
import { renderFeatureGates } from '../feature-gates.js';
import { ownedLabels } from '../labels.js';
import {
  KARPENTER_CORE_CLUSTER_RULES,
  KARPENTER_CORE_NAMESPACE_RULES,
  KARPENTER_NODE_LEASE_RULES,
  NODE_LEASE_NAMESPACE,
} from '../rbac.js';
import type { KubeObject, TargetedObject } from '../types.js';
import {
  CLUSTER_API_NODE_CLASS,
  DEFAULT_CLUSTER_API_NODE_CLASS_NAME,
  KARPENTER_NODE_GROUP_LABEL,
} from './constants.js';

export const CAPI_OPERAND_NAMESPACE = 'karpenter';
export const CAPI_OPERAND_NAME = 'karpenter';
export const CAPI_SERVICE_ACCOUNT_NAME = 'karpenter';
/** On the workload cluster: Karpenter core's rights plus the ClusterAPINodeClass. */
export const WORKLOAD_CLUSTER_ROLE = 'karpenter-fleet:cluster-api-provider';
/** The management kubeconfig the operand reads (CLUSTER_API_KUBECONFIG), on the workload cluster. */
export const OPERAND_MANAGEMENT_KUBECONFIG_SECRET = 'karpenter-cluster-api-kubeconfig';
const MANAGEMENT_KUBECONFIG_DIR = '/var/run/secrets/karpenter/cluster-api';
/**
 * karpenter-provider-cluster-api's image. Upstream publishes only a staging image
 * (us-central1-docker.pkg.dev/k8s-staging-images/karpenter-cluster-api/controller, tag latest);
 * the desired state's `operand.image` should pin a digest.
 */
export const DEFAULT_CLUSTER_API_KARPENTER_IMAGE =
  'us-central1-docker.pkg.dev/k8s-staging-images/karpenter-cluster-api/controller:latest';

/**
 * Where the Cluster API objects are for the operand: the same API server (OpenShift's own
 * Cluster API: its service account is bound on that cluster), or a separate management cluster
 * reached through a kubeconfig Secret the sidecar keeps on the workload cluster.
 */
export type ManagementAccess = 'same-cluster' | 'separate-cluster';

/** The management-side ServiceAccount the operand acts as when the clusters are separate. */
export const managementServiceAccountName = (infra: ClusterApiInfrastructure): string =>
  `karpenter-${infra.clusterName}`;
/** Cluster-wide: the provider lists MachineDeployments by label across namespaces. */
export const managementClusterRoleName = (infra: ClusterApiInfrastructure): string =>
  `karpenter-fleet:cluster-api:${infra.namespace}:${infra.clusterName}`;

/**
 * The upstream chart's cluster.x-k8s.io rule (clusterrole.yaml): the provider reads both kinds,
 * scales MachineDeployments (spec.replicas) and marks Machines for deletion
 * (`cluster.x-k8s.io/delete-machine`), all through update.
 */
export const CLUSTER_API_RULES = [
  {
    apiGroups: [CAPI_GROUP],
    resources: ['machinedeployments', 'machines'],
    verbs: ['get', 'list', 'update', 'watch'],
  },
];

const NODE_CLASS_RULES = [
  {
    apiGroups: [CLUSTER_API_NODE_CLASS.group],
    resources: ['clusterapinodeclasses'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: [CLUSTER_API_NODE_CLASS.group],
    resources: ['clusterapinodeclasses', 'clusterapinodeclasses/status'],
    verbs: ['patch', 'update'],
  },
];

const labels = () =>
  ownedLabels({
    'app.kubernetes.io/name': CAPI_OPERAND_NAME,
    'app.kubernetes.io/part-of': 'karpenter',
  });

function role(kind: 'Role' | 'ClusterRole', name: string, rules: unknown, namespace?: string) {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels: labels() },
    rules,
  };
}

function binding(
  kind: 'RoleBinding' | 'ClusterRoleBinding',
  name: string,
  subject: { name: string; namespace: string },
  namespace?: string,
) {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels: labels() },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole',
      name,
    },
    subjects: [{ kind: 'ServiceAccount', ...subject }],
  };
}

/**
 * karpenter-provider-cluster-api as its chart deploys it, on the workload cluster (Karpenter's
 * in-cluster client is the workload's: Nodes, Pods, NodePools, NodeClaims), with its rights on
 * the Cluster API objects granted where those live: on the workload cluster itself for
 * OpenShift's own Cluster API, else on the management cluster to a ServiceAccount in the
 * Cluster's namespace whose token the operand reads through CLUSTER_API_KUBECONFIG.
 */
export function renderClusterApiOperand(
  infra: ClusterApiInfrastructure,
  desired: KarpenterDesiredState,
  options: { image: string; access: ManagementAccess },
): TargetedObject[] {
  const workload = (object: object): TargetedObject => ({
    target: 'workload',
    object: canonical(object) as KubeObject,
  });
  const management = (object: object): TargetedObject => ({
    target: 'management',
    object: canonical(object) as KubeObject,
  });
  const operandSA = { name: CAPI_SERVICE_ACCOUNT_NAME, namespace: CAPI_OPERAND_NAMESPACE };
  const separate = options.access === 'separate-cluster';
  const capiSubject = separate
    ? { name: managementServiceAccountName(infra), namespace: infra.namespace }
    : operandSA;
  const capiRole = managementClusterRoleName(infra);
  const out: TargetedObject[] = [
    workload({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: CAPI_OPERAND_NAMESPACE, labels: labels() },
    }),
    workload({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: CAPI_SERVICE_ACCOUNT_NAME,
        namespace: CAPI_OPERAND_NAMESPACE,
        labels: labels(),
      },
    }),
    workload(
      role('ClusterRole', WORKLOAD_CLUSTER_ROLE, [
        ...KARPENTER_CORE_CLUSTER_RULES,
        ...NODE_CLASS_RULES,
      ]),
    ),
    workload(binding('ClusterRoleBinding', WORKLOAD_CLUSTER_ROLE, operandSA)),
    workload(
      role('Role', WORKLOAD_CLUSTER_ROLE, KARPENTER_CORE_NAMESPACE_RULES, CAPI_OPERAND_NAMESPACE),
    ),
    workload(binding('RoleBinding', WORKLOAD_CLUSTER_ROLE, operandSA, CAPI_OPERAND_NAMESPACE)),
    workload(role('Role', WORKLOAD_CLUSTER_ROLE, KARPENTER_NODE_LEASE_RULES, NODE_LEASE_NAMESPACE)),
    workload(binding('RoleBinding', WORKLOAD_CLUSTER_ROLE, operandSA, NODE_LEASE_NAMESPACE)),
    (separate ? management : workload)(role('ClusterRole', capiRole, CLUSTER_API_RULES)),
    (separate ? management : workload)(binding('ClusterRoleBinding', capiRole, capiSubject)),
  ];
  if (separate) {
    out.push(
      management({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: {
          name: capiSubject.name,
          namespace: infra.namespace,
          labels: ownedLabels({ [CLUSTER_NAME_LABEL]: infra.clusterName }),
        },
      }),
    );
  }
  out.push(workload(deployment(desired, options.image, separate)));
  return out;
}

function deployment(desired: KarpenterDesiredState, image: string, separate: boolean): object {
  const selector = { 'app.kubernetes.io/name': CAPI_OPERAND_NAME };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: CAPI_OPERAND_NAME, namespace: CAPI_OPERAND_NAMESPACE, labels: labels() },
    spec: {
      replicas: 1,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: labels() },
        spec: {
          serviceAccountName: CAPI_SERVICE_ACCOUNT_NAME,
          priorityClassName: 'system-cluster-critical',
          // Never on a node Karpenter could remove: the control plane's.
          nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
          tolerations: [
            {
              key: 'node-role.kubernetes.io/control-plane',
              operator: 'Exists',
              effect: 'NoSchedule',
            },
            { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
          ],
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'controller',
              image,
              env: [
                { name: 'FEATURE_GATES', value: renderFeatureGates(desired.featureGates) },
                { name: 'LOG_LEVEL', value: desired.logLevel },
                { name: 'HEALTH_PROBE_PORT', value: '8081' },
                { name: 'METRICS_PORT', value: '8080' },
                ...(separate
                  ? [
                      {
                        name: 'CLUSTER_API_KUBECONFIG',
                        value: `${MANAGEMENT_KUBECONFIG_DIR}/kubeconfig`,
                      },
                    ]
                  : []),
              ],
              ports: [
                { name: 'http-metrics', containerPort: 8080, protocol: 'TCP' },
                { name: 'http', containerPort: 8081, protocol: 'TCP' },
              ],
              livenessProbe: { httpGet: { path: '/healthz', port: 'http' } },
              readinessProbe: { httpGet: { path: '/readyz', port: 'http' } },
              resources: { requests: { cpu: '100m', memory: '256Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              ...(separate
                ? {
                    volumeMounts: [
                      {
                        name: 'cluster-api-kubeconfig',
                        mountPath: MANAGEMENT_KUBECONFIG_DIR,
                        readOnly: true,
                      },
                    ],
                  }
                : {}),
            },
          ],
          ...(separate
            ? {
                volumes: [
                  {
                    name: 'cluster-api-kubeconfig',
                    secret: { secretName: OPERAND_MANAGEMENT_KUBECONFIG_SECRET },
                  },
                ],
              }
            : {}),
        },
      },
    },
  };
}

/**
 * The default ClusterAPINodeClass: it selects this cluster's fleet MachineDeployments only (the
 * selector label's value is the Cluster's namespace, and the cluster name label narrows it on
 * a management cluster that holds many clusters).
 */
export function renderDefaultClusterApiNodeClass(infra: ClusterApiInfrastructure): TargetedObject {
  return {
    target: 'workload',
    object: canonical({
      apiVersion: CLUSTER_API_NODE_CLASS.apiVersion,
      kind: CLUSTER_API_NODE_CLASS.kind,
      metadata: { name: DEFAULT_CLUSTER_API_NODE_CLASS_NAME, labels: ownedLabels() },
      spec: { scalableResourceSelector: { matchLabels: nodeGroupSelector(infra) } },
    }),
  };
}

export function nodeGroupSelector(infra: ClusterApiInfrastructure): Record<string, string> {
  return { [KARPENTER_NODE_GROUP_LABEL]: infra.namespace, [CLUSTER_NAME_LABEL]: infra.clusterName };
}
