import { DateTimeScalar } from '../../common/date-time.scalar.js';
import { Field, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { Connection } from '../../common/connection.js';
import { JSONScalar } from '../../common/json.scalar.js';
import { Node } from '../../common/node.interface.js';

export enum Platform {
  AWS = 'AWS',
  CAPI = 'CAPI',
  AZURE = 'AZURE',
}
export enum Topology {
  STANDALONE = 'STANDALONE',
  HOSTED = 'HOSTED',
}
export enum ClusterAutoscalerMode {
  KEEP = 'KEEP',
  DISABLE = 'DISABLE',
  MIGRATE = 'MIGRATE',
}
export enum KarpenterLogLevel {
  debug = 'debug',
  info = 'info',
  error = 'error',
}
registerEnumType(Platform, { name: 'Platform' });
registerEnumType(Topology, { name: 'Topology' });
registerEnumType(ClusterAutoscalerMode, {
  name: 'ClusterAutoscalerMode',
  description:
    'KEEP the Cluster Autoscaler, DISABLE it (kept copy restored on KEEP), or run both as a visible MIGRATE state.',
});
registerEnumType(KarpenterLogLevel, { name: 'KarpenterLogLevel' });
export enum ClusterHealthState {
  PAUSED = 'PAUSED',
  STALE = 'STALE',
  DEGRADED = 'DEGRADED',
  PROGRESSING = 'PROGRESSING',
  HEALTHY = 'HEALTHY',
}
registerEnumType(ClusterHealthState, {
  name: 'ClusterHealthState',
  description:
    'One state per cluster, the first that holds in this order: PAUSED (the fleet does not reconcile it), STALE (no report for longer than the staleness threshold: what it last said is old news), DEGRADED (Degraded=True), PROGRESSING (the sidecar has not applied the latest generation yet, or reports Progressing=True), HEALTHY. fleetSummary.byHealth counts the same states.',
});
export enum DriftPolicy {
  CORRECT = 'CORRECT',
  REPORT = 'REPORT',
}
registerEnumType(DriftPolicy, {
  name: 'DriftPolicy',
  description:
    'What the sidecar does when someone else changes a field the fleet manages or deletes an object it owns: CORRECT puts it back at once and reports the correction (the default); REPORT leaves it in place and reports Drifted=True.',
});

@ObjectType({ description: 'A karpenter.sh/v1 NodePool the fleet keeps on a cluster.' })
export class NodePool {
  @Field()
  name!: string;

  @Field(() => JSONScalar, { description: 'The NodePool spec, as karpenter.sh/v1 defines it.' })
  spec!: unknown;

  @Field(() => DateTimeScalar)
  updatedAt!: Date;
}

@ObjectType({ description: 'Desired Karpenter state; every change bumps generation.' })
export class KarpenterState {
  @Field(() => Int)
  generation!: number;

  @Field()
  enabled!: boolean;

  @Field()
  paused!: boolean;

  @Field(() => ClusterAutoscalerMode)
  clusterAutoscalerMode!: ClusterAutoscalerMode;

  @Field(() => KarpenterLogLevel)
  logLevel!: KarpenterLogLevel;

  @Field(() => JSONScalar, { description: 'Feature gate name → enabled, e.g. {"Drift": true}.' })
  featureGates!: unknown;

  @Field(() => JSONScalar)
  nodeClassOverrides!: unknown;

  @Field(() => DriftPolicy)
  driftPolicy!: DriftPolicy;

  @Field(() => String, {
    nullable: true,
    description:
      'IAM role the operand assumes on a Cloud Credential Operator Manual/STS cluster; null elsewhere.',
  })
  webIdentityRoleArn!: string | null;

  @Field(() => [String], {
    description:
      'CAPI: instance types the fleet renders MachineDeployments for; empty is the worker template’s type.',
  })
  allowedInstanceTypes!: string[];
}

@ObjectType({ description: 'A Kubernetes-style condition reported by the cluster sidecar.' })
export class Condition {
  @Field()
  type!: string;

  @Field()
  status!: string;

  @Field()
  reason!: string;

  @Field()
  message!: string;

  @Field(() => DateTimeScalar)
  lastTransitionTime!: Date;
}

@ObjectType({ description: 'The sidecar as its last report described itself.' })
export class SidecarInfo {
  @Field(() => String, {
    nullable: true,
    description: 'Its release; null for a contract-1 sidecar, whose reports did not say.',
  })
  version!: string | null;

  @Field(() => Int, {
    description:
      'The newest order contract it speaks; the fleet sends it no order of a newer contract.',
  })
  contractVersion!: number;
}

@ObjectType({ description: 'What the sidecar found of the Cluster Autoscaler.' })
export class ClusterAutoscalerStatus {
  @Field(() => ClusterAutoscalerMode, { description: 'The mode the sidecar last applied.' })
  mode!: ClusterAutoscalerMode;

  @Field({ description: 'Present, Removed (kept aside by the fleet) or Absent.' })
  observed!: string;

  @Field(() => Int)
  machineAutoscalers!: number;

  @Field(() => [String], {
    nullable: true,
    description:
      'Where the sidecar tells them apart: the kinds through which the Cluster Autoscaler is in play now (ClusterAutoscaler, MachineAutoscaler, MachineDeployment, MachineSet: a group with a node-group size annotation). Null where the sidecar does not say (standalone AWS).',
  })
  observedKinds?: string[] | null;
}

@ObjectType({
  description:
    "A NodeClass's MachineConfigPool (karpenter-<nodeclass>) as the Machine Config Operator reports it (standalone OpenShift).",
})
export class MachineConfigPoolStatus {
  @Field({ description: 'The NodeClass whose nodes the pool configures.' })
  nodeClass!: string;

  @Field({ description: 'The MachineConfigPool, karpenter-<nodeclass>.' })
  name!: string;

  @Field(() => Int)
  machineCount!: number;

  @Field(() => Int)
  updatedMachineCount!: number;

  @Field(() => Int, { description: 'Machines neither updated nor degraded.' })
  updatingMachineCount!: number;

  @Field(() => Int)
  degradedMachineCount!: number;

  @Field(() => Int)
  readyMachineCount!: number;

  @Field(() => String, {
    nullable: true,
    description:
      'The rendered configuration (rendered-<pool>-<hash>); null before the MCO rendered one.',
  })
  renderedConfig!: string | null;

  @Field(() => [Condition], { description: 'Updated, Updating and Degraded.' })
  conditions!: Condition[];
}

@ObjectType({ description: 'A field the fleet manages that someone else changed or removed.' })
export class DriftedField {
  @Field({ description: 'e.g. .spec.limits.cpu' })
  path!: string;

  @Field(() => String, {
    nullable: true,
    description:
      'The field manager that owns it now (managedFields), or that last wrote the object when the field was removed.',
  })
  manager!: string | null;
}

@ObjectType({ description: 'An object the fleet owns that someone else changed or deleted.' })
export class DriftEntry {
  @Field({ description: 'workload or management: the API server the object is on.' })
  target!: string;

  @Field()
  apiVersion!: string;

  @Field()
  kind!: string;

  @Field(() => String, { nullable: true })
  namespace!: string | null;

  @Field()
  name!: string;

  @Field({ description: 'Modified or Deleted.' })
  change!: string;

  @Field(() => [DriftedField])
  fields!: DriftedField[];

  @Field(() => Int, { description: 'Fields beyond those listed.' })
  moreFields!: number;

  @Field(() => DateTimeScalar)
  detectedAt!: Date;

  @Field(() => DateTimeScalar, {
    nullable: true,
    description: 'When the fleet put it back (policy CORRECT); null while it is drifted.',
  })
  correctedAt!: Date | null;
}

@ObjectType({
  description: "A NodeClaim's launch failure: Karpenter's Launched=False reason and message.",
})
export class NodeClaimLaunchFailure {
  @Field()
  reason!: string;

  @Field()
  message!: string;
}

@ObjectType({
  description:
    'A NodeClaim as the sidecar last reported it: what Karpenter launched or failed to launch.',
})
export class NodeClaimSummary {
  @Field()
  name!: string;

  @Field(() => String, { nullable: true })
  nodePool!: string | null;

  @Field(() => String, { nullable: true, description: 'The Node it registered as.' })
  nodeName!: string | null;

  @Field(() => String, { nullable: true })
  instanceType!: string | null;

  @Field(() => String, { nullable: true })
  zone!: string | null;

  @Field(() => String, { nullable: true, description: 'on-demand, spot or reserved.' })
  capacityType!: string | null;

  @Field({
    description:
      'Its most advanced true condition (Launched, Registered, Initialized, Ready), Pending or Terminating.',
  })
  state!: string;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => NodeClaimLaunchFailure, { nullable: true })
  launchFailure!: NodeClaimLaunchFailure | null;
}

