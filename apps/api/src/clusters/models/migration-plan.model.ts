import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import { DateTimeScalar } from '../../common/date-time.scalar.js';
import { JSONScalar } from '../../common/json.scalar.js';

@ObjectType({
  description:
    'A NodePool proposed in place of one or more Cluster Autoscaler groups of one shape.',
})
export class ProposedNodePool {
  @Field()
  name!: string;

  @Field(() => JSONScalar, {
    description: 'The karpenter.sh/v1 NodePool spec, as it would be stored.',
  })
  spec!: unknown;

  @Field(() => [String], { description: 'The groups it replaces, as Kind/name.' })
  replaces!: string[];

  @Field(() => [String], { description: 'One sentence per choice (types, zones, limits, ...).' })
  explanations!: string[];
}

@ObjectType({ description: 'A Cluster Autoscaler setting no NodePool field can say.' })
export class NotExpressibleSetting {
  @Field({ description: 'Kind/name of the group, or ClusterAutoscaler/default.' })
  object!: string;

  @Field()
  what!: string;

  @Field()
  reason!: string;
}

@ObjectType({
  description:
    "The sidecar's proposal for moving a cluster from the Cluster Autoscaler to Karpenter.",
})
export class MigrationPlan {
  @Field(() => [ProposedNodePool])
  nodePools!: ProposedNodePool[];

  @Field(() => JSONScalar, { description: 'NodeClass overrides the plan sets (may be {}).' })
  nodeClassOverrides!: unknown;

  @Field(() => [String])
  nodeClassExplanations!: string[];

  @Field(() => [NotExpressibleSetting])
  notExpressible!: NotExpressibleSetting[];

  @Field(() => [String], { description: 'Choices about the whole plan (groups left out, ...).' })
  explanations!: string[];

  @Field(() => DateTimeScalar, { description: 'When the sidecar computed it.' })
  computedAt!: Date;

  @Field(() => Int, {
    description: 'The generation the cluster had observed when the report carrying it was sent.',
  })
  observedGeneration!: number;
}

@ObjectType({
  description:
    'migrationPlan: the plan, or null with the reason (no Cluster Autoscaler in play, no report yet).',
})
export class MigrationPlanResult {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => MigrationPlan, { nullable: true })
  plan!: MigrationPlan | null;

  @Field(() => String, { nullable: true, description: 'Why there is no plan.' })
  reason!: string | null;

  @Field(() => Int, {
    description:
      "The cluster's desired-state generation now: applyMigrationPlan's expectedGeneration.",
  })
  generation!: number;
}
