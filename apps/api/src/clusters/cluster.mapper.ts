import type { Prisma } from '@fleet/database';
import type {
  Cluster,
  Condition,
  DriftEntry,
  MachineConfigPoolStatus,
  NodeClaimSummary,
} from './models/cluster.model.js';
import type {
  DriftEntry as ReportedDrift,
  NodeClaimSummary as ReportedNodeClaim,
} from '@fleet/contracts';
import { clusterHealthState } from './health-state.js';
import { toGlobalId } from '../common/global-id.js';
import {
  ClusterAutoscalerMode,
  DriftPolicy,
  KarpenterLogLevel,
  Platform,
  Topology,
  type ClusterAutoscalerStatus,
} from './models/cluster.model.js';

export type ClusterRow = Prisma.ClusterGetPayload<{
  include: { desired: true; status: true; nodePools: true };
}>;

type DesiredView = Pick<
  NonNullable<ClusterRow['desired']>,
  | 'generation'
  | 'enabled'
  | 'paused'
  | 'clusterAutoscalerMode'
  | 'logLevel'
  | 'featureGates'
  | 'nodeClassOverrides'
  | 'webIdentityRoleArn'
  | 'allowedInstanceTypes'
  | 'driftPolicy'
>;
type StatusView = Pick<
  NonNullable<ClusterRow['status']>,
  | 'observedGeneration'
  | 'conditions'
  | 'metrics'
  | 'lastReportAt'
  | 'clusterAutoscaler'
  | 'machineConfigPools'
  | 'nodeClaims'
  | 'drift'
  | 'drifted'
  | 'sidecarVersion'
  | 'sidecarContractVersion'
>;

/** What a Cluster is built from: a Prisma row with relations, or one row of the page SQL. */
export type ClusterView = Pick<
  ClusterRow,
  | 'id'
  | 'name'
  | 'topology'
  | 'platform'
  | 'region'
  | 'infraID'
  | 'labels'
  | 'managementCluster'
  | 'hcpNamespace'
  | 'clusterApiName'
  | 'clusterApiNamespace'
  | 'infrastructureProvider'
  | 'createdAt'
> & {
  desired: DesiredView | null;
  status: StatusView | null;
  nodePools: Pick<ClusterRow['nodePools'][number], 'name' | 'spec' | 'updatedAt'>[];
};

interface StoredCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

const toCondition = (c: StoredCondition): Condition => ({
  ...c,
  lastTransitionTime: new Date(c.lastTransitionTime),
});

/** The pools as a report stored them (ClusterStatus and HealthSample keep the same JSON). */
export function toMachineConfigPools(stored: unknown): MachineConfigPoolStatus[] | null {
  const pools = stored as
    | (Omit<MachineConfigPoolStatus, 'conditions' | 'renderedConfig'> & {
        renderedConfig?: string;
        conditions: StoredCondition[];
      })[]
    | null;
  return (
    pools?.map((p) => ({
      ...p,
      renderedConfig: p.renderedConfig ?? null,
      conditions: p.conditions.map(toCondition),
    })) ?? null
  );
}

/** Drift entries as a report stored them. */
export function toDrift(stored: unknown): DriftEntry[] | null {
  const entries = stored as ReportedDrift[] | null;
  return (
    entries?.map((e) => ({
      target: e.target,
      apiVersion: e.apiVersion,
      kind: e.kind,
      namespace: e.namespace ?? null,
      name: e.name,
      change: e.change,
      fields: e.fields.map((f) => ({ path: f.path, manager: f.manager ?? null })),
      moreFields: e.moreFields ?? 0,
      detectedAt: new Date(e.detectedAt),
      correctedAt: e.correctedAt ? new Date(e.correctedAt) : null,
    })) ?? null
  );
}

/** The reported NodeClaims (contract: NodeClaimSummary), with absent fields as nulls. */
export function toNodeClaims(raw: unknown): NodeClaimSummary[] | null {
  if (!Array.isArray(raw)) return null;
  return (raw as ReportedNodeClaim[]).map((c) => ({
    name: c.name,
    nodePool: c.nodePool ?? null,
    nodeName: c.nodeName ?? null,
    instanceType: c.instanceType ?? null,
    zone: c.zone ?? null,
    capacityType: c.capacityType ?? null,
    state: c.state,
    createdAt: new Date(c.createdAt),
    launchFailure: c.launchFailure ?? null,
  }));
}

export function toCluster(row: ClusterView, staleAfterSeconds: number, now = Date.now()): Cluster {
  const desired = row.desired;
  const status = row.status;
  if (!desired || !status) throw new Error(`cluster ${row.id} has no desired state or status row`);
  const conditions = (status.conditions as unknown as StoredCondition[]).map(toCondition);
  return {
    __typename: 'Cluster',
    id: toGlobalId('Cluster', row.id),
    uid: row.id,
    name: row.name,
    topology: row.topology as Topology,
    platform: row.platform as Platform,
    region: row.region,
    infraID: row.infraID,
    labels: row.labels,
    managementCluster: row.managementCluster,
    hcpNamespace: row.hcpNamespace,
    clusterApiName: row.clusterApiName,
    clusterApiNamespace: row.clusterApiNamespace,
    infrastructureProvider: row.infrastructureProvider,
    createdAt: row.createdAt,
    karpenter: {
      generation: desired.generation,
      enabled: desired.enabled,
      paused: desired.paused,
      clusterAutoscalerMode: desired.clusterAutoscalerMode as ClusterAutoscalerMode,
      logLevel: desired.logLevel as KarpenterLogLevel,
      featureGates: desired.featureGates,
      nodeClassOverrides: desired.nodeClassOverrides,
      driftPolicy: desired.driftPolicy as DriftPolicy,
      webIdentityRoleArn: desired.webIdentityRoleArn,
      allowedInstanceTypes: desired.allowedInstanceTypes,
    },
    status: {
      observedGeneration: status.observedGeneration,
      conditions,
      lastReportAt: status.lastReportAt,
      stale: !status.lastReportAt || now - status.lastReportAt.getTime() > staleAfterSeconds * 1000,
      metrics: status.metrics,
      clusterAutoscaler: (status.clusterAutoscaler as ClusterAutoscalerStatus | null) ?? null,
      machineConfigPools: toMachineConfigPools(status.machineConfigPools),
      nodeClaims: toNodeClaims(status.nodeClaims),
      drift: toDrift(status.drift),
      drifted: status.drifted,
      sidecar:
        status.sidecarContractVersion === null
          ? null
          : { version: status.sidecarVersion, contractVersion: status.sidecarContractVersion },
    },
    inSync: status.observedGeneration === desired.generation,
    healthState: clusterHealthState({
      paused: desired.paused,
      stale: !status.lastReportAt || now - status.lastReportAt.getTime() > staleAfterSeconds * 1000,
      observedGeneration: status.observedGeneration,
      generation: desired.generation,
      conditions,
    }),
    generationSync: `applied generation ${status.observedGeneration} of ${desired.generation}`,
    nodePools: row.nodePools.map((p) => ({ name: p.name, spec: p.spec, updatedAt: p.updatedAt })),
  };
}
