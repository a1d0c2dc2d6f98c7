import { Field, ID, InputType, Int, ObjectType } from '@nestjs/graphql';
import { DateTimeScalar } from '../common/date-time.scalar.js';
import { JSONScalar } from '../common/json.scalar.js';
import { Rollout } from '../rollouts/models/rollout.model.js';

@ObjectType({
  description:
    'A named piece of Karpenter desired state bound to the clusters its selector matches, composed in priority ' +
    "order under each cluster's own overrides. Edits roll out through a rollout. See docs/PROFILES.md.",
})
export class Profile {
  @Field({ description: 'The raw profile UID.' })
  uid!: string;

  @Field({ description: 'DNS-1123 label, unique.' })
  name!: string;

  @Field({
    description: 'Kubernetes label selector of the clusters it binds to ("" is every cluster).',
  })
  selector!: string;

  @Field(() => Int, { description: "Higher wins over lower; a cluster's overrides win over all." })
  priority!: number;

  @Field(() => JSONScalar, {
    description:
      'Only the fields it sets: enabled, clusterAutoscalerMode, logLevel, featureGates, nodeClassOverrides, ' +
      'karpenterVersion, driftPolicy, nodePools {name: spec}.',
  })
  spec!: unknown;

  @Field(() => Int, { description: 'Bumped by every updateProfile; clusters are bound to one.' })
  revision!: number;

  @Field({ description: 'Deleted: its rollout is unbinding it from its clusters.' })
  deleting!: boolean;

  @Field(() => Int, { description: 'Clusters bound to it (at any revision).' })
  boundClusters!: number;

  @Field(() => Int, { description: 'Clusters bound to its current revision.' })
  currentClusters!: number;

  @Field()
  createdBy!: string;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar)
  updatedAt!: Date;
}

@ObjectType()
export class ProfileChangePayload {
  @Field(() => Profile, { nullable: true, description: 'Null once a deleted profile is gone.' })
  profile!: Profile | null;

  @Field(() => Rollout, {
    nullable: true,
    description:
      'The rollout taking the change to the affected clusters; null when none is affected.',
  })
  rollout!: Rollout | null;
}

@InputType()
export class CreateProfileInput {
  @Field()
  name!: string;

  @Field()
  selector!: string;

  @Field(() => Int, { description: '0–1000.' })
  priority!: number;

  @Field(() => JSONScalar)
  spec!: unknown;
}

@InputType({
  description: 'What to change; fields left out keep their value (spec is replaced whole).',
})
export class UpdateProfileInput {
  @Field(() => String, { nullable: true })
  selector?: string | null;

  @Field(() => Int, { nullable: true })
  priority?: number | null;

  @Field(() => JSONScalar, { nullable: true })
  spec?: unknown;
}

@ObjectType({ description: 'One field of a cluster’s effective desired state and what set it.' })
export class EffectiveField {
  @Field({ description: 'A setting, or nodePools.<name>.' })
  field!: string;

  @Field(() => JSONScalar, { nullable: true })
  value!: unknown;

  @Field({ description: 'default, profile or override.' })
  source!: string;

  @Field(() => String, { nullable: true })
  profile!: string | null;

  @Field(() => Int, { nullable: true })
  profileRevision!: number | null;
}

@ObjectType({ description: 'A profile value this cluster does not take, and why.' })
export class IgnoredProfileValue {
  @Field()
  field!: string;

  @Field()
  profile!: string;

  @Field()
  reason!: string;
}

@ObjectType()
export class BoundProfileRef {
  @Field()
  name!: string;

  @Field(() => Int)
  priority!: number;

  @Field(() => Int)
  revision!: number;
}

@ObjectType({
  description:
    'The desired state the cluster is given: profiles in priority order, then its own overrides, field by field with its source.',
})
export class EffectiveState {
  @Field(() => [EffectiveField])
  fields!: EffectiveField[];

  @Field(() => [BoundProfileRef], { description: 'The profiles bound, in the order they apply.' })
  profiles!: BoundProfileRef[];

  @Field(() => [String], { description: 'The fields the cluster overrides itself.' })
  overrides!: string[];

  @Field(() => [IgnoredProfileValue])
  ignored!: IgnoredProfileValue[];
}

@ObjectType({ description: 'One revision of a profile as it was written.' })
export class ProfileRevisionEntry {
  @Field(() => Int)
  revision!: number;

  @Field()
  selector!: string;

  @Field(() => Int)
  priority!: number;

  @Field(() => JSONScalar)
  spec!: unknown;

  @Field(() => DateTimeScalar)
  createdAt!: Date;
}

@ObjectType({ description: 'A cluster bound to a profile, and the revision it is composed from.' })
export class ProfileBinding {
  @Field(() => ID, { description: "The cluster's global ID." })
  clusterId!: string;

  @Field()
  clusterName!: string;

  @Field(() => Int)
  revision!: number;
}
