/**
 * Every GraphQL document the CLI sends, in one place so a schema change shows up in one diff.
 * Field selections stay small: the CLI asks only for what it prints.
 */

const CLUSTER_ROW = `
  id uid name platform region topology createdAt labels
  karpenter { enabled paused generation clusterAutoscalerMode logLevel }
  inSync healthState generationSync
  status { observedGeneration stale lastReportAt sidecar { version contractVersion } }`;

const CLUSTER_DETAIL = `
  id uid name platform region topology createdAt labels infraID managementCluster hcpNamespace
  clusterApiName clusterApiNamespace infrastructureProvider
  inSync healthState generationSync
  karpenter {
    enabled paused generation clusterAutoscalerMode logLevel featureGates nodeClassOverrides
    webIdentityRoleArn allowedInstanceTypes
  }
  nodePools { name spec updatedAt }
  status {
    observedGeneration stale lastReportAt metrics
    sidecar { version contractVersion }
    clusterAutoscaler { mode observed machineAutoscalers }
    machineConfigPools {
      nodeClass name machineCount updatedMachineCount updatingMachineCount degradedMachineCount
      readyMachineCount renderedConfig conditions { type status reason message lastTransitionTime }
    }
    conditions { type status reason message lastTransitionTime }
    nodeClaims {
      name nodePool nodeName instanceType zone capacityType state createdAt
      launchFailure { reason message }
    }
  }`;

/** What a mutation on a cluster echoes back, enough for a one-line confirmation. */
const CLUSTER_ACK = `id name inSync karpenter { enabled paused generation clusterAutoscalerMode } status { observedGeneration }`;

export const LIST_CLUSTERS = `
query ListClusters($first: Int, $after: String, $filter: ClusterFilter, $orderBy: ClusterOrder) {
  clusters(first: $first, after: $after, filter: $filter, orderBy: $orderBy) {
    nodes { ${CLUSTER_ROW} }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const FIND_CLUSTERS_BY_NAME = `