@ObjectType()
export class ClusterStatus {
  @Field(() => Int, { description: 'The desired generation the sidecar last applied.' })
  observedGeneration!: number;

  @Field(() => [Condition])
  conditions!: Condition[];

  @Field(() => DateTimeScalar, { nullable: true })
  lastReportAt!: Date | null;

  @Field({ description: 'No report for longer than the staleness threshold.' })
  stale!: boolean;

  @Field(() => JSONScalar, {
    description: 'Nodes, NodeClaims by state, vCPUs, pending pods, CSR counts.',
  })
  metrics!: unknown;

  @Field(() => ClusterAutoscalerStatus, { nullable: true })
  clusterAutoscaler!: ClusterAutoscalerStatus | null;

  @Field(() => [MachineConfigPoolStatus], {
    nullable: true,
    description:
      "Each NodeClass's MachineConfigPool; null where the platform has none (hosted) or before a report.",
  })
  machineConfigPools!: MachineConfigPoolStatus[] | null;

  @Field(() => [DriftEntry], {
    nullable: true,
    description:
      'Objects the fleet owns that someone else changed or deleted: open ones (Drifted=True), then corrections of the last hour. Null before a report or from a sidecar that does not watch for drift.',
  })
  drift!: DriftEntry[] | null;

  @Field({
    description: 'The Drifted condition is True: hand edits left in place or being put back.',
  })
  drifted!: boolean;

