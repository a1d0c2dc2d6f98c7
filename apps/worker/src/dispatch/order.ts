import {
  DEFAULT_KARPENTER_VERSION,
  KarpenterDesiredState,
  KarpenterVersion,
  operandFor,
  orderContractVersion,
  type ReconcileOrder,
} from '@fleet/contracts';

/** The fleet-wide operand default (worker config KARPENTER_VERSION / KARPENTER_IMAGE). */
export interface OperandDefault {
  version: KarpenterVersion;
  /** A mirror's copy of that release, by digest; the release's own image when absent. */
  image?: string;
}
export const BUILT_IN_OPERAND_DEFAULT: OperandDefault = { version: DEFAULT_KARPENTER_VERSION };

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
  /** The cluster's overrides; null follows the fleet default. */
  karpenterVersion?: string | null;
  operandImage?: string | null;
  interruptionQueue?: string | null;
  /** CORRECT (the default) is left out of the order, so orders read as before. */
  driftPolicy?: string | null;
  webIdentityRoleArn?: string | null;
  allowedInstanceTypes?: string[] | null;
  /** Sorted by name. */
  nodePools: { name: string; spec: unknown }[];
}

/** The order for a cluster's desired state as stored: the same whether dispatched or resynced. */
export function buildOrder(
  row: DesiredRow,
  fleetDefault: OperandDefault = BUILT_IN_OPERAND_DEFAULT,
): ReconcileOrder {
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
      // The release (and so the CRDs) is resolved here, so the order says exactly what runs: a
      // cluster's override wins, and an image override without a version is the fleet
      // default's mirror only if no version override says otherwise.
      ...(platform === 'AWS' ? { operand: resolveOperand(row, fleetDefault) } : {}),
      ...(row.interruptionQueue ? { interruptionQueue: row.interruptionQueue } : {}),
      ...(row.webIdentityRoleArn ? { webIdentityRoleArn: row.webIdentityRoleArn } : {}),
      ...(row.driftPolicy && row.driftPolicy !== 'CORRECT' ? { driftPolicy: row.driftPolicy } : {}),
      ...(row.allowedInstanceTypes?.length
        ? { allowedInstanceTypes: row.allowedInstanceTypes }
        : {}),
    }),
  };
}

/**
 * Whether a sidecar that last reported contract `speaks` (null: it never reported, so it must
 * get its first order) can read the order.
 */
export const sidecarReads = (speaks: number | null, order: ReconcileOrder): boolean =>
  speaks === null || speaks >= order.contractVersion;

function resolveOperand(row: DesiredRow, fleetDefault: OperandDefault) {
  if (row.karpenterVersion) {
    const version = KarpenterVersion.safeParse(row.karpenterVersion);
    if (!version.success)
      throw new Error(
        `karpenterVersion ${row.karpenterVersion}: ${version.error.issues[0]?.message}`,
      );
    return operandFor(version.data, row.operandImage);
  }
  return operandFor(fleetDefault.version, row.operandImage ?? fleetDefault.image);
}
