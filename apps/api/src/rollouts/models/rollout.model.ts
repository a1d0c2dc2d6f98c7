import { DateTimeScalar } from '../../common/date-time.scalar.js';
import { Field, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { Connection } from '../../common/connection.js';
import { JSONScalar } from '../../common/json.scalar.js';
import { Node } from '../../common/node.interface.js';

export enum RolloutState {
  RUNNING = 'RUNNING',
  WAITING_APPROVAL = 'WAITING_APPROVAL',
  PAUSED = 'PAUSED',
  COMPLETED = 'COMPLETED',
  FAILED = 'FAILED',
  ABORTED = 'ABORTED',
}
export enum RolloutWaveState {
  PENDING = 'PENDING',
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
  SKIPPED = 'SKIPPED',
}
export enum RolloutClusterState {
  PENDING = 'PENDING',
  APPLYING = 'APPLYING',
  HEALTHY = 'HEALTHY',
  FAILED = 'FAILED',
  SKIPPED = 'SKIPPED',
}
registerEnumType(RolloutState, {
  name: 'RolloutState',
  description:
    'RUNNING: waves advance. WAITING_APPROVAL: the current wave succeeded and its stage has an approval gate; ' +
    'health is still judged, the next wave starts on approveRolloutStage. PAUSED: by pauseRollout; nothing advances until resumeRollout. ' +
    'FAILED: stopped by itself (more than maxFailures clusters Degraded, Stale or past the wave timeout; see reason); ' +
    'resumeRollout watches the failed clusters again and continues. COMPLETED: every wave done. ' +
    'ABORTED: by abortRollout; clusters already changed keep the change (nothing is reverted), the rest are SKIPPED.',
});
registerEnumType(RolloutWaveState, { name: 'RolloutWaveState' });
registerEnumType(RolloutClusterState, {
  name: 'RolloutClusterState',
  description:
    'PENDING: not changed yet. APPLYING: changed (generation bumped), waiting to report that generation healthy for ' +
    'minHealthySeconds. HEALTHY: did so. FAILED: Degraded or Stale after the change, or not healthy by the wave deadline. ' +
    'SKIPPED: not changed (rollout aborted, cluster deregistered or no longer selected, NodePool to delete absent).',
});

@ObjectType({ description: 'One cluster of a rollout.' })
export class RolloutClusterProgress {
  @Field(() => ID, { description: "The cluster's global ID." })
  clusterId!: string;

  @Field()
  clusterUid!: string;

  @Field()
  clusterName!: string;

  @Field(() => Int)
  wave!: number;

  @Field(() => RolloutClusterState)
  state!: RolloutClusterState;

  @Field(() => Int, {
    nullable: true,
    description: 'The generation the rollout produced; health is judged at or past it.',
  })
  generation!: number | null;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  appliedAt!: Date | null;

  @Field(() => DateTimeScalar, {
    nullable: true,
    description: 'Start of the current unbroken healthy streak.',
  })
  healthySince!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  finishedAt!: Date | null;
}

@ObjectType({ description: 'Clusters by state.' })
export class RolloutCounts {
  @Field(() => Int)
  total!: number;

  @Field(() => Int)
  pending!: number;

  @Field(() => Int)
  applying!: number;

  @Field(() => Int)
  healthy!: number;

  @Field(() => Int)
  failed!: number;

  @Field(() => Int)
  skipped!: number;
}

@ObjectType()
export class RolloutWave {
  @Field(() => Int, { description: '0 is the first wave.' })
  index!: number;

  @Field(() => RolloutWaveState)
  state!: RolloutWaveState;

  @Field(() => RolloutCounts)
  counts!: RolloutCounts;

  @Field(() => DateTimeScalar, { nullable: true })
  startedAt!: Date | null;

  @Field(() => DateTimeScalar, {
    nullable: true,
    description: 'Clusters not healthy by then fail (WaveTimeout).',
  })
  deadlineAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => String, {
    nullable: true,
    description: "A selector stage's label selector (the remaining clusters it matched at start).",
  })
  selector!: string | null;

  @Field(() => Int, {
    description: "How long each cluster must stay healthy (its stage's, else the rollout's).",
  })
  minHealthySeconds!: number;

  @Field(() => Int, { description: 'Timed pause once the wave succeeded, before the next one.' })
  pauseSeconds!: number;

  @Field({ description: 'The next wave waits for approveRolloutStage(stage: index).' })
  approval!: boolean;

  @Field(() => DateTimeScalar, {
    nullable: true,
    description: 'When the timed pause after this wave ends.',
  })
  resumeAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  approvedAt!: Date | null;

  @Field(() => String, { nullable: true })
  approvedBy!: string | null;

  @Field(() => [RolloutClusterProgress])
  clusters!: RolloutClusterProgress[];
}

@ObjectType()
export class RolloutStrategy {
  @Field(() => JSONScalar, {
    description:
      'Cumulative steps as given, e.g. [{"count":1},{"percent":10},{"percent":50},{"percent":100}]; for a named ' +
      'strategy, its stages as copied at start.',
  })
  waves!: unknown;

  @Field(() => String, {
    nullable: true,
    description:
      'The named strategy the waves were materialized from at start (a copy: later edits do not change this rollout).',
  })
  name!: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'A cluster with more NodeClaims whose Launched condition is False fails.',
  })
  maxNodeClaimLaunchFailures!: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'A cluster with an unschedulable pod pending longer fails.',
  })
  maxPendingPodSeconds!: number | null;

  @Field(() => Int)
  minHealthySeconds!: number;

  @Field(() => Int)
  maxFailures!: number;

  @Field(() => Int)
  waveTimeoutSeconds!: number;
}

@ObjectType({
  implements: () => [Node],
  description:
    'One desired-state change applied in waves to the clusters a selector picked at start (within the starting ' +
    "token's scope). Aborting stops further waves and does NOT revert clusters already changed. See docs/ROLLOUTS.md.",
})
export class Rollout implements Node {
  __typename?: 'Rollout';

  @Field(() => ID)
  id!: string;

  @Field()
  uid!: string;

  @Field(() => RolloutState)
  state!: RolloutState;

  @Field(() => String, {
    nullable: true,
    description: 'Why it stopped or paused, or how it completed.',
  })
  reason!: string | null;

  @Field({ description: 'The label selector, as given.' })
  selector!: string;

  @Field(() => JSONScalar, { description: 'The desired-state change applied to each cluster.' })
  change!: unknown;

  @Field(() => RolloutStrategy)
  strategy!: RolloutStrategy;

  @Field(() => Int, { description: 'Index of the wave in progress (or the last one).' })
  currentWave!: number;

  @Field(() => Int, {
    nullable: true,
    description: 'WAITING_APPROVAL: the wave (stage) whose approval gate holds the rollout.',
  })
  waitingStage!: number | null;

  @Field(() => RolloutCounts)
  counts!: RolloutCounts;

  @Field(() => [RolloutWave])
  waves!: RolloutWave[];

  @Field(() => String, {
    nullable: true,
    description:
      'The plan it was started from (startRollout(planId)): its clusters are applied only at the generation the plan was computed against.',
  })
  planId!: string | null;

  @Field()
  createdBy!: string;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar)
  updatedAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  finishedAt!: Date | null;
}

@ObjectType()
export class RolloutConnection extends Connection('Rollout', Rollout) {}
