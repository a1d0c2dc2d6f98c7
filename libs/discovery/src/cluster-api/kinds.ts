import { defineKind } from '@fleet/contracts';

/**
 * Cluster API kinds, at the version karpenter-provider-cluster-api reads and writes
 * (sigs.k8s.io/cluster-api/api/v1beta1; the CRDs serve v1beta1 and v1beta2).
 */
export const CAPI_GROUP = 'cluster.x-k8s.io';
export const CAPI_VERSION = 'v1beta1';
export const CAPI_CLUSTER = defineKind(CAPI_GROUP, CAPI_VERSION, 'Cluster', 'clusters', true);
export const MACHINE_DEPLOYMENT = defineKind(
  CAPI_GROUP,
  CAPI_VERSION,
  'MachineDeployment',
  'machinedeployments',
  true,
);
export const CAPI_MACHINE_SET = defineKind(
  CAPI_GROUP,
  CAPI_VERSION,
  'MachineSet',
  'machinesets',
  true,
);
export const CAPI_MACHINE = defineKind(CAPI_GROUP, CAPI_VERSION, 'Machine', 'machines', true);

/** Every CAPI object of a cluster carries it. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** A MachineSet created by a MachineDeployment carries its name here. */
export const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';
/** The Cluster Autoscaler's Cluster API node-group bounds. */
export const AUTOSCALER_MIN_SIZE = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
export const AUTOSCALER_MAX_SIZE = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
