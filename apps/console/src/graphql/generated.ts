/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> =
  T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** PENDING: the sidecar has not answered yet. PLANNED: every object was dry-run (objects may carry errors). NOT_PLANNED: not sent, with the reason (Stale, Paused, UnsupportedForTopology, UnsupportedChange, SidecarOutdated, DesiredStateMoved). FAILED: the sidecar could not plan (its reason), or no answer before the plan expired (NoAnswer). */
export type ChangePlanClusterState = 'FAILED' | 'NOT_PLANNED' | 'PENDING' | 'PLANNED';

/** KEEP the Cluster Autoscaler, DISABLE it (kept copy restored on KEEP), or run both as a visible MIGRATE state. */
export type ClusterAutoscalerMode = 'DISABLE' | 'KEEP' | 'MIGRATE';

export type ClusterFilter = {
  condition?: ConditionFilter | null | undefined;
  /** The cluster reports Drifted=True: objects the fleet manages were hand-edited. */
  drifted?: boolean | null | undefined;
  /** observedGeneration == generation. */
  inSync?: boolean | null | undefined;
  karpenterEnabled?: boolean | null | undefined;
  /** Kubernetes label selector, e.g. "env=prod,region in (us-east-1,eu-west-1)". */
  labelSelector?: string | null | undefined;
  /** Clusters served from this management cluster (hosted control planes, Cluster API clusters with a separate management cluster), by its registered name. */
  managementCluster?: string | null | undefined;
  /** Substring of the cluster name. */
  nameContains?: string | null | undefined;
  platform?: Platform | null | undefined;
  stale?: boolean | null | undefined;
  topology?: Topology | null | undefined;
};

/** One state per cluster, the first that holds in this order: PAUSED (the fleet does not reconcile it), STALE (no report for longer than the staleness threshold: what it last said is old news), DEGRADED (Degraded=True), PROGRESSING (the sidecar has not applied the latest generation yet, or reports Progressing=True), HEALTHY. fleetSummary.byHealth counts the same states. */
export type ClusterHealthState = 'DEGRADED' | 'HEALTHY' | 'PAUSED' | 'PROGRESSING' | 'STALE';

export type ClusterOrder = {
  direction?: OrderDirection;
  field: ClusterOrderField;
};

export type ClusterOrderField = 'CREATED_AT' | 'LAST_REPORT' | 'NAME';

export type ConditionFilter = {
  reason?: string | null | undefined;
  status?: string | null | undefined;
  type: string;
};

export type CreateApiTokenInput = {
  expiresAt?: string | null | undefined;
  labelSelector?: string | null | undefined;
  name: string;
  role: Role;
};

/** What the sidecar does when someone else changes a field the fleet manages or deletes an object it owns: CORRECT puts it back at once and reports the correction (the default); REPORT leaves it in place and reports Drifted=True. */
export type DriftPolicy = 'CORRECT' | 'REPORT';

export type KarpenterLogLevel = 'debug' | 'error' | 'info';

export type OrderDirection = 'ASC' | 'DESC';

/** One cluster (clusterId) or a label selector, and the change. */
export type PlanChangeInput = {
  /** What setKarpenter would be given (expectedGeneration is not taken here). */
  change?: SetKarpenterInput | null | undefined;
  clusterId?: string | number | null | undefined;
  /** A NodePool to delete. */
  deleteNodePool?: string | null | undefined;
  /** Kubernetes label selector; within the token scope. */
  labelSelector?: string | null | undefined;
  upsertNodePool?: PlanNodePoolInput | null | undefined;
};

export type PlanNodePoolInput = {
  name: string;
  /** karpenter.sh/v1 NodePool spec; the plan shows each cluster's API server's verdict, applyPlan checks it against the CRD. */
  spec: unknown;
};

export type PlannedAction = 'CHANGED' | 'CREATED' | 'DELETED' | 'UNCHANGED';

export type Platform = 'AWS' | 'AZURE' | 'CAPI';

export type RegisterClusterInput = {
  /** CAPI: name of the Cluster (cluster.x-k8s.io) on the management cluster; on OpenShift, the infrastructure name. */
  clusterApiName?: string | null | undefined;
  /** CAPI: namespace of the Cluster on the management cluster (default openshift-cluster-api, OpenShift’s own Cluster API). */
  clusterApiNamespace?: string | null | undefined;
  hcpNamespace?: string | null | undefined;
  infraID?: string | null | undefined;
  /** CAPI: infrastructure provider of the Cluster (aws); default aws. */
  infrastructureProvider?: string | null | undefined;
  /** Kubernetes-style labels. */
  labels?: unknown;
  managementCluster?: string | null | undefined;
  /** DNS-1123 label, unique in the fleet. */
  name: string;
  platform: Platform;
  region: string;
  topology: Topology;
};

/** VIEWER reads; OPERATOR also changes clusters; ADMIN also manages tokens and registrations. */
export type Role = 'ADMIN' | 'OPERATOR' | 'VIEWER';

/** The change applied to every cluster; give at least one field, at most one NodePool operation. */
export type RolloutChangeInput = {
  clusterAutoscalerMode?: ClusterAutoscalerMode | null | undefined;
  /** NodePool name; clusters without it are SKIPPED. */
  deleteNodePool?: string | null | undefined;
  enabled?: boolean | null | undefined;
  /** Replaces the feature gate map. */
  featureGates?: unknown;
  /** Upgrade (or roll back) Karpenter: a release this fleet ships CRDs for. */
  karpenterVersion?: string | null | undefined;
  logLevel?: KarpenterLogLevel | null | undefined;
  /** Operand image by digest. */
  operandImage?: string | null | undefined;
  upsertNodePool?: RolloutNodePoolInput | null | undefined;
};

/** PENDING: not changed yet. APPLYING: changed (generation bumped), waiting to report that generation healthy for minHealthySeconds. HEALTHY: did so. FAILED: Degraded or Stale after the change, or not healthy by the wave deadline. SKIPPED: not changed (rollout aborted, cluster deregistered or no longer selected, NodePool to delete absent). */
export type RolloutClusterState = 'APPLYING' | 'FAILED' | 'HEALTHY' | 'PENDING' | 'SKIPPED';

export type RolloutNodePoolInput = {
  name: string;
  /** karpenter.sh/v1 NodePool spec, checked against the real CRD. */
  spec: unknown;
};

/** RUNNING: waves advance. WAITING_APPROVAL: the current wave succeeded and its stage has an approval gate; health is still judged, the next wave starts on approveRolloutStage. PAUSED: by pauseRollout; nothing advances until resumeRollout. FAILED: stopped by itself (more than maxFailures clusters Degraded, Stale or past the wave timeout; see reason); resumeRollout watches the failed clusters again and continues. COMPLETED: every wave done. ABORTED: by abortRollout; clusters already changed keep the change (nothing is reverted), the rest are SKIPPED. */
export type RolloutState =
  'ABORTED' | 'COMPLETED' | 'FAILED' | 'PAUSED' | 'RUNNING' | 'WAITING_APPROVAL';

export type RolloutStrategyInput = {
  /** Failed clusters tolerated before the rollout stops (default 0). */
  maxFailures?: number | null | undefined;
  /** Health gate: a changed cluster reporting more NodeClaims whose Launched condition is False fails (NodeClaimLaunchFailures). Default off. */
  maxNodeClaimLaunchFailures?: number | null | undefined;
  /** Health gate: a changed cluster with an unschedulable pod pending longer than this (1–604800 s) fails (PodsPendingTooLong). Default off. */
  maxPendingPodSeconds?: number | null | undefined;
  /** How long each cluster must stay healthy (0–86400, default 60). */
  minHealthySeconds?: number | null | undefined;
  /** Per wave; must exceed minHealthySeconds (default 1800). */
  waveTimeoutSeconds?: number | null | undefined;
  /** Default: 1 cluster, then 10 %, 50 %, 100 %. Steps that add no cluster are dropped; the rest of the set always forms a last wave. */
  waves?: Array<RolloutWaveInput> | null | undefined;
};

/** A cumulative share of the selected clusters: exactly one of percent (1–100) or count. */
export type RolloutWaveInput = {
  count?: number | null | undefined;
  percent?: number | null | undefined;
};

export type RolloutWaveState = 'FAILED' | 'PENDING' | 'RUNNING' | 'SKIPPED' | 'SUCCEEDED';

