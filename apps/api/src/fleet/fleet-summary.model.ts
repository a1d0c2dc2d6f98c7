import { Field, Int, ObjectType } from '@nestjs/graphql';

@ObjectType()
export class CountByValue {
  @Field()
  value!: string;

  @Field(() => Int)
  count!: number;
}

@ObjectType()
export class ConditionCount {
  @Field()
  type!: string;

  @Field()
  status!: string;

  @Field()
  reason!: string;

  @Field(() => Int)
  count!: number;
}

@ObjectType({
  description:
    'Clusters by their one health state (Cluster.healthState): mutually exclusive, they add up to clusters.',
})
export class HealthStateCounts {
  @Field(() => Int)
  healthy!: number;

  @Field(() => Int)
  progressing!: number;

  @Field(() => Int)
  degraded!: number;

  @Field(() => Int, { description: 'Not paused, and no report for longer than the threshold.' })
  stale!: number;

  @Field(() => Int)
  paused!: number;
}

@ObjectType({ description: 'Counts over the clusters the caller may see; never scans history.' })
export class FleetSummary {
  @Field(() => Int)
  clusters!: number;

  @Field(() => Int, {
    description:
      'Clusters whose sidecar applied the latest generation: generation sync, a fact of its own that overlaps the health states (a degraded cluster can be in sync).',
  })
  inSync!: number;

  @Field(() => HealthStateCounts)
  byHealth!: HealthStateCounts;

  @Field(() => Int)
  stale!: number;

  @Field(() => Int)
  karpenterEnabled!: number;

  @Field(() => Int)
  clusterAutoscalerDisabled!: number;

  @Field(() => Int)
  paused!: number;

  @Field(() => [CountByValue])
  byPlatform!: CountByValue[];

  @Field(() => [CountByValue])
  byTopology!: CountByValue[];

  @Field(() => [CountByValue], {
    description:
      'Hosted clusters by the mode their sidecar reports (condition HostedMode=True, its reason: AutoNode or Converged); a hosted cluster that has not reported a mode yet is not counted.',
  })
  byHostedMode!: CountByValue[];

  @Field(() => [CountByValue], {
    description:
      'Clusters by the sidecar release they last reported ("unreported" before a report or from a contract-1 sidecar).',
  })
  bySidecarVersion!: CountByValue[];

  @Field(() => [ConditionCount])
  byCondition!: ConditionCount[];
}
