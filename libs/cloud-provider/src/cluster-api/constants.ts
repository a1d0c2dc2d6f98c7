import { defineKind } from '@fleet/contracts';

/** karpenter-provider-cluster-api's NodeClass (cluster-scoped, on the workload cluster). */
export const CLUSTER_API_NODE_CLASS = defineKind(
  'karpenter.cluster.x-k8s.io',
  'v1alpha1',
  'ClusterAPINodeClass',
  'clusterapinodeclasses',
  false,
);
export const DEFAULT_CLUSTER_API_NODE_CLASS_NAME = 'default';

/**
 * The label the default ClusterAPINodeClass selects, valued with the Cluster's namespace: only
 * MachineDeployments the fleet renders for Karpenter carry it, so the provider never scales a
 * worker group the SRE owns, nor another cluster's on a shared management cluster.
 */
export const KARPENTER_NODE_GROUP_LABEL = 'fleet.karpenter.sh/karpenter-node-group';

/** The scale-from-zero annotations karpenter-provider-cluster-api reads (cloudprovider.go). */
export const CAPACITY_ANNOTATION = {
  cpu: 'capacity.cluster-autoscaler.kubernetes.io/cpu',
  memory: 'capacity.cluster-autoscaler.kubernetes.io/memory',
  gpuCount: 'capacity.cluster-autoscaler.kubernetes.io/gpu-count',
  gpuType: 'capacity.cluster-autoscaler.kubernetes.io/gpu-type',
  ephemeralDisk: 'capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk',
  labels: 'capacity.cluster-autoscaler.kubernetes.io/labels',
  taints: 'capacity.cluster-autoscaler.kubernetes.io/taints',
  maxPods: 'capacity.cluster-autoscaler.kubernetes.io/maxPods',
} as const;

/**
 * The kubelet's default `maxPods`. The AWS VPC CNI's ENI-based limit does not apply: Cluster API
 * clusters run an overlay CNI unless told otherwise, and the kubelet then admits 110 pods.
 */
export const DEFAULT_MAX_PODS = 110;

/**
 * The sidecar's finalizer on the Cluster (management side) while Karpenter is enabled on it:
 * deleting the Cluster then waits until the fleet has removed NodePools, NodeClaims (and with
 * them their Machines) and its MachineDeployments, so no Machine is left to a deleted Cluster.
 */
export const CLUSTER_CLEANUP_FINALIZER = 'fleet.karpenter.sh/karpenter-cleanup';
