import { Field, InputType, Int, registerEnumType } from '@nestjs/graphql';
import { JSONScalar } from '../../common/json.scalar.js';
import {
  ClusterAutoscalerMode,
  DriftPolicy,
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

  @Field(() => String, {
    nullable: true,
    description:
      'CAPI: name of the Cluster (cluster.x-k8s.io) on the management cluster; on OpenShift, the infrastructure name.',
  })
  clusterApiName?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'CAPI: namespace of the Cluster on the management cluster (default openshift-cluster-api, OpenShift’s own Cluster API).',
  })
  clusterApiNamespace?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'CAPI: infrastructure provider of the Cluster (aws); default aws.',
  })
  infrastructureProvider?: string | null;
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

  @Field(() => String, {
    nullable: true,
    description:
      'Karpenter release for this cluster (one this fleet ships CRDs for, e.g. 1.14.1); overrides the fleet default.',
  })
  karpenterVersion?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Operand image by digest (registry/repository@sha256:…), e.g. a mirror’s copy.',
  })
  operandImage?: string | null;

  @Field(() => DriftPolicy, {
    nullable: true,
    description:
      'CORRECT: hand edits of what the fleet manages are put back at once; REPORT: left in place and reported.',
  })
  driftPolicy?: DriftPolicy | null;

  @Field(() => String, {
    nullable: true,
    description: 'SQS queue Karpenter reads Spot interruption events from.',
  })
  interruptionQueue?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'IAM role the operand assumes with its service-account token on a Cloud Credential Operator Manual/STS cluster (arn:aws:iam::<account>:role/<name>).',
  })
  webIdentityRoleArn?: string | null;

  @Field(() => [String], {
    nullable: true,
    description:
      'CAPI: instance types the fleet renders MachineDeployments for (one per type and failure domain); an empty list is the worker template’s type.',
  })
  allowedInstanceTypes?: string[] | null;

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
export class ConditionFilter {
  @Field()
  type!: string;

  @Field(() => String, { nullable: true })
  status?: string | null;

  @Field(() => String, { nullable: true })
  reason?: string | null;
}

@InputType()
export class ClusterFilter {
  @Field(() => Platform, { nullable: true })
  platform?: Platform | null;

  @Field(() => Topology, { nullable: true })
  topology?: Topology | null;

  @Field(() => String, {
    nullable: true,
    description: 'Kubernetes label selector, e.g. "env=prod,region in (us-east-1,eu-west-1)".',
  })
  labelSelector?: string | null;

  @Field(() => Boolean, { nullable: true })
  karpenterEnabled?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'observedGeneration == generation.' })
  inSync?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  stale?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'The cluster reports Drifted=True: objects the fleet manages were hand-edited.',
  })
  drifted?: boolean | null;

  @Field(() => ConditionFilter, { nullable: true })
  condition?: ConditionFilter | null;

  @Field(() => String, { nullable: true, description: 'Substring of the cluster name.' })
  nameContains?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'Clusters served from this management cluster (hosted control planes, Cluster API clusters with a separate management cluster), by its registered name.',
  })
  managementCluster?: string | null;
}

export enum ClusterOrderField {
  NAME = 'NAME',
  LAST_REPORT = 'LAST_REPORT',
  CREATED_AT = 'CREATED_AT',
}
export enum OrderDirection {
  ASC = 'ASC',
  DESC = 'DESC',
}
registerEnumType(ClusterOrderField, { name: 'ClusterOrderField' });
registerEnumType(OrderDirection, { name: 'OrderDirection' });

@InputType()
export class ClusterOrder {
  @Field(() => ClusterOrderField)
  field!: ClusterOrderField;

  @Field(() => OrderDirection, { defaultValue: OrderDirection.ASC })
  direction!: OrderDirection;
}

@InputType()
export class NodeClassOverridesInput {
  @Field(() => JSONScalar, {
    nullable: true,
    description: 'EC2NodeClass blockDeviceMappings (replace).',
  })
  blockDeviceMappings?: unknown;

  @Field(() => JSONScalar, { nullable: true, description: 'Tags merged over the cluster tags.' })
  tags?: unknown;

  @Field(() => JSONScalar, { nullable: true })
  metadataOptions?: unknown;

  @Field(() => JSONScalar, { nullable: true })
  kubelet?: unknown;

  @Field(() => Int, { nullable: true })
  expectedGeneration?: number | null;
}
