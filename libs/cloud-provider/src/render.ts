import type { KarpenterDesiredState } from '@fleet/contracts';
import type { CloudProvider, TargetedObject } from './types.js';

/**
 * Everything the desired state asks the provider to keep on the cluster, in apply order
 * (operand, the default NodeClass's MachineConfigPool, default NodeClass, NodePools). A disabled cluster renders nothing, so pruning
 * removes everything the sidecar owns. CRDs and the ClusterOperator are not part of it: CRDs
 * are installed once and never pruned, the ClusterOperator reports whatever the state.
 */
export function renderDesiredObjects<TInfra>(
  provider: CloudProvider<TInfra, unknown>,
  infra: TInfra,
  desired: KarpenterDesiredState,
): TargetedObject[] {
  if (!desired.enabled) return [];
  // Validate before rendering anything, so an invalid order yields no partial set.
  provider.validateNodeClassOverrides(desired.nodeClassOverrides);
  const nodePools = provider.renderNodePools(desired, infra);
  return [
    ...provider.renderOperand(infra, desired),
    // The default NodeClass's pool and user data exist before the NodeClass can launch anything.
    ...provider.renderNodeClassConfig(infra, provider.defaultNodeClassName, desired),
    provider.renderDefaultNodeClass(infra, desired.nodeClassOverrides),
    ...nodePools,
  ];
}
