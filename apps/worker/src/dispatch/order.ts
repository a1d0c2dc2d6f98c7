import { CONTRACT_VERSION, KarpenterDesiredState, type ReconcileOrder } from '@fleet/contracts';

export interface DesiredRow {
  clusterId: string;
  generation: number;
  platform: string;
  topology: string;
  enabled: boolean;
  paused: boolean;
  clusterAutoscalerMode: string;
  logLevel: string;
  featureGates: unknown;
  nodeClassOverrides: unknown;
  /** Sorted by name. */
  nodePools: { name: string; spec: unknown }[];
}

/** The order for a cluster's desired state as stored: the same whether dispatched or resynced. */
export function buildOrder(row: DesiredRow): ReconcileOrder {
  return {
    contractVersion: CONTRACT_VERSION,
    clusterId: row.clusterId,
    generation: row.generation,
    platform: row.platform as ReconcileOrder['platform'],
    topology: row.topology as ReconcileOrder['topology'],
    spec: KarpenterDesiredState.parse({
      enabled: row.enabled,
      paused: row.paused,
      clusterAutoscalerMode: row.clusterAutoscalerMode,
      logLevel: row.logLevel,
      featureGates: row.featureGates,
      nodeClassOverrides: row.nodeClassOverrides,
      nodePools: row.nodePools,
    }),
  };
}
