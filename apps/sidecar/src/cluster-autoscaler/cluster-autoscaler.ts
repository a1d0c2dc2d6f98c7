import {
  ReportedMigrationProposal,
  type ClusterAutoscalerMode,
  type ClusterAutoscalerState,
  type MigrationProposal,
  compareCodeUnits,
} from '@fleet/contracts';
import type { KubeObject, OpenShiftAutoscalerObjects } from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { isUnknownKind, type ClusterClient } from '../kube/cluster-client.js';
import { CLUSTER_AUTOSCALER, CONFIG_MAP, MACHINE_AUTOSCALER, MACHINE_SET } from '@fleet/contracts';
import type { ClusterAutoscalerControl, ObservedKind } from './node-group-sizes.js';

export const CLUSTER_AUTOSCALER_NAME = 'default';
export const MACHINE_API_NAMESPACE = 'openshift-machine-api';
/**
 * Where the copy of the Cluster Autoscaler objects lives while the fleet has them removed. A
 * ConfigMap, so that it survives sidecar restarts; in openshift-config by default, a namespace
 * every OpenShift cluster has and the fleet never deletes (disabling Karpenter removes
 * openshift-karpenter, which would take the copy with it).
 */
export const BACKUP_CONFIG_MAP_NAME = 'karpenter-fleet-cluster-autoscaler-backup';
export const BACKUP_LABEL = 'fleet.karpenter.sh/cluster-autoscaler-backup';
const KEY_CLUSTER_AUTOSCALER = 'clusterautoscaler.json';
const KEY_MACHINE_AUTOSCALERS = 'machineautoscalers.json';

export interface ClusterAutoscalerOutcome {
  state: ClusterAutoscalerState;
  /** Conditions to report: ClusterAutoscalerDisabled always, ClusterAutoscalerMigration in MIGRATE. */
  conditions: {
    type: string;
    status: 'True' | 'False' | 'Unknown';
    reason: string;
    message: string;
  }[];
  /**
   * While the Cluster Autoscaler is in play (KEEP or MIGRATE, ClusterAutoscaler/default present)
   * and the platform proposes one: NodePools in its place, computed from what observe() read.
   */
  migration?: ReportedMigrationProposal;
}

/** The platform's proposal from OpenShift's Cluster Autoscaler objects (CloudProvider.proposeMigration). */
export type ProposeMigration = (objects: OpenShiftAutoscalerObjects) => MigrationProposal;

interface Backup {
  clusterAutoscaler?: KubeObject;
  machineAutoscalers: KubeObject[];
}

/**
 * What a restore must recreate: the object as its owner wrote it. Server-set metadata (uid,
 * resourceVersion, managedFields, ...) and status go; labels, annotations and spec stay exactly.
 * Finalizers and ownerReferences go too: the cluster-autoscaler-operator adds its own again.
 */
export function portableCopy(object: KubeObject): KubeObject {
  const metadata = object.metadata as KubeObject['metadata'] & Record<string, unknown>;
  const copy: KubeObject = {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      name: metadata.name,
      ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
      ...(metadata.labels && Object.keys(metadata.labels).length > 0
        ? { labels: metadata.labels }
        : {}),
      ...(metadata.annotations && Object.keys(metadata.annotations).length > 0
        ? { annotations: metadata.annotations }
        : {}),
    },
  };
  for (const [key, value] of Object.entries(object)) {
    if (key === 'apiVersion' || key === 'kind' || key === 'metadata' || key === 'status') continue;
    copy[key] = value;
  }
  return copy;
}

/**
 * Switches OpenShift's Cluster Autoscaler off and back on for the fleet. DISABLE keeps an exact
 * copy in a ConfigMap before deleting anything; KEEP recreates what the copy holds and drops it;
 * MIGRATE leaves (or puts back) the Cluster Autoscaler running beside Karpenter and says so.
 */
export class ClusterAutoscalerSwitch implements ClusterAutoscalerControl {
  constructor(
    private readonly cluster: ClusterClient,
    private readonly log: Logger,
    private readonly backupNamespace: string,
    private readonly propose?: ProposeMigration,
  ) {}

