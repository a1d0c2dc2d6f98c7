export * from './types.js';
export * from './driver.js';
export { DRIVER_REGISTRY, findDriver, supportedPairs } from './registry.js';
export * from './errors.js';
export * from './labels.js';
export { canonical } from './canonical.js';
export { loadCustomResourceDefinitions } from './crds.js';
export { renderDesiredObjects } from './render.js';
export { renderNodePools, type NodeClassRef } from './nodepools.js';
export {
  CLUSTER_OPERATOR_NAME,
  clusterOperatorConditions,
  clusterOperatorRow,
  renderClusterOperator,
} from './cluster-operator.js';
export {
  KARPENTER_CORE_CLUSTER_RULES,
  KARPENTER_CORE_NAMESPACE_RULES,
  KARPENTER_NODE_LEASE_RULES,
} from './rbac.js';
export * from './aws/index.js';
export * from './openshift/machine-config.js';
export * from './cluster-api/index.js';
export * from './hosted/index.js';
export * from './migration.js';
export * from './openshift/migration.js';
export * from './azure/index.js';
