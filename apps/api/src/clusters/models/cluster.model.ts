import { Field, GraphQLISODateTime, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { JSONScalar } from '../../common/json.scalar.js';

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
  description: 'KEEP the Cluster Autoscaler, DISABLE it (kept copy restored on KEEP), or run both as a visible MIGRATE state.',
});
registerEnumType(KarpenterLogLevel, { name: 'KarpenterLogLevel' });

@ObjectType({ description: 'A karpenter.sh/v1 NodePool the fleet keeps on a cluster.' })
export class NodePool {
  @Field()
  name!: string;

  @Field(() => JSONScalar, { description: 'The NodePool spec, as karpenter.sh/v1 defines it.' })
  spec!: unknown;

  @Field(() => GraphQLISODateTime)
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

  @Field(() => GraphQLISODateTime)
  lastTransitionTime!: Date;
}

@ObjectType()
export class ClusterStatus {
  @Field(() => Int, { description: 'The desired generation the sidecar last applied.' })
  observedGeneration!: number;

  @Field(() => [Condition])
  conditions!: Condition[];

  @Field(() => GraphQLISODateTime, { nullable: true })
  lastReportAt!: Date | null;
}

@ObjectType()
export class Cluster {
  @Field(() => ID)
  id!: string;

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

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => KarpenterState)
  karpenter!: KarpenterState;

  @Field(() => ClusterStatus)
  status!: ClusterStatus;

  @Field(() => Boolean, { description: 'observedGeneration == generation' })
  inSync!: boolean;

  @Field(() => [NodePool])
  nodePools!: NodePool[];
}

@ObjectType()
export class ClusterEdge {
  @Field()
  cursor!: string;

  @Field(() => Cluster)
  node!: Cluster;
}

@ObjectType()
export class PageInfo {
  @Field()
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

@ObjectType()
export class ClusterConnection {
  @Field(() => [ClusterEdge])
  edges!: ClusterEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  @Field(() => Int)
  totalCount!: number;
}

@ObjectType()
export class RegisterClusterPayload {
  @Field(() => Cluster)
  cluster!: Cluster;

  @Field({ description: 'The sidecar report token; shown once, only its hash is stored.' })
  reportToken!: string;
}
