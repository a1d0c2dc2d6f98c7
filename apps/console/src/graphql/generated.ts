/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> =
  T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** KEEP the Cluster Autoscaler, DISABLE it (kept copy restored on KEEP), or run both as a visible MIGRATE state. */
export type ClusterAutoscalerMode = 'DISABLE' | 'KEEP' | 'MIGRATE';

export type ClusterFilter = {
  condition?: ConditionFilter | null | undefined;
  /** observedGeneration == generation. */
  inSync?: boolean | null | undefined;
  karpenterEnabled?: boolean | null | undefined;
  /** Kubernetes label selector, e.g. "env=prod,region in (us-east-1,eu-west-1)". */
  labelSelector?: string | null | undefined;
  /** Substring of the cluster name. */
  nameContains?: string | null | undefined;
  platform?: Platform | null | undefined;
  stale?: boolean | null | undefined;
  topology?: Topology | null | undefined;
};

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

export type KarpenterLogLevel = 'debug' | 'error' | 'info';

export type OrderDirection = 'ASC' | 'DESC';

export type Platform = 'AWS' | 'AZURE' | 'CAPI';

/** VIEWER reads; OPERATOR also changes clusters; ADMIN also manages tokens and registrations. */
export type Role = 'ADMIN' | 'OPERATOR' | 'VIEWER';

/** Fields left out keep their current value. */
export type SetKarpenterInput = {
  clusterAutoscalerMode?: ClusterAutoscalerMode | null | undefined;
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
  id: string;
  name: string;
  createdAt: string;
  platform: Platform;
  topology: Topology;
  region: string;
  labels: unknown;
  inSync: boolean;
  karpenter: {
    logLevel: KarpenterLogLevel;
    featureGates: unknown;
    enabled: boolean;
    clusterAutoscalerMode: ClusterAutoscalerMode;
    generation: number;
    paused: boolean;
  };
  status: {
    observedGeneration: number;
    stale: boolean;
    lastReportAt: string | null;
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
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
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
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
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
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
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
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
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
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
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
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
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
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
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
    id: string;
    name: string;
    createdAt: string;
    platform: Platform;
    topology: Topology;
    region: string;
    labels: unknown;
    inSync: boolean;
    karpenter: {
      logLevel: KarpenterLogLevel;
      featureGates: unknown;
      enabled: boolean;
      clusterAutoscalerMode: ClusterAutoscalerMode;
      generation: number;
      paused: boolean;
    };
    status: {
      observedGeneration: number;
      stale: boolean;
      lastReportAt: string | null;
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
  karpenter {
    logLevel
    featureGates
  }
  status {
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
