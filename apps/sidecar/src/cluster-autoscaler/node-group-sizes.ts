import {
  CONFIG_MAP,
  ReportedMigrationProposal,
  type ClusterAutoscalerMode,
  type ClusterAutoscalerState,
  type ResourceIdentity,
} from '@fleet/contracts';
import {
  type ClusterTarget,
  NODE_GROUP_SIZE_ANNOTATIONS,
  NODE_GROUP_SIZES_BACKUP,
  planNodeGroupSizes,
  proposeClusterApiMigration,
  type KubeObject,
} from '@fleet/cloud-provider';
import {
  CAPI_MACHINE_SET,
  CLUSTER_NAME_LABEL,
  MACHINE_DEPLOYMENT,
  AUTOSCALER_MAX_SIZE,
} from '@fleet/discovery';
import type { Logger } from 'pino';
import type { ClusterClient } from '../kube/cluster-client.js';
import type { ClusterAutoscalerOutcome } from './cluster-autoscaler.js';

/** What the Cluster Autoscaler phase needs of a platform's switch. */
export interface ClusterAutoscalerControl {
  reconcile(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
  ): Promise<ClusterAutoscalerOutcome>;
  observe(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
  ): Promise<ClusterAutoscalerOutcome>;
  /**
   * Everything observe() reads, so the sidecar can watch it and observe again only when one of
   * them changed: at rest, a report costs the API servers nothing but the watches.
   */
  observedKinds(): ObservedKind[];
}

export interface ObservedKind {
  kind: ResourceIdentity;
  target: ClusterTarget;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * The Cluster Autoscaler on Cluster API: it scales the worker MachineDeployments and MachineSets
 * whose max-size annotation is above 0, on the management cluster. The plan
 * (planNodeGroupSizes) is executed here: the exact copy first, then the patches, then the copy's
 * removal, so a crash between two steps never loses a value.
 */
export class NodeGroupSizesSwitch implements ClusterAutoscalerControl {
  constructor(
    private readonly management: ClusterClient,
    private readonly cluster: { namespace: string; clusterName: string },
    private readonly log: Logger,
  ) {}

  observedKinds(): ObservedKind[] {
    const { namespace, clusterName } = this.cluster;
    const labelSelector = `${CLUSTER_NAME_LABEL}=${clusterName}`;
    return [
      { kind: MACHINE_DEPLOYMENT, target: 'management', namespace, labelSelector },
      { kind: CAPI_MACHINE_SET, target: 'management', namespace, labelSelector },
      {
        kind: CONFIG_MAP,
        target: 'management',
        namespace,
        fieldSelector: `metadata.name=${NODE_GROUP_SIZES_BACKUP}`,
      },
    ];
  }

  private async groups(): Promise<KubeObject[]> {
    const selector = `${CLUSTER_NAME_LABEL}=${this.cluster.clusterName}`;
    const out: KubeObject[] = [];
    for (const kind of [MACHINE_DEPLOYMENT, CAPI_MACHINE_SET]) {
      const items = await this.management.list<KubeObject>(kind.apiVersion, kind.kind, {
        namespace: this.cluster.namespace,
        labelSelector: selector,
      });
      out.push(...items.map((o) => ({ ...o, apiVersion: kind.apiVersion, kind: kind.kind })));
    }
    return out;
  }

