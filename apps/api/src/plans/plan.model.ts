import { Field, ID, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { Connection } from '../common/connection.js';
import { DateTimeScalar } from '../common/date-time.scalar.js';
import { JSONScalar } from '../common/json.scalar.js';
import { SetKarpenterInput } from '../clusters/dto/cluster.inputs.js';

export enum ChangePlanClusterState {
  PENDING = 'PENDING',
  PLANNED = 'PLANNED',
  NOT_PLANNED = 'NOT_PLANNED',
  FAILED = 'FAILED',
}
registerEnumType(ChangePlanClusterState, {
  name: 'ChangePlanClusterState',
  description:
    'PENDING: the sidecar has not answered yet. PLANNED: every object was dry-run (objects may carry errors). ' +
    'NOT_PLANNED: not sent, with the reason (Stale, Paused, UnsupportedForTopology, UnsupportedChange, SidecarOutdated, DesiredStateMoved). ' +
    'FAILED: the sidecar could not plan (its reason), or no answer before the plan expired (NoAnswer).',
});

export enum PlannedAction {
  CREATED = 'CREATED',
  CHANGED = 'CHANGED',
  DELETED = 'DELETED',
  UNCHANGED = 'UNCHANGED',
}
registerEnumType(PlannedAction, { name: 'PlannedAction' });

@InputType()
export class PlanNodePoolInput {
  @Field()
  name!: string;

  @Field(() => JSONScalar, {
    description:
      "karpenter.sh/v1 NodePool spec; the plan shows each cluster's API server's verdict, applyPlan checks it against the CRD.",
  })
  spec!: unknown;
}

@InputType({ description: 'One cluster (clusterId) or a label selector, and the change.' })
export class PlanChangeInput {
  @Field(() => ID, { nullable: true })
  clusterId?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Kubernetes label selector; within the token scope.',
  })
  labelSelector?: string | null;

  @Field(() => SetKarpenterInput, {
    nullable: true,
    description: 'What setKarpenter would be given (expectedGeneration is not taken here).',
  })
  change?: SetKarpenterInput | null;

  @Field(() => PlanNodePoolInput, { nullable: true })
  upsertNodePool?: PlanNodePoolInput | null;

  @Field(() => String, { nullable: true, description: 'A NodePool to delete.' })
  deleteNodePool?: string | null;
}

@ObjectType({
  description: 'One field that would change; before/after absent (null) when it is not there.',
})
export class FieldDiff {
  @Field({ description: 'e.g. .spec.template.spec.expireAfter' })
  path!: string;

  @Field(() => JSONScalar, { nullable: true })
  before!: unknown;

  @Field(() => JSONScalar, { nullable: true })
  after!: unknown;
}

@ObjectType({ description: 'A refusal as the API server gave it.' })
export class PlanValidationError {
  @Field({
    description: 'The field the API server named (e.g. spec.limits.cpu); empty when it named none.',
  })
  field!: string;

  @Field()
  message!: string;

  @Field(() => String, { nullable: true })
  reason!: string | null;
}

@ObjectType()
export class PlannedObject {
  @Field({ description: 'workload, or management (hosted and Cluster API operands).' })
  target!: string;

  @Field()
  apiVersion!: string;

  @Field()
  kind!: string;

  @Field(() => String, { nullable: true })
  namespace!: string | null;

  @Field()
  name!: string;

  @Field(() => PlannedAction)
  action!: PlannedAction;

  @Field(() => [FieldDiff], {
    description:
      'CHANGED: the live object against what the API server would store (defaults and admission included); CREATED: every field it would be stored with.',
  })
  diff!: FieldDiff[];

  @Field(() => Int, { description: 'Fields left out of diff (it lists at most 128).' })
  moreFields!: number;

  @Field(() => [PlanValidationError])
  errors!: PlanValidationError[];
}

@ObjectType()
export class ChangePlanCluster {
  @Field(() => ID, { description: "The cluster's global ID." })
  clusterId!: string;

  @Field()
  clusterUid!: string;

  @Field()
  clusterName!: string;

  @Field(() => Int, { description: 'The desired generation the plan was computed against.' })
  generation!: number;

  @Field(() => ChangePlanClusterState)
  state!: ChangePlanClusterState;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => String, { nullable: true })
  message!: string | null;

  @Field(() => [PlannedObject])
  objects!: PlannedObject[];

  @Field(() => DateTimeScalar, { nullable: true })
  completedAt!: Date | null;
}

@ObjectType()
export class ChangePlanClusterConnection extends Connection(
  'ChangePlanCluster',
  ChangePlanCluster,
) {}

@ObjectType({ description: 'Clusters by state, and the objects of the PLANNED ones by action.' })
export class ChangePlanCounts {
  @Field(() => Int)
  total!: number;

  @Field(() => Int)
  pending!: number;

  @Field(() => Int)
  planned!: number;

  @Field(() => Int)
  notPlanned!: number;

  @Field(() => Int)
  failed!: number;

  @Field(() => Int, { description: 'PLANNED clusters whose API server refused an object.' })
  invalid!: number;

  @Field(() => Int)
  created!: number;

  @Field(() => Int)
  changed!: number;

  @Field(() => Int)
  deleted!: number;

  @Field(() => Int)
  unchanged!: number;
}

@ObjectType({
  description:
    'A proposed change planned cluster by cluster with server-side dry runs; nothing is written and desired state does not move. ' +
    'Expires 15 minutes after creation; applyPlan applies it unless a cluster moved since. See docs/DESIGN.md § Plans.',
})
export class ChangePlan {
  @Field(() => ID)
  id!: string;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar)
  expiresAt!: Date;

  @Field()
  expired!: boolean;

  @Field()
  createdBy!: string;

  @Field(() => ID, { nullable: true, description: 'The one cluster asked for, if any.' })
  clusterId!: string | null;

  @Field(() => String, { nullable: true })
  labelSelector!: string | null;

  @Field(() => JSONScalar, { description: 'The desired-state change, as applyPlan applies it.' })
  change!: unknown;

  @Field(() => DateTimeScalar, { nullable: true })
  appliedAt!: Date | null;

  @Field(() => String, { nullable: true })
  appliedBy!: string | null;

  @Field(() => ID, {
    nullable: true,
    description: 'The rollout started from this plan (startRollout(planId)); it is then used up.',
  })
  rolloutId!: string | null;

  @Field(() => ChangePlanCounts, { description: 'Over every cluster of the plan (in scope).' })
  counts!: ChangePlanCounts;
}

@ObjectType({
  description:
    'One wave a rollout of the plan would run: its size, and the first clusters of it by name (sample).',
})
export class PlanWave {
  @Field(() => Int)
  index!: number;

  @Field(() => Int, { description: 'Clusters in this wave.' })
  size!: number;

  @Field(() => [String], { description: 'The first `sample` of them, in the order applied.' })
  clusterNames!: string[];

  @Field(() => Int, { description: 'How many of the wave clusterNames leaves out.' })
  more!: number;
}
