import {
  ClusterAutoscalerMode,
  DesiredNodePool,
  DriftPolicy,
  FeatureGates,
  KarpenterVersion,
  LogLevel,
  dns1123Subdomain,
  imageByDigest,
  iamRoleArn,
  instanceTypeName,
  sqsQueueName,
} from '@fleet/contracts';
import type { Prisma } from '@fleet/database';
import { z } from 'zod';
import { clusterOverrides, writeOverrides } from './profile-store.js';
import { PROFILE_SETTINGS, type ProfileSpec } from './profiles.js';

/**
 * One change to a cluster's desired state, as a single mutation or a rollout applies it. Fields
 * left out keep their value; featureGates replaces the whole map (as setKarpenter does).
 */
export const DesiredStateChange = z
  .object({
    enabled: z.boolean().optional(),
    paused: z.boolean().optional(),
    clusterAutoscalerMode: ClusterAutoscalerMode.optional(),
    logLevel: LogLevel.optional(),
    featureGates: FeatureGates.optional(),
    upsertNodePool: DesiredNodePool.optional(),
    deleteNodePool: dns1123Subdomain.optional(),
    /** The cluster's Karpenter release (and so its CRDs); a rollout of it is a fleet upgrade. */
    karpenterVersion: KarpenterVersion.optional(),
    /** The operand image, by digest (a mirror's copy of the release). */
    operandImage: imageByDigest.optional(),
    interruptionQueue: sqsQueueName.optional(),
    /** What the sidecar does with hand edits of what the fleet manages. */
    driftPolicy: DriftPolicy.optional(),
    webIdentityRoleArn: iamRoleArn.optional(),
    /** Cluster API: an empty list goes back to the worker template's type. */
    allowedInstanceTypes: z.array(instanceTypeName).max(32).optional(),
    /** The NodeClass overrides, replaced whole (checked against the real NodeClass CRD first). */
    nodeClassOverrides: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type DesiredStateChange = z.infer<typeof DesiredStateChange>;

export type ApplyOutcome = 'applied' | 'no-such-nodepool';

/**
 * A change split as it is stored, computed in memory from the stored overrides: `own`, the
 * columns that are the cluster's alone, written as is; `overrides`, the cluster's new overrides
 * when the change touches what a profile could also set (else undefined: the effective state is
 * not re-materialized). The one rule applyDesiredStateChange and commitLockedChange share.
 */
export function splitDesiredStateChange(
  stored: ProfileSpec,
  change: DesiredStateChange,
): { own: Record<string, unknown>; overrides: ProfileSpec | undefined; outcome: ApplyOutcome } {
  const { upsertNodePool, deleteNodePool, ...settings } = change;
  const own: Record<string, unknown> = {};
  const overrides = { ...stored };
  let overridden = false;
  for (const [key, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    if ((PROFILE_SETTINGS as readonly string[]).includes(key)) {
      (overrides as Record<string, unknown>)[key] = value;
      overridden = true;
    } else own[key] = value;
  }
  if (upsertNodePool) {
    overrides.nodePools = { ...overrides.nodePools, [upsertNodePool.name]: upsertNodePool.spec };
    overridden = true;
  }
  if (deleteNodePool) {
    // Only the cluster's own NodePool: one a profile gives is removed by that profile.
    if (!overrides.nodePools || !Object.hasOwn(overrides.nodePools, deleteNodePool))
      return { own, overrides: undefined, outcome: 'no-such-nodepool' };
    overrides.nodePools = Object.fromEntries(
      Object.entries(overrides.nodePools).filter(([name]) => name !== deleteNodePool),
    );
    overridden = true;
  }
  return { own, overrides: overridden ? overrides : undefined, outcome: 'applied' };
}

/**
 * Writes the change inside the caller's transaction; the caller bumps the generation. What a
 * profile could also set (PROFILE_SETTINGS, NodePools) is the cluster's own override: it is
 * recorded in DesiredState.overrides and the effective state re-materialized (docs/PROFILES.md);
 * the rest (paused, operand image, interruption queue, ...) is the cluster's alone, written as is.
 */
export async function applyDesiredStateChange(
  tx: Prisma.TransactionClient,
  clusterId: string,
  change: DesiredStateChange,
): Promise<ApplyOutcome> {
  const { own, overrides, outcome } = splitDesiredStateChange(
    await clusterOverrides(tx, clusterId),
    change,
  );
  if (Object.keys(own).length) await tx.desiredState.update({ where: { clusterId }, data: own });
  if (outcome !== 'applied') return outcome;
  if (overrides) await writeOverrides(tx, clusterId, overrides);
  return 'applied';
}

/** The cluster facts that decide whether a change can apply to it. */
export interface ChangeTarget {
  platform: string;
  topology: string;
  managementCluster?: string | null;
}

/**
 * Why a change cannot apply to this cluster (the field of the change, the reason), or undefined:
 * a change that would be stored, bump the generation and report healthy while no sidecar acts on
 * it is refused instead.
 * - A hosted cluster's Cluster Autoscaler is HyperShift NodePool autoscaling
 *   (hypershift.openshift.io NodePool spec.autoScaling, in the HostedCluster's namespace on the
 *   management cluster); the fleet does not change those NodePools yet, so DISABLE and MIGRATE
 *   would promise what no sidecar does.
 * - The Karpenter release and operand image are the fleet's only where it runs the operand
 *   itself, standalone AWS: HyperShift runs its own on hosted clusters, and the Cluster API
 *   driver runs karpenter-provider-cluster-api's image.
 */
/**
 * The role ARNs HyperShift's API admits for AutoNode (the CEL rule on roleARN in
 * api/hypershift/v1beta1/hostedcluster_types.go at 3ee9615567ac): narrower than IAM's partitions.
 */
const HYPERSHIFT_ROLE_ARN = /^arn:(aws|aws-cn|aws-us-gov):iam::[0-9]{12}:role\/.+$/;

export function unsupportedChange(
  cluster: ChangeTarget,
  change: Pick<
    DesiredStateChange,
    'clusterAutoscalerMode' | 'karpenterVersion' | 'operandImage' | 'driftPolicy'
  > & { webIdentityRoleArn?: string | null },
): { field: string; reason: string } | undefined {
  const role = change.webIdentityRoleArn;
  if (cluster.topology === 'HOSTED' && role && !HYPERSHIFT_ROLE_ARN.test(role))
    return {
      field: 'webIdentityRoleArn',
      reason:
        'HyperShift accepts an AutoNode role ARN only in the aws, aws-cn and aws-us-gov partitions ' +
        '(HostedCluster spec.autoNode.provisionerConfig.karpenter.aws.roleARN, ' +
        `^arn:(aws|aws-cn|aws-us-gov):iam::[0-9]{12}:role/.+$); this one is ${role}`,
    };
  const mode = change.clusterAutoscalerMode;
  if (cluster.topology === 'HOSTED' && mode !== undefined && mode !== 'KEEP')
    return {
      field: 'clusterAutoscalerMode',
      reason:
        `${mode} is not supported for HOSTED clusters: their Cluster Autoscaler is HyperShift ` +
        `NodePool autoscaling (hypershift.openshift.io/v1beta1 NodePool spec.autoScaling in the ` +
        `HostedCluster's namespace on management cluster ${cluster.managementCluster ?? '(unknown)'}), ` +
        `which the fleet leaves to HyperShift; keep KEEP and change each HyperShift NodePool's ` +
        `spec.autoScaling (or spec.replicas) there`,
    };
  const ownOperand = cluster.platform === 'AWS' && cluster.topology === 'STANDALONE';
  for (const field of ['karpenterVersion', 'operandImage'] as const) {
    if (change[field] != null && !ownOperand)
      return {
        field,
        reason:
          `only for AWS/STANDALONE clusters, where the fleet runs the Karpenter operand; on ` +
          `${cluster.platform}/${cluster.topology} ` +
          (cluster.topology === 'HOSTED'
            ? 'HyperShift runs its own'
            : "the driver runs karpenter-provider-cluster-api's image"),
      };
  }
  return undefined;
}

/** The stored desired state a change reads and writes (DesiredState's columns and the NodePools). */
export interface DesiredStateFields {
  enabled: boolean;
  paused: boolean;
  clusterAutoscalerMode: string;
  logLevel: string;
  featureGates: unknown;
  karpenterVersion?: string | null;
  operandImage?: string | null;
  interruptionQueue?: string | null;
  driftPolicy?: string | null;
  webIdentityRoleArn?: string | null;
  allowedInstanceTypes?: string[] | null;
  /** Sorted by name. */
  nodePools: { name: string; spec: unknown }[];
}

/**
 * What `applyDesiredStateChange` would leave, computed in memory (a plan): the same rules —
 * settings replace, featureGates replaces the whole map, a NodePool upsert replaces its spec, a
 * delete removes it — without touching the database. NodePools stay sorted by name.
 */
export function proposeDesiredState<T extends DesiredStateFields>(
  current: T,
  change: DesiredStateChange,
): T {
  const { upsertNodePool, deleteNodePool, featureGates, ...settings } = change;
  const next: T = { ...current, ...settings };
  if (featureGates) next.featureGates = featureGates;
  let pools = current.nodePools.filter((p) => p.name !== upsertNodePool?.name);
  if (upsertNodePool) pools.push({ name: upsertNodePool.name, spec: upsertNodePool.spec });
  if (deleteNodePool) pools = pools.filter((p) => p.name !== deleteNodePool);
  next.nodePools = pools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return next;
}
