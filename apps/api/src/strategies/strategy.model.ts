import { Field, InputType, Int, ObjectType } from '@nestjs/graphql';
import { DateTimeScalar } from '../common/date-time.scalar.js';

@ObjectType({
  description:
    'One stage: the clusters it adds (the remaining ones a selector matches, or a cumulative percent/count of the ' +
    "rollout's clusters), how long each must stay healthy, and its gates: a timed pause, then an approval.",
})
export class RolloutStrategyStage {
  @Field(() => String, { nullable: true })
  selector!: string | null;

  @Field(() => Int, { nullable: true })
  percent!: number | null;

  @Field(() => Int, { nullable: true })
  count!: number | null;

  @Field(() => Int)
  minHealthySeconds!: number;

  @Field(() => Int, { description: 'Seconds to wait once the stage is healthy (0: none).' })
  pauseSeconds!: number;

  @Field({ description: 'A human approves (approveRolloutStage) before the next stage starts.' })
  approval!: boolean;
}

@ObjectType({
  description:
    'A named, reusable rollout strategy: startRollout, createProfile, updateProfile and deleteProfile name it ' +
    "(strategyName), and its stages are copied into the rollout's waves at start. See docs/ROLLOUTS.md.",
})
export class RolloutStrategyDefinition {
  @Field({ description: 'DNS-1123 label, unique.' })
  name!: string;

  @Field(() => [RolloutStrategyStage])
  stages!: RolloutStrategyStage[];

  @Field(() => Int, { description: 'Failed clusters tolerated before the rollout stops.' })
  maxFailures!: number;

  @Field(() => Int, { description: 'Per wave; must exceed every stage minHealthySeconds.' })
  waveTimeoutSeconds!: number;

  @Field(() => Int, {
    nullable: true,
    description:
      'A changed cluster reporting more NodeClaims whose Launched condition is False fails (null: off).',
  })
  maxNodeClaimLaunchFailures!: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'A changed cluster with an unschedulable pod pending longer fails (null: off).',
  })
  maxPendingPodSeconds!: number | null;

  @Field()
  createdBy!: string;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar)
  updatedAt!: Date;
}

@InputType({ description: 'Exactly one of selector, percent (1–100) or count.' })
export class RolloutStrategyStageInput {
  @Field(() => String, {
    nullable: true,
    description:
      'Kubernetes label selector: the clusters not taken by an earlier stage it matches.',
  })
  selector?: string | null;

  @Field(() => Int, { nullable: true, description: "Cumulative share of the rollout's clusters." })
  percent?: number | null;

  @Field(() => Int, { nullable: true, description: 'Cumulative number of clusters.' })
  count?: number | null;

  @Field(() => Int, { nullable: true, description: '0–86400, default 60.' })
  minHealthySeconds?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Timed pause after the stage is healthy, 0–604800 (default 0).',
  })
  pauseSeconds?: number | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Approval gate after the stage (default false).',
  })
  approval?: boolean | null;
}

@InputType({
  description: 'The whole definition: an update replaces it (omitted fields take their defaults).',
})
export class RolloutStrategySpecInput {
  @Field(() => [RolloutStrategyStageInput], { description: '1–20 stages, in order.' })
  stages!: RolloutStrategyStageInput[];

  @Field(() => Int, { nullable: true, description: 'Default 0.' })
  maxFailures?: number | null;

  @Field(() => Int, { nullable: true, description: 'Default 1800.' })
  waveTimeoutSeconds?: number | null;

  @Field(() => Int, { nullable: true, description: 'Default off.' })
  maxNodeClaimLaunchFailures?: number | null;

  @Field(() => Int, { nullable: true, description: '1–604800; default off.' })
  maxPendingPodSeconds?: number | null;
}

@InputType()
export class CreateRolloutStrategyInput extends RolloutStrategySpecInput {
  @Field({ description: 'DNS-1123 label.' })
  name!: string;
}
