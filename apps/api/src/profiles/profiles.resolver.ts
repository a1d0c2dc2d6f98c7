import { Args, Int, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { RequireRole } from '../auth/roles.decorator.js';
import { DesiredStateChanges } from '../clusters/desired-state-changes.service.js';
import { Cluster } from '../clusters/models/cluster.model.js';
import { uidOf } from '../common/global-id.js';
import { JSONScalar } from '../common/json.scalar.js';
import { RolloutStrategyInput } from '../rollouts/dto/rollout.inputs.js';
import { ID } from '@nestjs/graphql';
import {
  CreateProfileInput,
  EffectiveState,
  Profile,
  ProfileBinding,
  ProfileChangePayload,
  ProfileRevisionEntry,
  UpdateProfileInput,
} from './profile.model.js';
import { Rollout } from '../rollouts/models/rollout.model.js';
import { ProfilesService } from './profiles.service.js';

const STRATEGY_NAME = {
  type: () => String,
  nullable: true,
  description:
    "A named rollout strategy (rolloutStrategies) instead of strategy: its stages are copied into the rollout's waves.",
} as const;

const STRATEGY = {
  type: () => RolloutStrategyInput,
  nullable: true,
  description:
    'The waves the change goes to the affected clusters in (as startRollout takes them); default: one cluster, then 10 %, 50 %, 100 %.',
} as const;

@Resolver(() => Profile)
export class ProfilesResolver {
  constructor(private readonly service: ProfilesService) {}

  @Query(() => [Profile], {
    description: 'Every profile within your scope, by priority then name (deleting ones included).',
  })
  @RequireRole('VIEWER')
  profiles(@CurrentPrincipal() principal: Principal): Promise<Profile[]> {
    return this.service.list(principal);
  }

  @Query(() => Profile)
  @RequireRole('VIEWER')
  profile(@CurrentPrincipal() principal: Principal, @Args('name') name: string): Promise<Profile> {
    return this.service.get(principal, name);
  }

  @ResolveField(() => [ProfileRevisionEntry], {
    description:
      'Every revision as written, newest first; for a scoped token only those whose selector was within its scope.',
  })
  revisions(
    @CurrentPrincipal() principal: Principal,
    @Parent() profile: Profile,
  ): Promise<ProfileRevisionEntry[]> {
    return this.service.revisions(principal, profile.uid);
  }

  @ResolveField(() => [ProfileBinding], {
    description: 'The clusters bound to it (within your scope), by name, with their revision.',
  })
  clusters(
    @CurrentPrincipal() principal: Principal,
    @Parent() profile: Profile,
  ): Promise<ProfileBinding[]> {
    return this.service.bindings(principal, profile.uid);
  }

  @ResolveField(() => Rollout, {
    nullable: true,
    description: 'Its latest rollout (running, paused or finished); null when it never had one.',
  })
  rollout(
    @CurrentPrincipal() principal: Principal,
    @Parent() profile: Profile,
  ): Promise<Rollout | null> {
    return this.service.latestRollout(principal, profile.uid);
  }

  @Mutation(() => ProfileChangePayload, {
    description:
      'Creates a profile and rolls it out (a rollout, in waves) to the clusters its selector matches. Refused when a ' +
      'profile of the same priority that a cluster could match as well sets a field differently (naming both and the field).',
  })
  @RequireRole('OPERATOR')
  createProfile(
    @CurrentPrincipal() principal: Principal,
    @Args('input') input: CreateProfileInput,
    @Args('strategy', STRATEGY) strategy: RolloutStrategyInput | null,
    @Args('strategyName', STRATEGY_NAME) strategyName: string | null,
  ): Promise<ProfileChangePayload> {
    return this.service.create(principal, input, { strategy, strategyName });
  }

  @Mutation(() => ProfileChangePayload, {
    description:
      'A new revision of the profile, rolled out to the clusters bound to it and those its selector matches; a ' +
      'cluster it no longer matches loses it in its wave.',
  })
  @RequireRole('OPERATOR')
  updateProfile(
    @CurrentPrincipal() principal: Principal,
    @Args('name') name: string,
    @Args('input') input: UpdateProfileInput,
    @Args('strategy', STRATEGY) strategy: RolloutStrategyInput | null,
    @Args('strategyName', STRATEGY_NAME) strategyName: string | null,
  ): Promise<ProfileChangePayload> {
    return this.service.update(principal, name, input, { strategy, strategyName });
  }

  @Mutation(() => ProfileChangePayload, {
    description:
      'Deletes the profile: a rollout unbinds it from its clusters wave by wave; it is gone once none is bound.',
  })
  @RequireRole('OPERATOR')
  deleteProfile(
    @CurrentPrincipal() principal: Principal,
    @Args('name') name: string,
    @Args('strategy', STRATEGY) strategy: RolloutStrategyInput | null,
    @Args('strategyName', STRATEGY_NAME) strategyName: string | null,
  ): Promise<ProfileChangePayload> {
    return this.service.delete(principal, name, { strategy, strategyName });
  }
}

@Resolver(() => Cluster)
export class ClusterEffectiveStateResolver {
  constructor(
    private readonly service: ProfilesService,
    private readonly changes: DesiredStateChanges,
  ) {}

  @ResolveField(() => EffectiveState, {
    description:
      'The desired state the cluster is given, field by field with what set it (a profile, its own override, the default).',
  })
  effectiveState(@Parent() cluster: Cluster): Promise<EffectiveState> {
    return this.service.effectiveState(cluster.uid);
  }

  @ResolveField(() => JSONScalar, {
    description:
      "The cluster's own overrides as stored, in the profile spec shape (only the fields it sets); they win over every profile.",
  })
  overrides(@Parent() cluster: Cluster): Promise<unknown> {
    return this.service.overrides(cluster.uid);
  }

  @Mutation(() => Cluster, {
    description:
      "Replaces the cluster's own overrides whole (the profile spec shape; {} clears them): one desired-state change, " +
      'checked as setKarpenter, upsertNodePool and setNodeClassOverrides check theirs. What kfleet apply uses.',
  })
  @RequireRole('OPERATOR')
  setClusterOverrides(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('overrides', { type: () => JSONScalar }) overrides: unknown,
    @Args('expectedGeneration', { type: () => Int, nullable: true })
    expectedGeneration: number | null,
  ): Promise<Cluster> {
    return this.changes.replaceOverrides(
      principal,
      uidOf('Cluster', clusterId, 'clusterId'),
      overrides,
      'setClusterOverrides',
      expectedGeneration,
    );
  }

  @Mutation(() => Cluster, {
    description:
      "Clears every override of the cluster at once, so its profiles' values (or the defaults) apply: one " +
      'desired-state change, one generation, audited resetClusterOverrides.',
  })
  @RequireRole('OPERATOR')
  resetClusterOverrides(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('expectedGeneration', { type: () => Int, nullable: true })
    expectedGeneration: number | null,
  ): Promise<Cluster> {
    return this.changes.replaceOverrides(
      principal,
      uidOf('Cluster', clusterId, 'clusterId'),
      {},
      'resetClusterOverrides',
      expectedGeneration,
    );
  }

  @Mutation(() => Cluster, {
    description:
      "Clears the cluster's own override of a field (a setting, or nodePools.<name>), so its profiles' value (or the default) applies again.",
  })
  @RequireRole('OPERATOR')
  resetClusterOverride(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('field') field: string,
    @Args('expectedGeneration', { type: () => Int, nullable: true })
    expectedGeneration: number | null,
  ): Promise<Cluster> {
    return this.changes.resetOverride(
      principal,
      uidOf('Cluster', clusterId, 'clusterId'),
      field,
      expectedGeneration,
    );
  }
}