query FindClusters($first: Int, $after: String, $filter: ClusterFilter) {
  clusters(first: $first, after: $after, filter: $filter) {
    nodes { id name karpenter { featureGates } labels }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const GET_CLUSTER = `
query GetCluster($id: ID!) {
  cluster(id: $id) { ${CLUSTER_DETAIL} }
}`;

export const CLUSTER_LABELS_AND_GATES = `
query ClusterLabels($id: ID!) {
  cluster(id: $id) { id name labels karpenter { featureGates } }
}`;

export const REGISTER_CLUSTER = `
mutation RegisterCluster($input: RegisterClusterInput!) {
  registerCluster(input: $input) {
    cluster { id uid name platform region topology }
    bootstrapManifest
    reportToken
    redisUrl
  }
}`;

export const UPDATE_LABELS = `
mutation UpdateLabels($id: ID!, $labels: JSON!) {
  updateClusterLabels(clusterId: $id, labels: $labels) { id name labels }
}`;

export const SET_KARPENTER = `
mutation SetKarpenter($id: ID!, $input: SetKarpenterInput!) {
  setKarpenter(clusterId: $id, input: $input) { ${CLUSTER_ACK} }
}`;

export const UPSERT_NODEPOOL = `
mutation UpsertNodePool($id: ID!, $input: UpsertNodePoolInput!) {
  upsertNodePool(clusterId: $id, input: $input) { ${CLUSTER_ACK} }
}`;

export const DELETE_NODEPOOL = `
mutation DeleteNodePool($id: ID!, $name: String!, $expectedGeneration: Int) {
  deleteNodePool(clusterId: $id, name: $name, expectedGeneration: $expectedGeneration) {
    ${CLUSTER_ACK}
  }
}`;

export const PAUSE_CLUSTER = `
mutation PauseCluster($id: ID!) { pauseCluster(clusterId: $id) { ${CLUSTER_ACK} } }`;

export const RESUME_CLUSTER = `
mutation ResumeCluster($id: ID!) { resumeCluster(clusterId: $id) { ${CLUSTER_ACK} } }`;

export const RECONCILE_CLUSTER = `
mutation ReconcileCluster($id: ID!) { reconcileCluster(clusterId: $id) { ${CLUSTER_ACK} } }`;

const FLEET_SUMMARY_FIELDS = `
    clusters inSync stale paused karpenterEnabled clusterAutoscalerDisabled
    byHealth { healthy progressing degraded stale paused }
    byPlatform { value count }
    byTopology { value count }
    byHostedMode { value count }
    bySidecarVersion { value count }
    byCondition { type status reason count }`;

export const FLEET_SUMMARY = `query FleetSummary { fleetSummary { ${FLEET_SUMMARY_FIELDS} } }`;

export const FLEET_HEALTH_HISTORY = `
query FleetHealthHistory($from: DateTime!, $to: DateTime!) {
  fleetHealthHistory(from: $from, to: $to) { at healthy progressing degraded stale }
}`;

const TOKEN = `id name role labelSelector createdAt expiresAt lastUsedAt revokedAt`;

export const CREATE_TOKEN = `
mutation CreateToken($input: CreateApiTokenInput!) {
  createApiToken(input: $input) { secret token { ${TOKEN} } }
}`;

export const LIST_TOKENS = `query ListTokens { apiTokens { ${TOKEN} } }`;

export const REVOKE_TOKEN = `mutation RevokeToken($id: ID!) { revokeApiToken(id: $id) { ${TOKEN} } }`;

const ROLLOUT_ROW = `
  id uid state selector currentWave waitingStage createdAt createdBy finishedAt reason change
  counts { total pending applying healthy failed skipped }`;

const ROLLOUT_DETAIL = `
  ${ROLLOUT_ROW} updatedAt
  strategy { name waves maxFailures minHealthySeconds waveTimeoutSeconds maxNodeClaimLaunchFailures maxPendingPodSeconds }
  waves {
    index state startedAt finishedAt deadlineAt selector minHealthySeconds pauseSeconds approval resumeAt approvedAt approvedBy
    counts { total pending applying healthy failed skipped }
    clusters { clusterId clusterName state generation reason }
  }`;

export const START_ROLLOUT = `
mutation StartRollout($selector: String!, $change: RolloutChangeInput!, $strategy: RolloutStrategyInput, $strategyName: String) {
  startRollout(selector: $selector, change: $change, strategy: $strategy, strategyName: $strategyName) { ${ROLLOUT_ROW} }
}`;

export const START_ROLLOUT_FROM_PLAN = `
mutation StartRolloutFromPlan($planId: ID!, $strategy: RolloutStrategyInput, $strategyName: String) {
  startRollout(planId: $planId, strategy: $strategy, strategyName: $strategyName) { ${ROLLOUT_ROW} }
}`;

export const LIST_ROLLOUTS = `
query ListRollouts($first: Int, $after: String, $state: RolloutState) {
  rollouts(first: $first, after: $after, state: $state) {
    nodes { ${ROLLOUT_ROW} }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const GET_ROLLOUT = `query GetRollout($id: ID!) { rollout(id: $id) { ${ROLLOUT_DETAIL} } }`;

export const PAUSE_ROLLOUT = `mutation PauseRollout($id: ID!) { pauseRollout(id: $id) { ${ROLLOUT_ROW} } }`;

export const APPROVE_ROLLOUT_STAGE = `
mutation ApproveRolloutStage($id: ID!, $stage: Int!) { approveRolloutStage(rolloutId: $id, stage: $stage) { ${ROLLOUT_ROW} } }`;

export const RESUME_ROLLOUT = `mutation ResumeRollout($id: ID!) { resumeRollout(id: $id) { ${ROLLOUT_ROW} } }`;

export const ABORT_ROLLOUT = `
mutation AbortRollout($id: ID!, $reason: String) { abortRollout(id: $id, reason: $reason) { ${ROLLOUT_ROW} } }`;

export const VIEWER = `query Viewer { viewer { name role scoped labelSelector expiresAt } }`;

export const DEREGISTER_CLUSTER = `
mutation DeregisterCluster($id: ID!) { deregisterCluster(clusterId: $id) { id name } }`;

export const ROTATE_CREDENTIALS = `
mutation RotateClusterCredentials($id: ID!, $grace: Int) {
  rotateClusterCredentials(clusterId: $id, gracePeriodSeconds: $grace) {
    cluster { id uid name }
    bootstrapManifest
    previousValidUntil
  }
}`;

export const CLUSTER_HEALTH = `
query ClusterHealth($id: ID!, $from: DateTime!, $to: DateTime!, $step: Int) {
  cluster(id: $id) {
    name
    health(from: $from, to: $to, step: $step) {
      at samples available progressing degraded nodes vcpus
    }
  }
}`;

export const CLUSTER_CSR_DECISIONS = `
query ClusterCsrDecisions($id: ID!, $first: Int, $after: String) {
  cluster(id: $id) {
    csrDecisions(first: $first, after: $after) {
      nodes { csrName signerName nodeName decision reason message decidedAt }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export const CLUSTER_AUDIT_EVENTS = `
query ClusterAuditEvents($id: ID!, $first: Int, $after: String) {
  cluster(id: $id) {
    auditEvents(first: $first, after: $after) {
      nodes { at actor action before after }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export const CLUSTER_RECONCILE_RUNS = `
query ClusterReconcileRuns($id: ID!, $first: Int, $after: String) {
  cluster(id: $id) {
    reconcileRuns(first: $first, after: $after) {
      nodes { generation state createdAt dispatchedAt finishedAt error }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export const SET_NODECLASS_OVERRIDES = `
mutation SetNodeClassOverrides($id: ID!, $input: NodeClassOverridesInput!) {
  setNodeClassOverrides(clusterId: $id, input: $input) {
    ${CLUSTER_ACK} karpenter { nodeClassOverrides }
  }
}`;

export const NODECLASS_OVERRIDES = `
query NodeClassOverrides($id: ID!) {
  cluster(id: $id) { id name karpenter { generation nodeClassOverrides } }
}`;

const DEAD_LETTER = `id queue name jobId attempts attemptsMade failedAt failedReason data`;

export const LIST_DEAD_LETTERS = `
query DeadLetters($first: Int, $after: String) {
  deadLetters(first: $first, after: $after) {
    nodes { ${DEAD_LETTER} }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const REDRIVE_DEAD_LETTER = `
mutation RedriveDeadLetter($id: ID!) { redriveDeadLetter(id: $id) { ${DEAD_LETTER} } }`;

export const REDRIVE_ALL_DEAD_LETTERS = `mutation RedriveAllDeadLetters { redriveAllDeadLetters }`;

/** What `clusters list/get --watch` prints for each change. */
export const CLUSTER_CHANGED = `
subscription ClusterChanged($filter: ClusterFilter) {
  clusterChanged(filter: $filter) { ${CLUSTER_ROW} }
}`;

export const CLUSTER_DETAIL_CHANGED = `
subscription ClusterDetailChanged($filter: ClusterFilter) {
  clusterChanged(filter: $filter) { ${CLUSTER_DETAIL} }
}`;

export const ROLLOUT_CHANGED = `
subscription RolloutChanged($id: ID!) { rolloutChanged(id: $id) { ${ROLLOUT_DETAIL} } }`;

export const FLEET_SUMMARY_CHANGED = `
subscription FleetSummaryChanged {
  fleetSummaryChanged { ${FLEET_SUMMARY_FIELDS} }
}`;

/** Clusters whose sidecar reports Drifted=True, with what drifted. */
export const LIST_DRIFTED_CLUSTERS = `
query ListDriftedClusters($first: Int, $after: String, $filter: ClusterFilter, $orderBy: ClusterOrder) {
  clusters(first: $first, after: $after, filter: $filter, orderBy: $orderBy) {
    nodes {
      id name
      karpenter { driftPolicy }
      status {
        stale
        drift {
          target apiVersion kind namespace name change moreFields detectedAt correctedAt
          fields { path manager }
        }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const MIGRATION_PLAN = `
query MigrationPlan($id: ID!) {
  migrationPlan(clusterId: $id) {
    clusterId reason generation
    plan {
      computedAt observedGeneration
      nodePools { name spec replaces explanations }
      nodeClassOverrides nodeClassExplanations
      notExpressible { object what reason }
      explanations
    }
  }
}`;

export const APPLY_MIGRATION_PLAN = `
mutation ApplyMigrationPlan($id: ID!, $expectedGeneration: Int!) {
  applyMigrationPlan(clusterId: $id, expectedGeneration: $expectedGeneration) { ${CLUSTER_ACK} }
}`;
const PLAN_HEAD = `id createdAt expiresAt expired createdBy clusterId labelSelector change appliedAt appliedBy rolloutId
  counts { total pending planned notPlanned failed invalid created changed deleted unchanged }`;
const PLAN_CLUSTERS = `clusters(first: $first, after: $after) {
  pageInfo { hasNextPage endCursor }
  nodes { clusterId clusterName generation state reason message completedAt
    objects { target apiVersion kind namespace name action moreFields
      diff { path before after } errors { field message reason } } } }`;

export const PLAN_CHANGE = `
mutation PlanChange($input: PlanChangeInput!) { planChange(input: $input) { ${PLAN_HEAD} } }`;

export const GET_CHANGE_PLAN = `
query GetChangePlan($id: ID!, $first: Int, $after: String) {
  changePlan(id: $id) { ${PLAN_HEAD} ${PLAN_CLUSTERS} }
}`;

export const APPLY_PLAN = `
mutation ApplyPlan($id: ID!) { applyPlan(id: $id) { ${CLUSTER_ACK} } }`;

const PROFILE_ROW = `name selector priority revision spec deleting boundClusters currentClusters createdBy createdAt updatedAt`;

export const LIST_PROFILES = `
query ListProfiles {
  profiles { ${PROFILE_ROW} }
}`;

export const GET_PROFILE = `
query GetProfile($name: String!) {
  profile(name: $name) { ${PROFILE_ROW} }
}`;

export const CREATE_PROFILE = `
mutation CreateProfile($input: CreateProfileInput!, $strategy: RolloutStrategyInput, $strategyName: String) {
  createProfile(input: $input, strategy: $strategy, strategyName: $strategyName) {
    profile { ${PROFILE_ROW} }
    rollout { ${ROLLOUT_ROW} }
  }
}`;

export const UPDATE_PROFILE = `
mutation UpdateProfile($name: String!, $input: UpdateProfileInput!, $strategy: RolloutStrategyInput, $strategyName: String) {
  updateProfile(name: $name, input: $input, strategy: $strategy, strategyName: $strategyName) {
    profile { ${PROFILE_ROW} }
    rollout { ${ROLLOUT_ROW} }
  }
}`;

export const DELETE_PROFILE = `
mutation DeleteProfile($name: String!, $strategy: RolloutStrategyInput, $strategyName: String) {
  deleteProfile(name: $name, strategy: $strategy, strategyName: $strategyName) {
    profile { ${PROFILE_ROW} }
    rollout { ${ROLLOUT_ROW} }
  }
}`;

/** `clusters get --show-sources`: the effective state, field by field with what set it. */
export const GET_CLUSTER_SOURCES = `
query GetClusterSources($id: ID!) {
  cluster(id: $id) {
    id name labels karpenter { generation }
    effectiveState {
      fields { field value source profile profileRevision }
      profiles { name priority revision }
      overrides
      ignored { field profile reason }
    }
  }
}`;

export const RESET_CLUSTER_OVERRIDE = `
mutation ResetClusterOverride($clusterId: ID!, $field: String!, $expectedGeneration: Int) {
  resetClusterOverride(clusterId: $clusterId, field: $field, expectedGeneration: $expectedGeneration) { ${CLUSTER_ACK} }
}`;

const STRATEGY_ROW = `name maxFailures waveTimeoutSeconds maxNodeClaimLaunchFailures maxPendingPodSeconds
  stages { selector percent count minHealthySeconds pauseSeconds approval }`;

export const LIST_STRATEGIES = `query ListRolloutStrategies { rolloutStrategies { ${STRATEGY_ROW} } }`;

export const GET_STRATEGY = `
query GetRolloutStrategy($name: String!) { rolloutStrategy(name: $name) { ${STRATEGY_ROW} } }`;

export const CREATE_STRATEGY = `
mutation CreateRolloutStrategy($input: CreateRolloutStrategyInput!) {
  createRolloutStrategy(input: $input) { name }
}`;

export const UPDATE_STRATEGY = `
mutation UpdateRolloutStrategy($name: String!, $input: RolloutStrategySpecInput!) {
  updateRolloutStrategy(name: $name, input: $input) { name }
}`;

export const DELETE_STRATEGY = `
mutation DeleteRolloutStrategy($name: String!) { deleteRolloutStrategy(name: $name) { name } }`;
export const RESET_CLUSTER_OVERRIDES = `
mutation ResetClusterOverrides($clusterId: ID!, $expectedGeneration: Int) {
  resetClusterOverrides(clusterId: $clusterId, expectedGeneration: $expectedGeneration) { ${CLUSTER_ACK} }
}`;

/** kfleet apply / export: every cluster the token sees, with what apply checks and compares. */
export const CLUSTER_OVERRIDES_PAGE = `
query ClusterOverridesPage($first: Int, $after: String) {
  clusters(first: $first, after: $after) {
    nodes { id name platform topology managementCluster labels overrides karpenter { generation } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const SET_CLUSTER_OVERRIDES = `
mutation SetClusterOverrides($clusterId: ID!, $overrides: JSON!, $expectedGeneration: Int) {
  setClusterOverrides(clusterId: $clusterId, overrides: $overrides, expectedGeneration: $expectedGeneration) { ${CLUSTER_ACK} }
}`;

export const CLUSTER_OVERRIDES = `
query ClusterOverrides($id: ID!) { cluster(id: $id) { overrides karpenter { generation } } }`;