/** Fields left out keep their current value. */
export type SetKarpenterInput = {
  /** CAPI: instance types the fleet renders MachineDeployments for (one per type and failure domain); an empty list is the worker template’s type. */
  allowedInstanceTypes?: Array<string> | null | undefined;
  clusterAutoscalerMode?: ClusterAutoscalerMode | null | undefined;
  /** CORRECT: hand edits of what the fleet manages are put back at once; REPORT: left in place and reported. */
  driftPolicy?: DriftPolicy | null | undefined;
  enabled?: boolean | null | undefined;
  /** Optimistic concurrency: fail with CONFLICT unless generation is still this. */
  expectedGeneration?: number | null | undefined;
  featureGates?: unknown;
  /** SQS queue Karpenter reads Spot interruption events from. */
  interruptionQueue?: string | null | undefined;
  /** Karpenter release for this cluster (one this fleet ships CRDs for, e.g. 1.14.1); overrides the fleet default. */
  karpenterVersion?: string | null | undefined;
  logLevel?: KarpenterLogLevel | null | undefined;
  /** Operand image by digest (registry/repository@sha256:…), e.g. a mirror’s copy. */
  operandImage?: string | null | undefined;
  paused?: boolean | null | undefined;
  /** IAM role the operand assumes with its service-account token on a Cloud Credential Operator Manual/STS cluster (arn:aws:iam::<account>:role/<name>). */
  webIdentityRoleArn?: string | null | undefined;
};

export type Topology = 'HOSTED' | 'STANDALONE';

export type UpsertNodePoolInput = {
  expectedGeneration?: number | null | undefined;
  name: string;
  /** karpenter.sh/v1 NodePool spec. */
  spec: unknown;
};

export type ViewerQueryVariables = Exact<{ [key: string]: never }>;

export type ViewerQuery = {
  viewer: { name: string; role: Role; scoped: boolean; session: boolean };
};

export type SignOutMutationVariables = Exact<{ [key: string]: never }>;

export type SignOutMutation = { signOut: boolean };

export type SummaryFieldsFragment = {
  clusters: number;
  inSync: number;
  stale: number;
  paused: number;
  karpenterEnabled: number;
  clusterAutoscalerDisabled: number;
  byHealth: {
    healthy: number;
    progressing: number;
    degraded: number;
    stale: number;
    paused: number;
  };
  byPlatform: Array<{ value: string; count: number }>;
  byTopology: Array<{ value: string; count: number }>;
  byCondition: Array<{ type: string; status: string; reason: string; count: number }>;
};

export type FleetSummaryQueryVariables = Exact<{ [key: string]: never }>;

export type FleetSummaryQuery = {
  fleetSummary: {
    clusters: number;
    inSync: number;
    stale: number;
    paused: number;
    karpenterEnabled: number;
    clusterAutoscalerDisabled: number;
    byHealth: {
      healthy: number;
      progressing: number;
      degraded: number;
      stale: number;
      paused: number;
    };
    byPlatform: Array<{ value: string; count: number }>;
    byTopology: Array<{ value: string; count: number }>;
    byCondition: Array<{ type: string; status: string; reason: string; count: number }>;
  };
};

export type FleetSummaryChangedSubscriptionVariables = Exact<{ [key: string]: never }>;

export type FleetSummaryChangedSubscription = {
  fleetSummaryChanged: {
    clusters: number;
    inSync: number;
    stale: number;
    paused: number;
    karpenterEnabled: number;
    clusterAutoscalerDisabled: number;
    byHealth: {
      healthy: number;
      progressing: number;
      degraded: number;
      stale: number;
      paused: number;
    };
    byPlatform: Array<{ value: string; count: number }>;
    byTopology: Array<{ value: string; count: number }>;
    byCondition: Array<{ type: string; status: string; reason: string; count: number }>;
  };
};

export type ClusterRowFragment = {
  id: string;
  name: string;
  createdAt: string;
  platform: Platform;
  topology: Topology;
  region: string;
  labels: unknown;
  inSync: boolean;
  healthState: ClusterHealthState;
  generationSync: string;
  karpenter: {
    enabled: boolean;
    clusterAutoscalerMode: ClusterAutoscalerMode;
    generation: number;
    paused: boolean;
  };
  status: {
    observedGeneration: number;
    stale: boolean;
    lastReportAt: string | null;
    conditions: Array<{ type: string; status: string; reason: string; message: string }>;
  };
};

export type ClustersQueryVariables = Exact<{
  filter?: ClusterFilter | null | undefined;
  orderBy?: ClusterOrder | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
}>;

export type ClustersQuery = {
  clusters: {
    totalCount: number;
    totalCountIsExact: boolean;
    pageInfo: {
      hasNextPage: boolean;
      hasPreviousPage: boolean;
      startCursor: string | null;
      endCursor: string | null;
    };
    nodes: Array<{
      id: string;
      name: string;
      createdAt: string;
      platform: Platform;
      topology: Topology;
      region: string;
      labels: unknown;
      inSync: boolean;
      healthState: ClusterHealthState;
      generationSync: string;
      karpenter: {
        enabled: boolean;
        clusterAutoscalerMode: ClusterAutoscalerMode;
        generation: number;
        paused: boolean;
      };
      status: {
        observedGeneration: number;
        stale: boolean;
        lastReportAt: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      };
    }>;
  };
};

export type ClusterChangedSubscriptionVariables = Exact<{
  filter?: ClusterFilter | null | undefined;
}>;

export type ClusterChangedSubscription = {
  clusterChanged: {
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      conditions: Array<{ type: string; status: string; reason: string; message: string }>;
    };
  };
};

export type ClusterDetailFragment = {
  uid: string;
  infraID: string | null;
  managementCluster: string | null;
  clusterApiName: string | null;
  clusterApiNamespace: string | null;
  infrastructureProvider: string | null;
  id: string;
  name: string;
  createdAt: string;
  platform: Platform;
  topology: Topology;
  region: string;
  labels: unknown;
  inSync: boolean;
  healthState: ClusterHealthState;
  generationSync: string;
  karpenter: {
    logLevel: KarpenterLogLevel;
    featureGates: unknown;
    allowedInstanceTypes: Array<string>;
    driftPolicy: DriftPolicy;
    enabled: boolean;
    clusterAutoscalerMode: ClusterAutoscalerMode;
    generation: number;
    paused: boolean;
  };
  status: {
    drifted: boolean;
    observedGeneration: number;
    stale: boolean;
    lastReportAt: string | null;
    drift: Array<{
      target: string;
      apiVersion: string;
      kind: string;
      namespace: string | null;
      name: string;
      change: string;
      moreFields: number;
      detectedAt: string;
      correctedAt: string | null;
      fields: Array<{ path: string; manager: string | null }>;
    }> | null;
    clusterAutoscaler: {
      mode: ClusterAutoscalerMode;
      observed: string;
      machineAutoscalers: number;
    } | null;
    machineConfigPools: Array<{
      nodeClass: string;
      name: string;
      machineCount: number;
      updatedMachineCount: number;
      updatingMachineCount: number;
      degradedMachineCount: number;
      renderedConfig: string | null;
      conditions: Array<{ type: string; status: string; reason: string; message: string }>;
    }> | null;
    conditions: Array<{
      lastTransitionTime: string;
      type: string;
      status: string;
      reason: string;
      message: string;
    }>;
  };
  nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
};

export type ClusterQueryVariables = Exact<{
  id: string | number;
}>;

