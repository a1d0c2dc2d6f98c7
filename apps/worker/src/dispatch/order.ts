import { KarpenterDesiredState, orderContractVersion, type ReconcileOrder } from '@fleet/contracts';

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
  const platform = row.platform as ReconcileOrder['platform'];
  const topology = row.topology as ReconcileOrder['topology'];
  return {
    contractVersion: orderContractVersion({ platform, topology }),
    clusterId: row.clusterId,
    generation: row.generation,
    platform,
    topology,
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

/**
 * Whether a sidecar that last reported contract `speaks` (null: it never reported, so it must
 * get its first order) can read the order.
 */
export const sidecarReads = (speaks: number | null, order: ReconcileOrder): boolean =>
  speaks === null || speaks >= order.contractVersion;