  observedKinds(): ObservedKind[] {
    return [
      // The proposal reads the MachineSets the MachineAutoscalers scale: watched like the rest,
      // so it is recomputed only when one of them changed.
      ...(this.propose
        ? [{ kind: MACHINE_SET, target: 'workload' as const, namespace: MACHINE_API_NAMESPACE }]
        : []),
      {
        kind: CLUSTER_AUTOSCALER,
        target: 'workload',
        fieldSelector: `metadata.name=${CLUSTER_AUTOSCALER_NAME}`,
      },
      { kind: MACHINE_AUTOSCALER, target: 'workload', namespace: MACHINE_API_NAMESPACE },
      {
        kind: CONFIG_MAP,
        target: 'workload',
        namespace: this.backupNamespace,
        fieldSelector: `metadata.name=${BACKUP_CONFIG_MAP_NAME}`,
      },
    ];
  }

  async reconcile(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
  ): Promise<ClusterAutoscalerOutcome> {
    if (mode === 'DISABLE') await this.disable();
    else await this.restore();
    return this.observe(mode, karpenterEnabled);
  }

  /** What is on the cluster now, for every report. */
  async observe(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
  ): Promise<ClusterAutoscalerOutcome> {
    const [live, backup] = await Promise.all([this.readLive(), this.readBackup()]);
    const observed = live.clusterAutoscaler ? 'Present' : backup ? 'Removed' : 'Absent';
    const state: ClusterAutoscalerState = {
      mode,
      observed,
      machineAutoscalers: live.machineAutoscalers.length,
    };
    const conditions: ClusterAutoscalerOutcome['conditions'] = [];
    if (observed === 'Removed') {
      conditions.push({
        type: 'ClusterAutoscalerDisabled',
        status: 'True',
        reason: 'DisabledByFleet',
        message: `ClusterAutoscaler/default and ${backup?.machineAutoscalers.length ?? 0} MachineAutoscaler(s) are removed; a copy is kept in ConfigMap ${this.backupNamespace}/${BACKUP_CONFIG_MAP_NAME}`,
      });
    } else {
      conditions.push({
        type: 'ClusterAutoscalerDisabled',
        status: 'False',
        reason: observed === 'Present' ? 'ClusterAutoscalerActive' : 'ClusterAutoscalerAbsent',
        message:
          observed === 'Present'
            ? `ClusterAutoscaler/default is running with ${live.machineAutoscalers.length} MachineAutoscaler(s)`
            : 'this cluster has no ClusterAutoscaler',
      });
    }
    if (mode === 'MIGRATE') {
      const both = karpenterEnabled && observed === 'Present';
      conditions.push({
        type: 'ClusterAutoscalerMigration',
        status: both ? 'True' : 'False',
        reason: both ? 'BothAutoscalersActive' : 'NotBothActive',
        message: both
          ? 'Karpenter and the Cluster Autoscaler both scale this cluster: a migration state; they may fight over the same pending pods, finish by switching to DISABLE or KEEP'
          : 'migration requested, but Karpenter and the Cluster Autoscaler are not both active',
      });
    }
    const migration =
      mode !== 'DISABLE' && live.clusterAutoscaler ? await this.proposal(live) : undefined;
    return { state, conditions, ...(migration ? { migration } : {}) };
  }