  private backup(): Promise<KubeObject | undefined> {
    return this.management.read<KubeObject>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: NODE_GROUP_SIZES_BACKUP,
      namespace: this.cluster.namespace,
    });
  }

  async reconcile(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
  ): Promise<ClusterAutoscalerOutcome> {
    const [groups, backup] = await Promise.all([this.groups(), this.backup()]);
    const plan = planNodeGroupSizes({ mode, ...this.cluster, groups, backup });
    if (plan.backup) await this.management.apply(plan.backup);
    for (const p of plan.patches) {
      const kind = p.kind === CAPI_MACHINE_SET.kind ? CAPI_MACHINE_SET : MACHINE_DEPLOYMENT;
      await this.management.mergePatch({
        apiVersion: kind.apiVersion,
        kind: kind.kind,
        metadata: {
          name: p.name,
          namespace: this.cluster.namespace,
          annotations: p.mergePatch.metadata.annotations as Record<string, string>,
        },
      });
    }
    if (plan.backup === null && backup)
      await this.management.delete({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: NODE_GROUP_SIZES_BACKUP,
        namespace: this.cluster.namespace,
      });
    if (plan.patches.length > 0)
      this.log.info(
        { mode, groups: plan.patches.map((p) => `${p.kind}/${p.name}`) },
        'Cluster Autoscaler node-group size annotations changed',
      );
    return this.observe(mode, karpenterEnabled);
  }

  async observe(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
  ): Promise<ClusterAutoscalerOutcome> {
    const [groups, backup] = await Promise.all([this.groups(), this.backup()]);
    const managed = groups.filter(
      (g) => Number(g.metadata.annotations?.[AUTOSCALER_MAX_SIZE] ?? '0') > 0,
    );
    const sized = groups.filter((g) =>
      NODE_GROUP_SIZE_ANNOTATIONS.some((a) => g.metadata.annotations?.[a] !== undefined),
    );
    const observed = managed.length > 0 ? 'Present' : backup ? 'Removed' : 'Absent';
    const state: ClusterAutoscalerState = {
      mode,
      observed,
      machineAutoscalers: sized.length,
      // The group kinds that carry a size annotation now (what the Cluster Autoscaler reads).
      observedKinds: [...new Set(sized.map((g) => g.kind))].sort(),
    };
    const where = `${this.cluster.namespace}`;
    const conditions: ClusterAutoscalerOutcome['conditions'] = [
      observed === 'Removed'
        ? {
            type: 'ClusterAutoscalerDisabled',
            status: 'True',
            reason: 'NodeGroupSizesRemoved',
            message: `the Cluster Autoscaler's node-group size annotations are removed from the worker groups in ${where}; an exact copy is in ConfigMap ${where}/${NODE_GROUP_SIZES_BACKUP}`,
          }
        : {
            type: 'ClusterAutoscalerDisabled',
            status: 'False',
            reason: observed === 'Present' ? 'ClusterAutoscalerActive' : 'ClusterAutoscalerAbsent',
            message:
              observed === 'Present'
                ? `the Cluster Autoscaler manages ${managed.length} worker group(s) in ${where}: ${managed.map((g) => `${g.kind}/${g.metadata.name}`).join(', ')}`
                : `no worker group in ${where} carries a node-group max-size annotation`,
          },
    ];
    if (mode === 'MIGRATE') {
      const both = karpenterEnabled && observed === 'Present';
      conditions.push({
        type: 'ClusterAutoscalerMigration',
        status: both ? 'True' : 'False',
        reason: both ? 'BothAutoscalersActive' : 'NotBothActive',
        message: both
          ? 'Karpenter and the Cluster Autoscaler both scale this cluster: a migration state; finish by switching to DISABLE or KEEP'
          : 'migration requested, but Karpenter and the Cluster Autoscaler are not both active',
      });
    }
    // While the Cluster Autoscaler scales these groups, the NodePools that could replace them:
    // from the groups just read (their scale-from-zero annotations), no further request.
    const migration =
      mode !== 'DISABLE' && observed === 'Present' ? this.proposal(groups) : undefined;
    return { state, conditions, ...(migration ? { migration } : {}) };
  }

  private proposal(groups: KubeObject[]): ReportedMigrationProposal | undefined {
    try {
      const reported = ReportedMigrationProposal.safeParse({
        proposal: proposeClusterApiMigration(groups),
        computedAt: new Date().toISOString(),
      });
      if (reported.success) return reported.data;
      this.log.error(
        {
          issues: reported.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`),
        },
        'migration proposal left out of the report: it does not fit the report contract',
      );
    } catch (err) {
      this.log.error({ err: String(err) }, 'migration proposal failed');
    }
    return undefined;
  }
}
