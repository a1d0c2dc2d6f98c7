import { Field, InputType, Int } from '@nestjs/graphql';
import { JSONScalar } from '../../common/json.scalar.js';
import { ClusterAutoscalerMode, KarpenterLogLevel } from '../../clusters/models/cluster.model.js';

@InputType()
export class RolloutNodePoolInput {
  @Field()
  name!: string;

  @Field(() => JSONScalar, {
    description: 'karpenter.sh/v1 NodePool spec, checked against the real CRD.',
  })
  spec!: unknown;
}

@InputType({
  description:
    'The change applied to every cluster; give at least one field, at most one NodePool operation.',
})
export class RolloutChangeInput {
  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;

  @Field(() => ClusterAutoscalerMode, { nullable: true })
  clusterAutoscalerMode?: ClusterAutoscalerMode | null;

  @Field(() => KarpenterLogLevel, { nullable: true })
  logLevel?: KarpenterLogLevel | null;

  @Field(() => JSONScalar, { nullable: true, description: 'Replaces the feature gate map.' })
  featureGates?: unknown;

  @Field(() => RolloutNodePoolInput, { nullable: true })
  upsertNodePool?: RolloutNodePoolInput | null;

  @Field(() => String, {
    nullable: true,
    description: 'NodePool name; clusters without it are SKIPPED.',
  })
  deleteNodePool?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Upgrade (or roll back) Karpenter: a release this fleet ships CRDs for.',
  })
  karpenterVersion?: string | null;

  @Field(() => String, { nullable: true, description: 'Operand image by digest.' })
  operandImage?: string | null;
}

@InputType({
  description:
    'A cumulative share of the selected clusters: exactly one of percent (1–100) or count.',
})
export class RolloutWaveInput {
  @Field(() => Int, { nullable: true })
  percent?: number | null;

  @Field(() => Int, { nullable: true })
  count?: number | null;
}

@InputType()
export class RolloutStrategyInput {
  @Field(() => [RolloutWaveInput], {
    nullable: true,
    description:
      'Default: 1 cluster, then 10 %, 50 %, 100 %. Steps that add no cluster are dropped; the rest of the set always forms a last wave.',
  })
  waves?: RolloutWaveInput[] | null;

  @Field(() => Int, {
    nullable: true,
    description: 'How long each cluster must stay healthy (0–86400, default 60).',
  })
  minHealthySeconds?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Failed clusters tolerated before the rollout stops (default 0).',
  })
  maxFailures?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Per wave; must exceed minHealthySeconds (default 1800).',
  })
  waveTimeoutSeconds?: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      'Health gate: a changed cluster reporting more NodeClaims whose Launched condition is False fails (NodeClaimLaunchFailures). Default off.',
  })
  maxNodeClaimLaunchFailures?: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      'Health gate: a changed cluster with an unschedulable pod pending longer than this (1–604800 s) fails (PodsPendingTooLong). Default off.',
  })
  maxPendingPodSeconds?: number | null;
}