  @Field(() => [NodeClaimSummary], {
    nullable: true,
    description:
      'What Karpenter launched, as the sidecar last reported it: every launch failure, then the newest NodeClaims, at most 20, newest first. Null before a report or from a sidecar that does not report them.',
  })
  nodeClaims!: NodeClaimSummary[] | null;

  @Field(() => SidecarInfo, { nullable: true, description: 'Null until the sidecar reports.' })
  sidecar!: SidecarInfo | null;
}

@ObjectType({ implements: () => [Node] })
export class Cluster implements Node {
  __typename?: 'Cluster';

  @Field(() => ID)
  id!: string;

  @Field({ description: 'The raw cluster UID: the CLUSTER_ID its sidecar runs with.' })
  uid!: string;

  @Field()
  name!: string;

  @Field(() => Topology)
  topology!: Topology;

  @Field(() => Platform)
  platform!: Platform;

  @Field()
  region!: string;

  @Field(() => String, { nullable: true })
  infraID!: string | null;

  @Field(() => JSONScalar, { description: 'Kubernetes-style labels, used by selectors.' })
  labels!: unknown;

  @Field(() => String, { nullable: true })
  managementCluster!: string | null;

  @Field(() => String, { nullable: true })
  hcpNamespace!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'CAPI: the Cluster (cluster.x-k8s.io) the fleet runs Karpenter for.',
  })
  clusterApiName!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'CAPI: the Cluster’s namespace on the management cluster.',
  })
  clusterApiNamespace!: string | null;

  @Field(() => String, { nullable: true, description: 'CAPI: infrastructure provider (aws).' })
  infrastructureProvider!: string | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => KarpenterState)
  karpenter!: KarpenterState;

  @Field(() => ClusterStatus)
  status!: ClusterStatus;

  @Field(() => Boolean, { description: 'observedGeneration == generation' })
  inSync!: boolean;

  @Field(() => ClusterHealthState, {
    description:
      "The cluster's one health state (see ClusterHealthState); generation sync is generationSync.",
  })
  healthState!: ClusterHealthState;

  @Field({
    description:
      'Generation sync as its own fact, e.g. "applied generation 3 of 3" (or "applied generation 2 of 3" while the sidecar catches up).',
  })
  generationSync!: string;

  @Field(() => [NodePool])
  nodePools!: NodePool[];
}

@ObjectType()
@ObjectType('ClusterConnection')
export class ClusterConnection extends Connection('Cluster', Cluster, { extended: true }) {
  @Field(() => Int, {
    description:
      'The clusters that match: exact when totalCountIsExact, else more match than this (the limit a count stops at, TOTAL_COUNT_LIMIT, 1,000 by default).',
  })
  override totalCount!: number;

  @Field(() => Boolean, {
    description:
      'Whether totalCount is exact. Always for the whole fleet and a filter on only one of platform, topology, karpenterEnabled: true or inSync: true (maintained counts), and when the first page holds every match; otherwise when at most TOTAL_COUNT_LIMIT clusters match.',
  })
  totalCountIsExact!: boolean;
}

@ObjectType()
export class RegisterClusterPayload {
  @Field(() => Cluster)
  cluster!: Cluster;

  @Field({ description: 'The sidecar report token; shown once, only its hash is stored.' })
  reportToken!: string;

  @Field({ description: 'The sidecar Redis password (its own ACL user); shown once.' })
  redisPassword!: string;

  @Field({ description: 'The Redis URL the sidecar takes orders from, credentials included.' })
  redisUrl!: string;

  @Field({ description: 'Manifests (YAML) that deploy the sidecar with its credentials.' })
  bootstrapManifest!: string;
}

@ObjectType()
export class RotateClusterCredentialsPayload extends RegisterClusterPayload {
  @Field(() => DateTimeScalar, {
    description: 'Until then the previous credentials still work.',
  })
  previousValidUntil!: Date;
}
