import { Args, ID, Int, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { RequireRole } from '../auth/roles.decorator.js';
import { Cluster } from '../clusters/models/cluster.model.js';
import {
  ChangePlan,
  ChangePlanClusterConnection,
  ChangePlanClusterState,
  PlanChangeInput,
  PlanWave,
} from './plan.model.js';
import { RolloutStrategyInput } from '../rollouts/dto/rollout.inputs.js';
import { PlansService } from './plans.service.js';

@Resolver(() => ChangePlan)
export class PlansResolver {
  constructor(private readonly plans: PlansService) {}

  @Mutation(() => ChangePlan, {
    description:
      'Plans a change on one cluster or a selector: each sidecar dry-runs it on its API servers and reports per object. ' +
      'Nothing is written on any cluster and desired state does not move. Read the result with changePlan(id).',
  })
  @RequireRole('OPERATOR')
  planChange(
    @CurrentPrincipal() principal: Principal,
    @Args('input') input: PlanChangeInput,
  ): Promise<ChangePlan> {
    return this.plans.planChange(principal, input);
  }

  @Query(() => ChangePlan)
  @RequireRole('VIEWER')
  changePlan(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<ChangePlan> {
    return this.plans.get(principal, id);
  }

  @Mutation(() => [Cluster], {
    description:
      "Applies a plan's change to its PLANNED clusters (as setKarpenter does). CONFLICT, naming the cluster, if a cluster's " +
      'desired generation moved since the plan was computed; CONFLICT if the plan expired, was applied, started a rollout or is still pending.',
  })
  @RequireRole('OPERATOR')
  applyPlan(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<Cluster[]> {
    return this.plans.apply(principal, id);
  }

  @ResolveField(() => ChangePlanClusterConnection, {
    description:
      'The clusters of the plan in name order, 1–100 a page (first/after); counts has the totals.',
  })
  clusters(
    @CurrentPrincipal() principal: Principal,
    @Parent() plan: ChangePlan,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
    @Args('state', { type: () => ChangePlanClusterState, nullable: true })
    state: ChangePlanClusterState | null,
  ): Promise<ChangePlanClusterConnection> {
    return this.plans.clusters(principal, plan, { first, after, state });
  }

  @ResolveField(() => [PlanWave], {
    description:
      'The waves startRollout(planId, strategy) would run now over the PLANNED clusters: sizes and the first `sample` names of each (default 10).',
  })
  wavePlan(
    @CurrentPrincipal() principal: Principal,
    @Parent() plan: ChangePlan,
    @Args('strategy', { type: () => RolloutStrategyInput, nullable: true })
    strategy: RolloutStrategyInput | null,
    @Args('sample', { type: () => Int, nullable: true }) sample: number | null,
  ): Promise<PlanWave[]> {
    return this.plans.wavePlan(principal, plan.id, strategy, sample ?? 10);
  }
}