export type ClusterQuery = {
  cluster: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type ClusterDetailChangedSubscriptionVariables = Exact<{ [key: string]: never }>;

export type ClusterDetailChangedSubscription = {
  clusterChanged: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type SetKarpenterMutationVariables = Exact<{
  clusterId: string | number;
  input: SetKarpenterInput;
}>;

export type SetKarpenterMutation = {
  setKarpenter: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type UpsertNodePoolMutationVariables = Exact<{
  clusterId: string | number;
  input: UpsertNodePoolInput;
}>;

export type UpsertNodePoolMutation = {
  upsertNodePool: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type DeleteNodePoolMutationVariables = Exact<{
  clusterId: string | number;
  name: string;
  expectedGeneration?: number | null | undefined;
}>;

export type DeleteNodePoolMutation = {
  deleteNodePool: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type PauseClusterMutationVariables = Exact<{
  clusterId: string | number;
}>;

export type PauseClusterMutation = {
  pauseCluster: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type ResumeClusterMutationVariables = Exact<{
  clusterId: string | number;
}>;

export type ResumeClusterMutation = {
  resumeCluster: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type ReconcileClusterMutationVariables = Exact<{
  clusterId: string | number;
}>;

export type ReconcileClusterMutation = {
  reconcileCluster: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type RolloutSummaryFragment = {
  id: string;
  state: RolloutState;
  reason: string | null;
  selector: string;
  change: unknown;
  createdAt: string;
  createdBy: string;
  finishedAt: string | null;
  currentWave: number;
  waitingStage: number | null;
  counts: {
    total: number;
    pending: number;
    applying: number;
    healthy: number;
    failed: number;
    skipped: number;
  };
};

export type RolloutDetailFragment = {
  updatedAt: string;
  id: string;
  state: RolloutState;
  reason: string | null;
  selector: string;
  change: unknown;
  createdAt: string;
  createdBy: string;
  finishedAt: string | null;
  currentWave: number;
  waitingStage: number | null;
  strategy: {
    name: string | null;
    waves: unknown;
    minHealthySeconds: number;
    maxFailures: number;
    waveTimeoutSeconds: number;
  };
  waves: Array<{
    index: number;
    state: RolloutWaveState;
    startedAt: string | null;
    finishedAt: string | null;
    deadlineAt: string | null;
    minHealthySeconds: number;
    approval: boolean;
    approvedBy: string | null;
    approvedAt: string | null;
    pauseSeconds: number;
    resumeAt: string | null;
    counts: { total: number; healthy: number; failed: number };
    clusters: Array<{
      clusterId: string;
      clusterName: string;
      state: RolloutClusterState;
      generation: number | null;
      reason: string | null;
      appliedAt: string | null;
    }>;
  }>;
  counts: {
    total: number;
    pending: number;
    applying: number;
    healthy: number;
    failed: number;
    skipped: number;
  };
};

export type RolloutsQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  state?: RolloutState | null | undefined;
}>;

export type RolloutsQuery = {
  rollouts: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    nodes: Array<{
      id: string;
      state: RolloutState;
      reason: string | null;
      selector: string;
      change: unknown;
      createdAt: string;
      createdBy: string;
      finishedAt: string | null;
      currentWave: number;
      waitingStage: number | null;
      counts: {
        total: number;
        pending: number;
        applying: number;
        healthy: number;
        failed: number;
        skipped: number;
      };
    }>;
  };
};

export type RolloutQueryVariables = Exact<{
  id: string | number;
}>;

export type RolloutQuery = {
  rollout: {
    updatedAt: string;
    id: string;
    state: RolloutState;
    reason: string | null;
    selector: string;
    change: unknown;
    createdAt: string;
    createdBy: string;
    finishedAt: string | null;
    currentWave: number;
    waitingStage: number | null;
    strategy: {
      name: string | null;
      waves: unknown;
      minHealthySeconds: number;
      maxFailures: number;
      waveTimeoutSeconds: number;
    };
    waves: Array<{
      index: number;
      state: RolloutWaveState;
      startedAt: string | null;
      finishedAt: string | null;
      deadlineAt: string | null;
      minHealthySeconds: number;
      approval: boolean;
      approvedBy: string | null;
      approvedAt: string | null;
      pauseSeconds: number;
      resumeAt: string | null;
      counts: { total: number; healthy: number; failed: number };
      clusters: Array<{
        clusterId: string;
        clusterName: string;
        state: RolloutClusterState;
        generation: number | null;
        reason: string | null;
        appliedAt: string | null;
      }>;
    }>;
    counts: {
      total: number;
      pending: number;
      applying: number;
      healthy: number;
      failed: number;
      skipped: number;
    };
  };
};

export type RolloutChangedSubscriptionVariables = Exact<{
  id: string | number;
}>;

export type RolloutChangedSubscription = {
  rolloutChanged: {
    updatedAt: string;
    id: string;
    state: RolloutState;
    reason: string | null;
    selector: string;
    change: unknown;
    createdAt: string;
    createdBy: string;
    finishedAt: string | null;
    currentWave: number;
    waitingStage: number | null;
    strategy: {
      name: string | null;
      waves: unknown;
      minHealthySeconds: number;
      maxFailures: number;
      waveTimeoutSeconds: number;
    };
    waves: Array<{
      index: number;
      state: RolloutWaveState;
      startedAt: string | null;
      finishedAt: string | null;
      deadlineAt: string | null;
      minHealthySeconds: number;
      approval: boolean;
      approvedBy: string | null;
      approvedAt: string | null;
      pauseSeconds: number;
      resumeAt: string | null;
      counts: { total: number; healthy: number; failed: number };
      clusters: Array<{
        clusterId: string;
        clusterName: string;
        state: RolloutClusterState;
        generation: number | null;
        reason: string | null;
        appliedAt: string | null;
      }>;
    }>;
    counts: {
      total: number;
      pending: number;
      applying: number;
      healthy: number;
      failed: number;
      skipped: number;
    };
  };
};

export type RolloutPreviewQueryVariables = Exact<{
  filter?: ClusterFilter | null | undefined;
  first?: number | null | undefined;
}>;

export type RolloutPreviewQuery = {
  clusters: {
    totalCount: number;
    totalCountIsExact: boolean;
    nodes: Array<{ id: string; name: string }>;
  };
};

export type StartRolloutMutationVariables = Exact<{
  selector: string;
  change: RolloutChangeInput;
  strategy?: RolloutStrategyInput | null | undefined;
  strategyName?: string | null | undefined;
  clusterIds?: Array<string | number> | string | number | null | undefined;
}>;

export type StartRolloutMutation = {
  startRollout: {
    updatedAt: string;
    id: string;
    state: RolloutState;
    reason: string | null;
    selector: string;
    change: unknown;
    createdAt: string;
    createdBy: string;
    finishedAt: string | null;
    currentWave: number;
    waitingStage: number | null;
    strategy: {
      name: string | null;
      waves: unknown;
      minHealthySeconds: number;
      maxFailures: number;
      waveTimeoutSeconds: number;
    };
    waves: Array<{
      index: number;
      state: RolloutWaveState;
      startedAt: string | null;
      finishedAt: string | null;
      deadlineAt: string | null;
      minHealthySeconds: number;
      approval: boolean;
      approvedBy: string | null;
      approvedAt: string | null;
      pauseSeconds: number;
      resumeAt: string | null;
      counts: { total: number; healthy: number; failed: number };
      clusters: Array<{
        clusterId: string;
        clusterName: string;
        state: RolloutClusterState;
        generation: number | null;
        reason: string | null;
        appliedAt: string | null;
      }>;
    }>;
    counts: {
      total: number;
      pending: number;
      applying: number;
      healthy: number;
      failed: number;
      skipped: number;
    };
  };
};

export type PauseRolloutMutationVariables = Exact<{
  id: string | number;
}>;

export type PauseRolloutMutation = {
  pauseRollout: {
    updatedAt: string;
    id: string;
    state: RolloutState;
    reason: string | null;
    selector: string;
    change: unknown;
    createdAt: string;
    createdBy: string;
    finishedAt: string | null;
    currentWave: number;
    waitingStage: number | null;
    strategy: {
      name: string | null;
      waves: unknown;
      minHealthySeconds: number;
      maxFailures: number;
      waveTimeoutSeconds: number;
    };
    waves: Array<{
      index: number;
      state: RolloutWaveState;
      startedAt: string | null;
      finishedAt: string | null;
      deadlineAt: string | null;
      minHealthySeconds: number;
      approval: boolean;
      approvedBy: string | null;
      approvedAt: string | null;
      pauseSeconds: number;
      resumeAt: string | null;
      counts: { total: number; healthy: number; failed: number };
      clusters: Array<{
        clusterId: string;
        clusterName: string;
        state: RolloutClusterState;
        generation: number | null;
        reason: string | null;
        appliedAt: string | null;
      }>;
    }>;
    counts: {
      total: number;
      pending: number;
      applying: number;
      healthy: number;
      failed: number;
      skipped: number;
    };
  };
};

export type ResumeRolloutMutationVariables = Exact<{
  id: string | number;
}>;

export type ResumeRolloutMutation = {
  resumeRollout: {
    updatedAt: string;
    id: string;
    state: RolloutState;
    reason: string | null;
    selector: string;
    change: unknown;
    createdAt: string;
    createdBy: string;
    finishedAt: string | null;
    currentWave: number;
    waitingStage: number | null;
    strategy: {
      name: string | null;
      waves: unknown;
      minHealthySeconds: number;
      maxFailures: number;
      waveTimeoutSeconds: number;
    };
    waves: Array<{
      index: number;
      state: RolloutWaveState;
      startedAt: string | null;
      finishedAt: string | null;
      deadlineAt: string | null;
      minHealthySeconds: number;
      approval: boolean;
      approvedBy: string | null;
      approvedAt: string | null;
      pauseSeconds: number;
      resumeAt: string | null;
      counts: { total: number; healthy: number; failed: number };
      clusters: Array<{
        clusterId: string;
        clusterName: string;
        state: RolloutClusterState;
        generation: number | null;
        reason: string | null;
        appliedAt: string | null;
      }>;
    }>;
    counts: {
      total: number;
      pending: number;
      applying: number;
      healthy: number;
      failed: number;
      skipped: number;
    };
  };
};

export type AbortRolloutMutationVariables = Exact<{
  id: string | number;
  reason?: string | null | undefined;
}>;

export type AbortRolloutMutation = {
  abortRollout: {
    updatedAt: string;
    id: string;
    state: RolloutState;
    reason: string | null;
    selector: string;
    change: unknown;
    createdAt: string;
    createdBy: string;
    finishedAt: string | null;
    currentWave: number;
    waitingStage: number | null;
    strategy: {
      name: string | null;
      waves: unknown;
      minHealthySeconds: number;
      maxFailures: number;
      waveTimeoutSeconds: number;
    };
    waves: Array<{
      index: number;
      state: RolloutWaveState;
      startedAt: string | null;
      finishedAt: string | null;
      deadlineAt: string | null;
      minHealthySeconds: number;
      approval: boolean;
      approvedBy: string | null;
      approvedAt: string | null;
      pauseSeconds: number;
      resumeAt: string | null;
      counts: { total: number; healthy: number; failed: number };
      clusters: Array<{
        clusterId: string;
        clusterName: string;
        state: RolloutClusterState;
        generation: number | null;
        reason: string | null;
        appliedAt: string | null;
      }>;
    }>;
    counts: {
      total: number;
      pending: number;
      applying: number;
      healthy: number;
      failed: number;
      skipped: number;
    };
  };
};

export type ApproveRolloutStageMutationVariables = Exact<{
  id: string | number;
  stage: number;
}>;

export type ApproveRolloutStageMutation = {
  approveRolloutStage: {
    updatedAt: string;
    id: string;
    state: RolloutState;
    reason: string | null;
    selector: string;
    change: unknown;
    createdAt: string;
    createdBy: string;
    finishedAt: string | null;
    currentWave: number;
    waitingStage: number | null;
    strategy: {
      name: string | null;
      waves: unknown;
      minHealthySeconds: number;
      maxFailures: number;
      waveTimeoutSeconds: number;
    };
    waves: Array<{
      index: number;
      state: RolloutWaveState;
      startedAt: string | null;
      finishedAt: string | null;
      deadlineAt: string | null;
      minHealthySeconds: number;
      approval: boolean;
      approvedBy: string | null;
      approvedAt: string | null;
      pauseSeconds: number;
      resumeAt: string | null;
      counts: { total: number; healthy: number; failed: number };
      clusters: Array<{
        clusterId: string;
        clusterName: string;
        state: RolloutClusterState;
        generation: number | null;
        reason: string | null;
        appliedAt: string | null;
      }>;
    }>;
    counts: {
      total: number;
      pending: number;
      applying: number;
      healthy: number;
      failed: number;
      skipped: number;
    };
  };
};

export type RolloutStrategiesQueryVariables = Exact<{ [key: string]: never }>;

export type RolloutStrategiesQuery = {
  rolloutStrategies: Array<{
    name: string;
    maxFailures: number;
    waveTimeoutSeconds: number;
    maxPendingPodSeconds: number | null;
    maxNodeClaimLaunchFailures: number | null;
    updatedAt: string;
    createdBy: string;
    stages: Array<{
      selector: string | null;
      percent: number | null;
      count: number | null;
      minHealthySeconds: number;
      pauseSeconds: number;
      approval: boolean;
    }>;
  }>;
};

export type ApiTokenFieldsFragment = {
  id: string;
  name: string;
  role: Role;
  labelSelector: string | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

export type ApiTokensQueryVariables = Exact<{ [key: string]: never }>;

export type ApiTokensQuery = {
  apiTokens: Array<{
    id: string;
    name: string;
    role: Role;
    labelSelector: string | null;
    createdAt: string;
    expiresAt: string | null;
    lastUsedAt: string | null;
    revokedAt: string | null;
  }>;
};

export type CreateApiTokenMutationVariables = Exact<{
  input: CreateApiTokenInput;
}>;

export type CreateApiTokenMutation = {
  createApiToken: {
    secret: string;
    token: {
      id: string;
      name: string;
      role: Role;
      labelSelector: string | null;
      createdAt: string;
      expiresAt: string | null;
      lastUsedAt: string | null;
      revokedAt: string | null;
    };
  };
};

export type RevokeApiTokenMutationVariables = Exact<{
  id: string | number;
}>;

export type RevokeApiTokenMutation = {
  revokeApiToken: {
    id: string;
    name: string;
    role: Role;
    labelSelector: string | null;
    createdAt: string;
    expiresAt: string | null;
    lastUsedAt: string | null;
    revokedAt: string | null;
  };
};

export type RegisterClusterMutationVariables = Exact<{
  input: RegisterClusterInput;
}>;

export type RegisterClusterMutation = {
  registerCluster: { bootstrapManifest: string; cluster: { id: string; name: string } };
};

export type DeadLetterFieldsFragment = {
  id: string;
  queue: string;
  name: string;
  jobId: string;
  failedReason: string;
  failedAt: string;
  attempts: number;
  attemptsMade: number;
  data: unknown;
};

export type DeadLettersQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;

export type DeadLettersQuery = {
  deadLetters: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    nodes: Array<{
      id: string;
      queue: string;
      name: string;
      jobId: string;
      failedReason: string;
      failedAt: string;
      attempts: number;
      attemptsMade: number;
      data: unknown;
    }>;
  };
};

export type RedriveDeadLetterMutationVariables = Exact<{
  id: string | number;
}>;

export type RedriveDeadLetterMutation = { redriveDeadLetter: { id: string } };

export type RedriveAllDeadLettersMutationVariables = Exact<{ [key: string]: never }>;

export type RedriveAllDeadLettersMutation = { redriveAllDeadLetters: number };

export type PlanClusterFieldsFragment = {
  clusterId: string;
  clusterName: string;
  generation: number;
  state: ChangePlanClusterState;
  reason: string | null;
  message: string | null;
  objects: Array<{
    action: PlannedAction;
    kind: string;
    name: string;
    namespace: string | null;
    target: string;
    moreFields: number;
    diff: Array<{ path: string; before: unknown; after: unknown }>;
    errors: Array<{ field: string; message: string; reason: string | null }>;
  }>;
};

export type PlanChangeMutationVariables = Exact<{
  input: PlanChangeInput;
}>;

export type PlanChangeMutation = {
  planChange: {
    id: string;
    expiresAt: string;
    clusters: {
      nodes: Array<{
        clusterId: string;
        clusterName: string;
        generation: number;
        state: ChangePlanClusterState;
        reason: string | null;
        message: string | null;
        objects: Array<{
          action: PlannedAction;
          kind: string;
          name: string;
          namespace: string | null;
          target: string;
          moreFields: number;
          diff: Array<{ path: string; before: unknown; after: unknown }>;
          errors: Array<{ field: string; message: string; reason: string | null }>;
        }>;
      }>;
    };
  };
};

export type ChangePlanQueryVariables = Exact<{
  id: string | number;
}>;

export type ChangePlanQuery = {
  changePlan: {
    id: string;
    expired: boolean;
    appliedAt: string | null;
    clusters: {
      nodes: Array<{
        clusterId: string;
        clusterName: string;
        generation: number;
        state: ChangePlanClusterState;
        reason: string | null;
        message: string | null;
        objects: Array<{
          action: PlannedAction;
          kind: string;
          name: string;
          namespace: string | null;
          target: string;
          moreFields: number;
          diff: Array<{ path: string; before: unknown; after: unknown }>;
          errors: Array<{ field: string; message: string; reason: string | null }>;
        }>;
      }>;
    };
  };
};

export type ApplyPlanMutationVariables = Exact<{
  id: string | number;
}>;

export type ApplyPlanMutation = {
  applyPlan: Array<{
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  }>;
};

export type MigrationPlanQueryVariables = Exact<{
  clusterId: string | number;
}>;

export type MigrationPlanQuery = {
  migrationPlan: {
    clusterId: string;
    generation: number;
    reason: string | null;
    plan: {
      computedAt: string;
      explanations: Array<string>;
      nodeClassExplanations: Array<string>;
      nodeClassOverrides: unknown;
      observedGeneration: number;
      nodePools: Array<{
        name: string;
        replaces: Array<string>;
        explanations: Array<string>;
        spec: unknown;
      }>;
      notExpressible: Array<{ object: string; what: string; reason: string }>;
    } | null;
  };
};

export type ApplyMigrationPlanMutationVariables = Exact<{
  clusterId: string | number;
  expectedGeneration: number;
}>;

export type ApplyMigrationPlanMutation = {
  applyMigrationPlan: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
  };
};

export type ProfileRowFragment = {
  uid: string;
  name: string;
  selector: string;
  priority: number;
  revision: number;
  deleting: boolean;
  boundClusters: number;
  currentClusters: number;
  updatedAt: string;
};

export type ProfilesQueryVariables = Exact<{ [key: string]: never }>;

export type ProfilesQuery = {
  profiles: Array<{
    uid: string;
    name: string;
    selector: string;
    priority: number;
    revision: number;
    deleting: boolean;
    boundClusters: number;
    currentClusters: number;
    updatedAt: string;
  }>;
};

export type ProfileQueryVariables = Exact<{
  name: string;
}>;

export type ProfileQuery = {
  profile: {
    spec: unknown;
    createdBy: string;
    createdAt: string;
    uid: string;
    name: string;
    selector: string;
    priority: number;
    revision: number;
    deleting: boolean;
    boundClusters: number;
    currentClusters: number;
    updatedAt: string;
    revisions: Array<{ revision: number; selector: string; priority: number; createdAt: string }>;
    clusters: Array<{ clusterId: string; clusterName: string; revision: number }>;
    rollout: {
      id: string;
      state: RolloutState;
      reason: string | null;
      selector: string;
      change: unknown;
      createdAt: string;
      createdBy: string;
      finishedAt: string | null;
      currentWave: number;
      waitingStage: number | null;
      counts: {
        total: number;
        pending: number;
        applying: number;
        healthy: number;
        failed: number;
        skipped: number;
      };
    } | null;
  };
};

export type EffectiveStateFieldsFragment = {
  id: string;
  karpenter: { generation: number };
  effectiveState: {
    overrides: Array<string>;
    fields: Array<{
      field: string;
      value: unknown;
      source: string;
      profile: string | null;
      profileRevision: number | null;
    }>;
    profiles: Array<{ name: string; priority: number; revision: number }>;
    ignored: Array<{ field: string; profile: string; reason: string }>;
  };
};

export type ClusterEffectiveStateQueryVariables = Exact<{
  id: string | number;
}>;

export type ClusterEffectiveStateQuery = {
  cluster: {
    id: string;
    karpenter: { generation: number };
    effectiveState: {
      overrides: Array<string>;
      fields: Array<{
        field: string;
        value: unknown;
        source: string;
        profile: string | null;
        profileRevision: number | null;
      }>;
      profiles: Array<{ name: string; priority: number; revision: number }>;
      ignored: Array<{ field: string; profile: string; reason: string }>;
    };
  };
};

export type ResetClusterOverrideMutationVariables = Exact<{
  clusterId: string | number;
  field: string;
  expectedGeneration?: number | null | undefined;
}>;

export type ResetClusterOverrideMutation = {
  resetClusterOverride: {
    uid: string;
    infraID: string | null;
    managementCluster: string | null;
    clusterApiName: string | null;
    clusterApiNamespace: string | null;
    infrastructureProvider: string | null;
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    healthState: ClusterHealthState;
    generationSync: string;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      allowedInstanceTypes: Array<string>;
      driftPolicy: DriftPolicy;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      drifted: boolean;
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
      drift: Array<{
        target: string;
        apiVersion: string;
        kind: string;
        namespace: string | null;
        name: string;
        change: string;
        moreFields: number;
        detectedAt: string;
        correctedAt: string | null;
        fields: Array<{ path: string; manager: string | null }>;
      }> | null;
      clusterAutoscaler: {
        mode: ClusterAutoscalerMode;
        observed: string;
        machineAutoscalers: number;
      } | null;
      machineConfigPools: Array<{
        nodeClass: string;
        name: string;
        machineCount: number;
        updatedMachineCount: number;
        updatingMachineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      }> | null;
      conditions: Array<{
        lastTransitionTime: string;
        type: string;
        status: string;
        reason: string;
        message: string;
      }>;
    };
    nodePools: Array<{ name: string; spec: unknown; updatedAt: string }>;
    effectiveState: {
      overrides: Array<string>;
      fields: Array<{
        field: string;
        value: unknown;
        source: string;
        profile: string | null;
        profileRevision: number | null;
      }>;
      profiles: Array<{ name: string; priority: number; revision: number }>;
      ignored: Array<{ field: string; profile: string; reason: string }>;
    };
  };
};

export type DeleteRolloutStrategyMutationVariables = Exact<{
  name: string;
}>;

export type DeleteRolloutStrategyMutation = { deleteRolloutStrategy: { name: string } };

export type FleetHealthHistoryQueryVariables = Exact<{
  from: string;
  to: string;
}>;

export type FleetHealthHistoryQuery = {
  fleetHealthHistory: Array<{
    at: string;
    healthy: number | null;
    progressing: number | null;
    degraded: number | null;
    stale: number | null;
  }>;
};

export type AttentionClusterFragment = {
  id: string;
  name: string;
  healthState: ClusterHealthState;
  status: {
    lastReportAt: string | null;
    conditions: Array<{ type: string; status: string; reason: string; message: string }>;
  };
};

export type NeedsAttentionQueryVariables = Exact<{ [key: string]: never }>;

export type NeedsAttentionQuery = {
  degraded: {
    totalCount: number;
    totalCountIsExact: boolean;
    nodes: Array<{
      id: string;
      name: string;
      healthState: ClusterHealthState;
      status: {
        lastReportAt: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      };
    }>;
  };
  stale: {
    totalCount: number;
    totalCountIsExact: boolean;
    nodes: Array<{
      id: string;
      name: string;
      healthState: ClusterHealthState;
      status: {
        lastReportAt: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      };
    }>;
  };
  drifted: {
    totalCount: number;
    totalCountIsExact: boolean;
    nodes: Array<{
      id: string;
      name: string;
      healthState: ClusterHealthState;
      status: {
        lastReportAt: string | null;
        conditions: Array<{ type: string; status: string; reason: string; message: string }>;
      };
    }>;
  };
  waiting: {
    totalCount: number;
    nodes: Array<{
      id: string;
      selector: string;
      waitingStage: number | null;
      createdAt: string;
      createdBy: string;
    }>;
  };
};

export type ClusterHistoryQueryVariables = Exact<{
  id: string | number;
  from: string;
  to: string;
  step: number;
}>;

export type ClusterHistoryQuery = {
  cluster: {
    id: string;
    health: Array<{
      at: string;
      samples: number;
      available: number;
      degraded: number;
      progressing: number;
      nodes: number | null;
      nodeClaimsByState: unknown;
    }>;
    csrDecisionHistory: Array<{ at: string; decision: string; reason: string; count: number }>;
  };
};

export type ClusterActivityQueryVariables = Exact<{
  id: string | number;
}>;

export type ClusterActivityQuery = {
  cluster: {
    id: string;
    status: {
      nodeClaims: Array<{
        name: string;
        nodePool: string | null;
        nodeName: string | null;
        instanceType: string | null;
        zone: string | null;
        capacityType: string | null;
        state: string;
        createdAt: string;
        launchFailure: { reason: string; message: string } | null;
      }> | null;
    };
    csrDecisions: {
      totalCount: number;
      nodes: Array<{
        csrName: string;
        nodeName: string | null;
        decision: string;
        reason: string;
        message: string;
        decidedAt: string;
      }>;
    };
    auditEvents: {
      totalCount: number;
      nodes: Array<{ at: string; actor: string; action: string; before: unknown; after: unknown }>;
    };
  };
};

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const SummaryFieldsFragmentDoc = new TypedDocumentString(
  `
    fragment SummaryFields on FleetSummary {
  clusters
  inSync
  stale
  paused
  byHealth {
    healthy
    progressing
    degraded
    stale
    paused
  }
  karpenterEnabled
  clusterAutoscalerDisabled
  byPlatform {
    value
    count
  }
  byTopology {
    value
    count
  }
  byCondition {
    type
    status
    reason
    count
  }
}
    `,
  { fragmentName: 'SummaryFields' },
) as unknown as TypedDocumentString<SummaryFieldsFragment, unknown>;
export const ClusterRowFragmentDoc = new TypedDocumentString(
  `
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
    `,
  { fragmentName: 'ClusterRow' },
) as unknown as TypedDocumentString<ClusterRowFragment, unknown>;
export const ClusterDetailFragmentDoc = new TypedDocumentString(
  `
    fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}`,
  { fragmentName: 'ClusterDetail' },
) as unknown as TypedDocumentString<ClusterDetailFragment, unknown>;
export const RolloutSummaryFragmentDoc = new TypedDocumentString(
  `
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
    `,
  { fragmentName: 'RolloutSummary' },
) as unknown as TypedDocumentString<RolloutSummaryFragment, unknown>;
export const RolloutDetailFragmentDoc = new TypedDocumentString(
  `
    fragment RolloutDetail on Rollout {
  ...RolloutSummary
  updatedAt
  strategy {
    name
    waves
    minHealthySeconds
    maxFailures
    waveTimeoutSeconds
  }
  waves {
    index
    state
    startedAt
    finishedAt
    deadlineAt
    minHealthySeconds
    approval
    approvedBy
    approvedAt
    pauseSeconds
    resumeAt
    counts {
      total
      healthy
      failed
    }
    clusters {
      clusterId
      clusterName
      state
      generation
      reason
      appliedAt
    }
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}`,
  { fragmentName: 'RolloutDetail' },
) as unknown as TypedDocumentString<RolloutDetailFragment, unknown>;
export const ApiTokenFieldsFragmentDoc = new TypedDocumentString(
  `
    fragment ApiTokenFields on ApiToken {
  id
  name
  role
  labelSelector
  createdAt
  expiresAt
  lastUsedAt
  revokedAt
}
    `,
  { fragmentName: 'ApiTokenFields' },
) as unknown as TypedDocumentString<ApiTokenFieldsFragment, unknown>;
export const DeadLetterFieldsFragmentDoc = new TypedDocumentString(
  `
    fragment DeadLetterFields on DeadLetter {
  id
  queue
  name
  jobId
  failedReason
  failedAt
  attempts
  attemptsMade
  data
}
    `,
  { fragmentName: 'DeadLetterFields' },
) as unknown as TypedDocumentString<DeadLetterFieldsFragment, unknown>;
export const PlanClusterFieldsFragmentDoc = new TypedDocumentString(
  `
    fragment PlanClusterFields on ChangePlanCluster {
  clusterId
  clusterName
  generation
  state
  reason
  message
  objects {
    action
    kind
    name
    namespace
    target
    moreFields
    diff {
      path
      before
      after
    }
    errors {
      field
      message
      reason
    }
  }
}
    `,
  { fragmentName: 'PlanClusterFields' },
) as unknown as TypedDocumentString<PlanClusterFieldsFragment, unknown>;
export const ProfileRowFragmentDoc = new TypedDocumentString(
  `
    fragment ProfileRow on Profile {
  uid
  name
  selector
  priority
  revision
  deleting
  boundClusters
  currentClusters
  updatedAt
}
    `,
  { fragmentName: 'ProfileRow' },
) as unknown as TypedDocumentString<ProfileRowFragment, unknown>;
export const EffectiveStateFieldsFragmentDoc = new TypedDocumentString(
  `
    fragment EffectiveStateFields on Cluster {
  id
  karpenter {
    generation
  }
  effectiveState {
    fields {
      field
      value
      source
      profile
      profileRevision
    }
    profiles {
      name
      priority
      revision
    }
    overrides
    ignored {
      field
      profile
      reason
    }
  }
}
    `,
  { fragmentName: 'EffectiveStateFields' },
) as unknown as TypedDocumentString<EffectiveStateFieldsFragment, unknown>;
export const AttentionClusterFragmentDoc = new TypedDocumentString(
  `
    fragment AttentionCluster on Cluster {
  id
  name
  healthState
  status {
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
    `,
  { fragmentName: 'AttentionCluster' },
) as unknown as TypedDocumentString<AttentionClusterFragment, unknown>;
export const ViewerDocument = new TypedDocumentString(`
    query Viewer {
  viewer {
    name
    role
    scoped
    session
  }
}
    `) as unknown as TypedDocumentString<ViewerQuery, ViewerQueryVariables>;
export const SignOutDocument = new TypedDocumentString(`
    mutation SignOut {
  signOut
}
    `) as unknown as TypedDocumentString<SignOutMutation, SignOutMutationVariables>;
export const FleetSummaryDocument = new TypedDocumentString(`
    query FleetSummary {
  fleetSummary {
    ...SummaryFields
  }
}
    fragment SummaryFields on FleetSummary {
  clusters
  inSync
  stale
  paused
  byHealth {
    healthy
    progressing
    degraded
    stale
    paused
  }
  karpenterEnabled
  clusterAutoscalerDisabled
  byPlatform {
    value
    count
  }
  byTopology {
    value
    count
  }
  byCondition {
    type
    status
    reason
    count
  }
}`) as unknown as TypedDocumentString<FleetSummaryQuery, FleetSummaryQueryVariables>;
export const FleetSummaryChangedDocument = new TypedDocumentString(`
    subscription FleetSummaryChanged {
  fleetSummaryChanged {
    ...SummaryFields
  }
}
    fragment SummaryFields on FleetSummary {
  clusters
  inSync
  stale
  paused
  byHealth {
    healthy
    progressing
    degraded
    stale
    paused
  }
  karpenterEnabled
  clusterAutoscalerDisabled
  byPlatform {
    value
    count
  }
  byTopology {
    value
    count
  }
  byCondition {
    type
    status
    reason
    count
  }
}`) as unknown as TypedDocumentString<
  FleetSummaryChangedSubscription,
  FleetSummaryChangedSubscriptionVariables
>;
export const ClustersDocument = new TypedDocumentString(`
    query Clusters($filter: ClusterFilter, $orderBy: ClusterOrder, $first: Int, $after: String, $last: Int, $before: String) {
  clusters(
    filter: $filter
    orderBy: $orderBy
    first: $first
    after: $after
    last: $last
    before: $before
  ) {
    totalCount
    totalCountIsExact
    pageInfo {
      hasNextPage
      hasPreviousPage
      startCursor
      endCursor
    }
    nodes {
      ...ClusterRow
    }
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}`) as unknown as TypedDocumentString<ClustersQuery, ClustersQueryVariables>;
export const ClusterChangedDocument = new TypedDocumentString(`
    subscription ClusterChanged($filter: ClusterFilter) {
  clusterChanged(filter: $filter) {
    ...ClusterRow
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}`) as unknown as TypedDocumentString<
  ClusterChangedSubscription,
  ClusterChangedSubscriptionVariables
>;
export const ClusterDocument = new TypedDocumentString(`
    query Cluster($id: ID!) {
  cluster(id: $id) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<ClusterQuery, ClusterQueryVariables>;
export const ClusterDetailChangedDocument = new TypedDocumentString(`
    subscription ClusterDetailChanged {
  clusterChanged {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<
  ClusterDetailChangedSubscription,
  ClusterDetailChangedSubscriptionVariables
>;
export const SetKarpenterDocument = new TypedDocumentString(`
    mutation SetKarpenter($clusterId: ID!, $input: SetKarpenterInput!) {
  setKarpenter(clusterId: $clusterId, input: $input) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<SetKarpenterMutation, SetKarpenterMutationVariables>;
export const UpsertNodePoolDocument = new TypedDocumentString(`
    mutation UpsertNodePool($clusterId: ID!, $input: UpsertNodePoolInput!) {
  upsertNodePool(clusterId: $clusterId, input: $input) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<UpsertNodePoolMutation, UpsertNodePoolMutationVariables>;
export const DeleteNodePoolDocument = new TypedDocumentString(`
    mutation DeleteNodePool($clusterId: ID!, $name: String!, $expectedGeneration: Int) {
  deleteNodePool(
    clusterId: $clusterId
    name: $name
    expectedGeneration: $expectedGeneration
  ) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<DeleteNodePoolMutation, DeleteNodePoolMutationVariables>;
export const PauseClusterDocument = new TypedDocumentString(`
    mutation PauseCluster($clusterId: ID!) {
  pauseCluster(clusterId: $clusterId) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<PauseClusterMutation, PauseClusterMutationVariables>;
export const ResumeClusterDocument = new TypedDocumentString(`
    mutation ResumeCluster($clusterId: ID!) {
  resumeCluster(clusterId: $clusterId) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<ResumeClusterMutation, ResumeClusterMutationVariables>;
export const ReconcileClusterDocument = new TypedDocumentString(`
    mutation ReconcileCluster($clusterId: ID!) {
  reconcileCluster(clusterId: $clusterId) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<ReconcileClusterMutation, ReconcileClusterMutationVariables>;
export const RolloutsDocument = new TypedDocumentString(`
    query Rollouts($first: Int, $after: String, $state: RolloutState) {
  rollouts(first: $first, after: $after, state: $state) {
    totalCount
    pageInfo {
      hasNextPage
      endCursor
    }
    nodes {
      ...RolloutSummary
    }
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}`) as unknown as TypedDocumentString<RolloutsQuery, RolloutsQueryVariables>;
export const RolloutDocument = new TypedDocumentString(`
    query Rollout($id: ID!) {
  rollout(id: $id) {
    ...RolloutDetail
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
fragment RolloutDetail on Rollout {
  ...RolloutSummary
  updatedAt
  strategy {
    name
    waves
    minHealthySeconds
    maxFailures
    waveTimeoutSeconds
  }
  waves {
    index
    state
    startedAt
    finishedAt
    deadlineAt
    minHealthySeconds
    approval
    approvedBy
    approvedAt
    pauseSeconds
    resumeAt
    counts {
      total
      healthy
      failed
    }
    clusters {
      clusterId
      clusterName
      state
      generation
      reason
      appliedAt
    }
  }
}`) as unknown as TypedDocumentString<RolloutQuery, RolloutQueryVariables>;
export const RolloutChangedDocument = new TypedDocumentString(`
    subscription RolloutChanged($id: ID!) {
  rolloutChanged(id: $id) {
    ...RolloutDetail
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
fragment RolloutDetail on Rollout {
  ...RolloutSummary
  updatedAt
  strategy {
    name
    waves
    minHealthySeconds
    maxFailures
    waveTimeoutSeconds
  }
  waves {
    index
    state
    startedAt
    finishedAt
    deadlineAt
    minHealthySeconds
    approval
    approvedBy
    approvedAt
    pauseSeconds
    resumeAt
    counts {
      total
      healthy
      failed
    }
    clusters {
      clusterId
      clusterName
      state
      generation
      reason
      appliedAt
    }
  }
}`) as unknown as TypedDocumentString<
  RolloutChangedSubscription,
  RolloutChangedSubscriptionVariables
>;
export const RolloutPreviewDocument = new TypedDocumentString(`
    query RolloutPreview($filter: ClusterFilter, $first: Int) {
  clusters(filter: $filter, first: $first, orderBy: {field: NAME, direction: ASC}) {
    totalCount
    totalCountIsExact
    nodes {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<RolloutPreviewQuery, RolloutPreviewQueryVariables>;
export const StartRolloutDocument = new TypedDocumentString(`
    mutation StartRollout($selector: String!, $change: RolloutChangeInput!, $strategy: RolloutStrategyInput, $strategyName: String, $clusterIds: [ID!]) {
  startRollout(
    selector: $selector
    change: $change
    strategy: $strategy
    strategyName: $strategyName
    clusterIds: $clusterIds
  ) {
    ...RolloutDetail
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
fragment RolloutDetail on Rollout {
  ...RolloutSummary
  updatedAt
  strategy {
    name
    waves
    minHealthySeconds
    maxFailures
    waveTimeoutSeconds
  }
  waves {
    index
    state
    startedAt
    finishedAt
    deadlineAt
    minHealthySeconds
    approval
    approvedBy
    approvedAt
    pauseSeconds
    resumeAt
    counts {
      total
      healthy
      failed
    }
    clusters {
      clusterId
      clusterName
      state
      generation
      reason
      appliedAt
    }
  }
}`) as unknown as TypedDocumentString<StartRolloutMutation, StartRolloutMutationVariables>;
export const PauseRolloutDocument = new TypedDocumentString(`
    mutation PauseRollout($id: ID!) {
  pauseRollout(id: $id) {
    ...RolloutDetail
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
fragment RolloutDetail on Rollout {
  ...RolloutSummary
  updatedAt
  strategy {
    name
    waves
    minHealthySeconds
    maxFailures
    waveTimeoutSeconds
  }
  waves {
    index
    state
    startedAt
    finishedAt
    deadlineAt
    minHealthySeconds
    approval
    approvedBy
    approvedAt
    pauseSeconds
    resumeAt
    counts {
      total
      healthy
      failed
    }
    clusters {
      clusterId
      clusterName
      state
      generation
      reason
      appliedAt
    }
  }
}`) as unknown as TypedDocumentString<PauseRolloutMutation, PauseRolloutMutationVariables>;
export const ResumeRolloutDocument = new TypedDocumentString(`
    mutation ResumeRollout($id: ID!) {
  resumeRollout(id: $id) {
    ...RolloutDetail
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
fragment RolloutDetail on Rollout {
  ...RolloutSummary
  updatedAt
  strategy {
    name
    waves
    minHealthySeconds
    maxFailures
    waveTimeoutSeconds
  }
  waves {
    index
    state
    startedAt
    finishedAt
    deadlineAt
    minHealthySeconds
    approval
    approvedBy
    approvedAt
    pauseSeconds
    resumeAt
    counts {
      total
      healthy
      failed
    }
    clusters {
      clusterId
      clusterName
      state
      generation
      reason
      appliedAt
    }
  }
}`) as unknown as TypedDocumentString<ResumeRolloutMutation, ResumeRolloutMutationVariables>;
export const AbortRolloutDocument = new TypedDocumentString(`
    mutation AbortRollout($id: ID!, $reason: String) {
  abortRollout(id: $id, reason: $reason) {
    ...RolloutDetail
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
fragment RolloutDetail on Rollout {
  ...RolloutSummary
  updatedAt
  strategy {
    name
    waves
    minHealthySeconds
    maxFailures
    waveTimeoutSeconds
  }
  waves {
    index
    state
    startedAt
    finishedAt
    deadlineAt
    minHealthySeconds
    approval
    approvedBy
    approvedAt
    pauseSeconds
    resumeAt
    counts {
      total
      healthy
      failed
    }
    clusters {
      clusterId
      clusterName
      state
      generation
      reason
      appliedAt
    }
  }
}`) as unknown as TypedDocumentString<AbortRolloutMutation, AbortRolloutMutationVariables>;
export const ApproveRolloutStageDocument = new TypedDocumentString(`
    mutation ApproveRolloutStage($id: ID!, $stage: Int!) {
  approveRolloutStage(rolloutId: $id, stage: $stage) {
    ...RolloutDetail
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
fragment RolloutDetail on Rollout {
  ...RolloutSummary
  updatedAt
  strategy {
    name
    waves
    minHealthySeconds
    maxFailures
    waveTimeoutSeconds
  }
  waves {
    index
    state
    startedAt
    finishedAt
    deadlineAt
    minHealthySeconds
    approval
    approvedBy
    approvedAt
    pauseSeconds
    resumeAt
    counts {
      total
      healthy
      failed
    }
    clusters {
      clusterId
      clusterName
      state
      generation
      reason
      appliedAt
    }
  }
}`) as unknown as TypedDocumentString<
  ApproveRolloutStageMutation,
  ApproveRolloutStageMutationVariables
>;
export const RolloutStrategiesDocument = new TypedDocumentString(`
    query RolloutStrategies {
  rolloutStrategies {
    name
    maxFailures
    waveTimeoutSeconds
    maxPendingPodSeconds
    maxNodeClaimLaunchFailures
    updatedAt
    createdBy
    stages {
      selector
      percent
      count
      minHealthySeconds
      pauseSeconds
      approval
    }
  }
}
    `) as unknown as TypedDocumentString<RolloutStrategiesQuery, RolloutStrategiesQueryVariables>;
export const ApiTokensDocument = new TypedDocumentString(`
    query ApiTokens {
  apiTokens {
    ...ApiTokenFields
  }
}
    fragment ApiTokenFields on ApiToken {
  id
  name
  role
  labelSelector
  createdAt
  expiresAt
  lastUsedAt
  revokedAt
}`) as unknown as TypedDocumentString<ApiTokensQuery, ApiTokensQueryVariables>;
export const CreateApiTokenDocument = new TypedDocumentString(`
    mutation CreateApiToken($input: CreateApiTokenInput!) {
  createApiToken(input: $input) {
    secret
    token {
      ...ApiTokenFields
    }
  }
}
    fragment ApiTokenFields on ApiToken {
  id
  name
  role
  labelSelector
  createdAt
  expiresAt
  lastUsedAt
  revokedAt
}`) as unknown as TypedDocumentString<CreateApiTokenMutation, CreateApiTokenMutationVariables>;
export const RevokeApiTokenDocument = new TypedDocumentString(`
    mutation RevokeApiToken($id: ID!) {
  revokeApiToken(id: $id) {
    ...ApiTokenFields
  }
}
    fragment ApiTokenFields on ApiToken {
  id
  name
  role
  labelSelector
  createdAt
  expiresAt
  lastUsedAt
  revokedAt
}`) as unknown as TypedDocumentString<RevokeApiTokenMutation, RevokeApiTokenMutationVariables>;
export const RegisterClusterDocument = new TypedDocumentString(`
    mutation RegisterCluster($input: RegisterClusterInput!) {
  registerCluster(input: $input) {
    bootstrapManifest
    cluster {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<RegisterClusterMutation, RegisterClusterMutationVariables>;
export const DeadLettersDocument = new TypedDocumentString(`
    query DeadLetters($first: Int, $after: String) {
  deadLetters(first: $first, after: $after) {
    totalCount
    pageInfo {
      hasNextPage
      endCursor
    }
    nodes {
      ...DeadLetterFields
    }
  }
}
    fragment DeadLetterFields on DeadLetter {
  id
  queue
  name
  jobId
  failedReason
  failedAt
  attempts
  attemptsMade
  data
}`) as unknown as TypedDocumentString<DeadLettersQuery, DeadLettersQueryVariables>;
export const RedriveDeadLetterDocument = new TypedDocumentString(`
    mutation RedriveDeadLetter($id: ID!) {
  redriveDeadLetter(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<
  RedriveDeadLetterMutation,
  RedriveDeadLetterMutationVariables
>;
export const RedriveAllDeadLettersDocument = new TypedDocumentString(`
    mutation RedriveAllDeadLetters {
  redriveAllDeadLetters
}
    `) as unknown as TypedDocumentString<
  RedriveAllDeadLettersMutation,
  RedriveAllDeadLettersMutationVariables
>;
export const PlanChangeDocument = new TypedDocumentString(`
    mutation PlanChange($input: PlanChangeInput!) {
  planChange(input: $input) {
    id
    expiresAt
    clusters(first: 1) {
      nodes {
        ...PlanClusterFields
      }
    }
  }
}
    fragment PlanClusterFields on ChangePlanCluster {
  clusterId
  clusterName
  generation
  state
  reason
  message
  objects {
    action
    kind
    name
    namespace
    target
    moreFields
    diff {
      path
      before
      after
    }
    errors {
      field
      message
      reason
    }
  }
}`) as unknown as TypedDocumentString<PlanChangeMutation, PlanChangeMutationVariables>;
export const ChangePlanDocument = new TypedDocumentString(`
    query ChangePlan($id: ID!) {
  changePlan(id: $id) {
    id
    expired
    appliedAt
    clusters(first: 1) {
      nodes {
        ...PlanClusterFields
      }
    }
  }
}
    fragment PlanClusterFields on ChangePlanCluster {
  clusterId
  clusterName
  generation
  state
  reason
  message
  objects {
    action
    kind
    name
    namespace
    target
    moreFields
    diff {
      path
      before
      after
    }
    errors {
      field
      message
      reason
    }
  }
}`) as unknown as TypedDocumentString<ChangePlanQuery, ChangePlanQueryVariables>;
export const ApplyPlanDocument = new TypedDocumentString(`
    mutation ApplyPlan($id: ID!) {
  applyPlan(id: $id) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<ApplyPlanMutation, ApplyPlanMutationVariables>;
export const MigrationPlanDocument = new TypedDocumentString(`
    query MigrationPlan($clusterId: ID!) {
  migrationPlan(clusterId: $clusterId) {
    clusterId
    generation
    reason
    plan {
      computedAt
      explanations
      nodeClassExplanations
      nodeClassOverrides
      observedGeneration
      nodePools {
        name
        replaces
        explanations
        spec
      }
      notExpressible {
        object
        what
        reason
      }
    }
  }
}
    `) as unknown as TypedDocumentString<MigrationPlanQuery, MigrationPlanQueryVariables>;
export const ApplyMigrationPlanDocument = new TypedDocumentString(`
    mutation ApplyMigrationPlan($clusterId: ID!, $expectedGeneration: Int!) {
  applyMigrationPlan(
    clusterId: $clusterId
    expectedGeneration: $expectedGeneration
  ) {
    ...ClusterDetail
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}`) as unknown as TypedDocumentString<
  ApplyMigrationPlanMutation,
  ApplyMigrationPlanMutationVariables
>;
export const ProfilesDocument = new TypedDocumentString(`
    query Profiles {
  profiles {
    ...ProfileRow
  }
}
    fragment ProfileRow on Profile {
  uid
  name
  selector
  priority
  revision
  deleting
  boundClusters
  currentClusters
  updatedAt
}`) as unknown as TypedDocumentString<ProfilesQuery, ProfilesQueryVariables>;
export const ProfileDocument = new TypedDocumentString(`
    query Profile($name: String!) {
  profile(name: $name) {
    ...ProfileRow
    spec
    createdBy
    createdAt
    revisions {
      revision
      selector
      priority
      createdAt
    }
    clusters {
      clusterId
      clusterName
      revision
    }
    rollout {
      ...RolloutSummary
    }
  }
}
    fragment RolloutSummary on Rollout {
  id
  state
  reason
  selector
  change
  createdAt
  createdBy
  finishedAt
  currentWave
  waitingStage
  counts {
    total
    pending
    applying
    healthy
    failed
    skipped
  }
}
fragment ProfileRow on Profile {
  uid
  name
  selector
  priority
  revision
  deleting
  boundClusters
  currentClusters
  updatedAt
}`) as unknown as TypedDocumentString<ProfileQuery, ProfileQueryVariables>;
export const ClusterEffectiveStateDocument = new TypedDocumentString(`
    query ClusterEffectiveState($id: ID!) {
  cluster(id: $id) {
    ...EffectiveStateFields
  }
}
    fragment EffectiveStateFields on Cluster {
  id
  karpenter {
    generation
  }
  effectiveState {
    fields {
      field
      value
      source
      profile
      profileRevision
    }
    profiles {
      name
      priority
      revision
    }
    overrides
    ignored {
      field
      profile
      reason
    }
  }
}`) as unknown as TypedDocumentString<
  ClusterEffectiveStateQuery,
  ClusterEffectiveStateQueryVariables
>;
export const ResetClusterOverrideDocument = new TypedDocumentString(`
    mutation ResetClusterOverride($clusterId: ID!, $field: String!, $expectedGeneration: Int) {
  resetClusterOverride(
    clusterId: $clusterId
    field: $field
    expectedGeneration: $expectedGeneration
  ) {
    ...ClusterDetail
    ...EffectiveStateFields
  }
}
    fragment ClusterRow on Cluster {
  id
  name
  createdAt
  platform
  topology
  region
  labels
  inSync
  healthState
  generationSync
  karpenter {
    enabled
    clusterAutoscalerMode
    generation
    paused
  }
  status {
    observedGeneration
    stale
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}
fragment ClusterDetail on Cluster {
  ...ClusterRow
  uid
  infraID
  managementCluster
  clusterApiName
  clusterApiNamespace
  infrastructureProvider
  karpenter {
    logLevel
    featureGates
    allowedInstanceTypes
    driftPolicy
  }
  status {
    drifted
    drift {
      target
      apiVersion
      kind
      namespace
      name
      change
      fields {
        path
        manager
      }
      moreFields
      detectedAt
      correctedAt
    }
    clusterAutoscaler {
      mode
      observed
      machineAutoscalers
    }
    machineConfigPools {
      nodeClass
      name
      machineCount
      updatedMachineCount
      updatingMachineCount
      degradedMachineCount
      renderedConfig
      conditions {
        type
        status
        reason
        message
      }
    }
    conditions {
      lastTransitionTime
    }
  }
  nodePools {
    name
    spec
    updatedAt
  }
}
fragment EffectiveStateFields on Cluster {
  id
  karpenter {
    generation
  }
  effectiveState {
    fields {
      field
      value
      source
      profile
      profileRevision
    }
    profiles {
      name
      priority
      revision
    }
    overrides
    ignored {
      field
      profile
      reason
    }
  }
}`) as unknown as TypedDocumentString<
  ResetClusterOverrideMutation,
  ResetClusterOverrideMutationVariables
>;
export const DeleteRolloutStrategyDocument = new TypedDocumentString(`
    mutation DeleteRolloutStrategy($name: String!) {
  deleteRolloutStrategy(name: $name) {
    name
  }
}
    `) as unknown as TypedDocumentString<
  DeleteRolloutStrategyMutation,
  DeleteRolloutStrategyMutationVariables
>;
export const FleetHealthHistoryDocument = new TypedDocumentString(`
    query FleetHealthHistory($from: DateTime!, $to: DateTime!) {
  fleetHealthHistory(from: $from, to: $to) {
    at
    healthy
    progressing
    degraded
    stale
  }
}
    `) as unknown as TypedDocumentString<FleetHealthHistoryQuery, FleetHealthHistoryQueryVariables>;
export const NeedsAttentionDocument = new TypedDocumentString(`
    query NeedsAttention {
  degraded: clusters(
    filter: {condition: {type: "Degraded", status: "True"}}
    first: 10
  ) {
    totalCount
    totalCountIsExact
    nodes {
      ...AttentionCluster
    }
  }
  stale: clusters(filter: {stale: true}, first: 10) {
    totalCount
    totalCountIsExact
    nodes {
      ...AttentionCluster
    }
  }
  drifted: clusters(filter: {drifted: true}, first: 10) {
    totalCount
    totalCountIsExact
    nodes {
      ...AttentionCluster
    }
  }
  waiting: rollouts(state: WAITING_APPROVAL, first: 10) {
    totalCount
    nodes {
      id
      selector
      waitingStage
      createdAt
      createdBy
    }
  }
}
    fragment AttentionCluster on Cluster {
  id
  name
  healthState
  status {
    lastReportAt
    conditions {
      type
      status
      reason
      message
    }
  }
}`) as unknown as TypedDocumentString<NeedsAttentionQuery, NeedsAttentionQueryVariables>;
export const ClusterHistoryDocument = new TypedDocumentString(`
    query ClusterHistory($id: ID!, $from: DateTime!, $to: DateTime!, $step: Int!) {
  cluster(id: $id) {
    id
    health(from: $from, to: $to, step: $step) {
      at
      samples
      available
      degraded
      progressing
      nodes
      nodeClaimsByState
    }
    csrDecisionHistory(from: $from, to: $to, step: $step) {
      at
      decision
      reason
      count
    }
  }
}
    `) as unknown as TypedDocumentString<ClusterHistoryQuery, ClusterHistoryQueryVariables>;
export const ClusterActivityDocument = new TypedDocumentString(`
    query ClusterActivity($id: ID!) {
  cluster(id: $id) {
    id
    status {
      nodeClaims {
        name
        nodePool
        nodeName
        instanceType
        zone
        capacityType
        state
        createdAt
        launchFailure {
          reason
          message
        }
      }
    }
    csrDecisions(first: 20) {
      totalCount
      nodes {
        csrName
        nodeName
        decision
        reason
        message
        decidedAt
      }
    }
    auditEvents(first: 20) {
      totalCount
      nodes {
        at
        actor
        action
        before
        after
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ClusterActivityQuery, ClusterActivityQueryVariables>;
