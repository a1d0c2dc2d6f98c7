import type { NodeClassOverrides } from '@fleet/contracts';
import type { DriverContext, DriverDescription, PlatformRules } from '../driver.js';
import { InvalidDesiredStateError } from '../errors.js';
import { nodeClassRefProblem } from '../nodepools.js';
import type { KubeObject } from '../types.js';
import {
  CLUSTER_API_NODE_CLASS,
  DEFAULT_CLUSTER_API_NODE_CLASS_NAME,
  KARPENTER_NODE_GROUP_LABEL,
} from './constants.js';

// What the registry, the fleet API and the sidecar's start-up know of Cluster API without its
// driver (driver.ts), so that reading it loads none of the Cluster API code or its cloud's SDK.

/** OpenShift's own Cluster API keeps its objects here (cluster-capi-operator). */
export const OPENSHIFT_CLUSTER_API_NAMESPACE = 'openshift-cluster-api';

/**
 * Where the sidecar finds the Cluster: its name (`CLUSTER_API_CLUSTER_NAME`; on OpenShift the
 * infrastructure name) and its namespace on the management cluster (`CLUSTER_API_NAMESPACE`,
 * `openshift-cluster-api` by default).
 */
export function clusterApiLocation(env: DriverContext['env']): {
  clusterName: string | undefined;
  namespace: string;
} {
  return {
    clusterName: env.CLUSTER_API_CLUSTER_NAME || undefined,
    namespace: env.CLUSTER_API_NAMESPACE || OPENSHIFT_CLUSTER_API_NAMESPACE,
  };
}

/**
 * A ClusterAPINodeClass has only `scalableResourceSelector`, which the fleet keeps: none of the
 * overrides of a cloud NodeClass applies (the instance's disks, tags, metadata and kubelet
 * come from the infrastructure template and the bootstrap provider).
 */
export function validateClusterApiNodeClassOverrides(overrides: NodeClassOverrides): void {
  const fields = Object.keys(overrides).filter(
    (k) => overrides[k as keyof NodeClassOverrides] !== undefined,
  );
  if (fields.length === 0) return;
  throw new InvalidDesiredStateError(
    fields.sort().map((field) => ({
      field: `nodeClassOverrides.${field}`,
      message: `ClusterAPINodeClass has no field ${field} (its spec is scalableResourceSelector only, which the fleet keeps); on Cluster API set it in the worker's infrastructure template or bootstrap configuration`,
    })),
  );
}

/** The fleet API's checks for Cluster API: the ClusterAPINodeClass CRD, then the provider's. */
export const CLUSTER_API_PLATFORM_RULES: PlatformRules = {
  platform: 'CAPI',
  nodeClass: CLUSTER_API_NODE_CLASS,
  nodeClassCrdFile: 'karpenter.cluster.x-k8s.io_clusterapinodeclasses.yaml',
  nodeClassForValidation(overrides: NodeClassOverrides): KubeObject {
    return {
      apiVersion: CLUSTER_API_NODE_CLASS.apiVersion,
      kind: CLUSTER_API_NODE_CLASS.kind,
      metadata: { name: DEFAULT_CLUSTER_API_NODE_CLASS_NAME },
      spec: {
        scalableResourceSelector: { matchLabels: { [KARPENTER_NODE_GROUP_LABEL]: 'placeholder' } },
        ...structuredClone(overrides),
      },
    };
  },
  validateNodeClassOverrides: validateClusterApiNodeClassOverrides,
  nodeClassRefProblem: (ref) => nodeClassRefProblem(ref, CLUSTER_API_NODE_CLASS),
};

/**
 * Cluster API, topology STANDALONE: the sidecar and the operand run on the workload cluster.
 * Whether the management cluster is another one is a detail of the sidecar's deployment
 * (MANAGEMENT_KUBECONFIG), not another topology; HOSTED means HyperShift's hosted control planes.
 */
export const CLUSTER_API: DriverDescription = {
  platform: 'CAPI',
  topology: 'STANDALONE',
  rules: CLUSTER_API_PLATFORM_RULES,
  targets: ['management', 'workload'],
  sidecarRunsOn: 'workload',
};