  /**
   * The platform's proposal from the objects just read and the MachineSets. A proposal the
   * report contract refuses (over its bounds) or a failure is logged and left out: the report
   * itself must still go.
   */
  private async proposal(live: Backup): Promise<ReportedMigrationProposal | undefined> {
    if (!this.propose) return undefined;
    try {
      let machineSets: KubeObject[] = [];
      try {
        machineSets = await this.cluster.list<KubeObject>(
          MACHINE_SET.apiVersion,
          MACHINE_SET.kind,
          {
            namespace: MACHINE_API_NAMESPACE,
          },
        );
      } catch (err) {
        if (!isUnknownKind(err)) throw err;
      }
      const reported = ReportedMigrationProposal.safeParse({
        proposal: this.propose({
          ...(live.clusterAutoscaler ? { clusterAutoscaler: live.clusterAutoscaler } : {}),
          machineAutoscalers: live.machineAutoscalers,
          machineSets: machineSets.map((o) => ({
            ...o,
            apiVersion: MACHINE_SET.apiVersion,
            kind: MACHINE_SET.kind,
          })),
        }),
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

  private async readLive(): Promise<Backup> {
    let clusterAutoscaler: KubeObject | undefined;
    let machineAutoscalers: KubeObject[] = [];
    try {
      clusterAutoscaler = await this.cluster.read<KubeObject>({
        apiVersion: CLUSTER_AUTOSCALER.apiVersion,
        kind: CLUSTER_AUTOSCALER.kind,
        name: CLUSTER_AUTOSCALER_NAME,
      });
    } catch (err) {
      if (!isUnknownKind(err)) throw err;
    }
    try {
      machineAutoscalers = await this.cluster.list<KubeObject>(
        MACHINE_AUTOSCALER.apiVersion,
        MACHINE_AUTOSCALER.kind,
        { namespace: MACHINE_API_NAMESPACE },
      );
    } catch (err) {
      if (!isUnknownKind(err)) throw err;
    }
    return {
      ...(clusterAutoscaler ? { clusterAutoscaler } : {}),
      machineAutoscalers: machineAutoscalers.map((o) => ({
        ...o,
        apiVersion: MACHINE_AUTOSCALER.apiVersion,
        kind: MACHINE_AUTOSCALER.kind,
      })),
    };
  }

  private async readBackup(): Promise<Backup | undefined> {
    const cm = await this.cluster.read<KubeObject & { data?: Record<string, string> }>({
      apiVersion: CONFIG_MAP.apiVersion,
      kind: CONFIG_MAP.kind,
      name: BACKUP_CONFIG_MAP_NAME,
      namespace: this.backupNamespace,
    });
    if (!cm) return undefined;
    const ca = cm.data?.[KEY_CLUSTER_AUTOSCALER];
    return {
      ...(ca ? { clusterAutoscaler: JSON.parse(ca) as KubeObject } : {}),
      machineAutoscalers: JSON.parse(cm.data?.[KEY_MACHINE_AUTOSCALERS] ?? '[]') as KubeObject[],
    };
  }

  private async disable(): Promise<void> {
    const live = await this.readLive();
    if (!live.clusterAutoscaler && live.machineAutoscalers.length === 0) return;
    // Objects re-created while disabled join the copy; the copy never loses what it holds.
    const previous = await this.readBackup();
    const byName = new Map<string, KubeObject>();
    for (const o of previous?.machineAutoscalers ?? []) byName.set(o.metadata.name, o);
    for (const o of live.machineAutoscalers) byName.set(o.metadata.name, portableCopy(o));
    const clusterAutoscaler = live.clusterAutoscaler
      ? portableCopy(live.clusterAutoscaler)
      : previous?.clusterAutoscaler;
    // The copy is written (server-side apply, so a retry is harmless) before anything is deleted.
    await this.cluster.apply({
      apiVersion: CONFIG_MAP.apiVersion,
      kind: CONFIG_MAP.kind,
      metadata: {
        name: BACKUP_CONFIG_MAP_NAME,
        namespace: this.backupNamespace,
        labels: { [BACKUP_LABEL]: 'true' },
      },
      data: {
        ...(clusterAutoscaler
          ? { [KEY_CLUSTER_AUTOSCALER]: JSON.stringify(clusterAutoscaler) }
          : {}),
        [KEY_MACHINE_AUTOSCALERS]: JSON.stringify(
          [...byName.values()].sort((a, b) => compareCodeUnits(a.metadata.name, b.metadata.name)),
        ),
      },
    });
    for (const o of live.machineAutoscalers) {
      await this.cluster.delete({
        apiVersion: MACHINE_AUTOSCALER.apiVersion,
        kind: MACHINE_AUTOSCALER.kind,
        name: o.metadata.name,
        namespace: MACHINE_API_NAMESPACE,
      });
    }
    if (live.clusterAutoscaler) {
      await this.cluster.delete({
        apiVersion: CLUSTER_AUTOSCALER.apiVersion,
        kind: CLUSTER_AUTOSCALER.kind,
        name: CLUSTER_AUTOSCALER_NAME,
      });
    }
    this.log.info(
      {
        machineAutoscalers: live.machineAutoscalers.length,
        clusterAutoscaler: Boolean(live.clusterAutoscaler),
      },
      'Cluster Autoscaler disabled; copy kept',
    );
  }

  private async restore(): Promise<void> {
    const backup = await this.readBackup();
    if (!backup) return;
    // ClusterAutoscaler first: MachineAutoscalers are inert without it.
    const objects = [
      ...(backup.clusterAutoscaler ? [backup.clusterAutoscaler] : []),
      ...backup.machineAutoscalers,
    ];
    for (const object of objects) {
      const existing = await this.cluster.read({
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: object.metadata.name,
        ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      });
      // Someone recreated it meanwhile: theirs wins, the copy is not forced over it.
      if (existing) continue;
      await this.cluster.create(object);
    }
    await this.cluster.delete({
      apiVersion: CONFIG_MAP.apiVersion,
      kind: CONFIG_MAP.kind,
      name: BACKUP_CONFIG_MAP_NAME,
      namespace: this.backupNamespace,
    });
    this.log.info({ restored: objects.length }, 'Cluster Autoscaler restored from the copy');
  }
}
