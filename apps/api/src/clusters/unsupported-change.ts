import {
  unsupportedChange,
  type ChangeTarget,
  type DesiredStateChange,
} from '@fleet/desired-state';

/**
 * Why a change cannot apply to a cluster (field, reason), or undefined: the platform and
 * topology rules of `unsupportedChange`, plus instance types, which only the Cluster API driver
 * renders (one node group per type); elsewhere Karpenter chooses among every type the
 * NodePools' requirements allow. setKarpenter refuses with it; a plan reports the cluster
 * NOT_PLANNED with it.
 */
export function unsupportedChangeFor(
  cluster: ChangeTarget,
  change: DesiredStateChange,
): { field: string; reason: string } | undefined {
  const refusal = unsupportedChange(cluster, change);
  if (refusal) return refusal;
  if (change.allowedInstanceTypes?.length && cluster.platform !== 'CAPI')
    return {
      field: 'allowedInstanceTypes',
      reason: `only for CAPI clusters (this cluster is ${cluster.platform}); restrict instance types with NodePool requirements`,
    };
  return undefined;
}
