import { Field, InputType, Int } from '@nestjs/graphql';
import { JSONScalar } from '../../common/json.scalar.js';
import {
  ClusterAutoscalerMode,
  KarpenterLogLevel,
  Platform,
  Topology,
} from '../models/cluster.model.js';

@InputType()
export class RegisterClusterInput {
  @Field({ description: 'DNS-1123 label, unique in the fleet.' })
  name!: string;

  @Field(() => Topology)
  topology!: Topology;

  @Field(() => Platform)
  platform!: Platform;

  @Field()
  region!: string;

  @Field(() => String, { nullable: true })
  infraID?: string | null;

  @Field(() => JSONScalar, { nullable: true, description: 'Kubernetes-style labels.' })
  labels?: unknown;

  @Field(() => String, { nullable: true })
  managementCluster?: string | null;

  @Field(() => String, { nullable: true })
  hcpNamespace?: string | null;
}

@InputType({ description: 'Fields left out keep their current value.' })
export class SetKarpenterInput {
  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  paused?: boolean | null;

  @Field(() => ClusterAutoscalerMode, { nullable: true })
  clusterAutoscalerMode?: ClusterAutoscalerMode | null;

  @Field(() => KarpenterLogLevel, { nullable: true })
  logLevel?: KarpenterLogLevel | null;

  @Field(() => JSONScalar, { nullable: true })
  featureGates?: unknown;

  @Field(() => Int, {
    nullable: true,
    description: 'Optimistic concurrency: fail with CONFLICT unless generation is still this.',
  })
  expectedGeneration?: number | null;
}

@InputType()
export class UpsertNodePoolInput {
  @Field()
  name!: string;

  @Field(() => JSONScalar, { description: 'karpenter.sh/v1 NodePool spec.' })
  spec!: unknown;

  @Field(() => Int, { nullable: true })
  expectedGeneration?: number | null;
}

@InputType()
export class ClusterFilter {
  @Field(() => Platform, { nullable: true })
  platform?: Platform | null;

  @Field(() => Topology, { nullable: true })
  topology?: Topology | null;

  @Field(() => Boolean, { nullable: true })
  karpenterEnabled?: boolean | null;

  @Field(() => String, { nullable: true, description: 'Substring of the cluster name.' })
  nameContains?: string | null;
}
