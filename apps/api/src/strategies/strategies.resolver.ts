import { Args, Mutation, Query, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { RequireRole } from '../auth/roles.decorator.js';
import {
  CreateRolloutStrategyInput,
  RolloutStrategyDefinition,
  RolloutStrategySpecInput,
} from './strategy.model.js';
import { StrategiesService } from './strategies.service.js';

@Resolver(() => RolloutStrategyDefinition)
export class StrategiesResolver {
  constructor(private readonly service: StrategiesService) {}

  @Query(() => [RolloutStrategyDefinition], { description: 'Named rollout strategies, by name.' })
  @RequireRole('VIEWER')
  rolloutStrategies(): Promise<RolloutStrategyDefinition[]> {
    return this.service.list();
  }

  @Query(() => RolloutStrategyDefinition)
  @RequireRole('VIEWER')
  rolloutStrategy(@Args('name') name: string): Promise<RolloutStrategyDefinition> {
    return this.service.get(name);
  }

  @Mutation(() => RolloutStrategyDefinition, {
    description: 'Fleet-wide configuration: OPERATOR with an unscoped token.',
  })
  @RequireRole('OPERATOR')
  createRolloutStrategy(
    @CurrentPrincipal() principal: Principal,
    @Args('input') input: CreateRolloutStrategyInput,
  ): Promise<RolloutStrategyDefinition> {
    return this.service.create(principal, input);
  }

  @Mutation(() => RolloutStrategyDefinition, {
    description:
      'Replaces the definition (OPERATOR, unscoped token). Rollouts already started keep the copy they took at start.',
  })
  @RequireRole('OPERATOR')
  updateRolloutStrategy(
    @CurrentPrincipal() principal: Principal,
    @Args('name') name: string,
    @Args('input') input: RolloutStrategySpecInput,
  ): Promise<RolloutStrategyDefinition> {
    return this.service.update(principal, name, input);
  }

  @Mutation(() => RolloutStrategyDefinition, {
    description:
      'Deletes the strategy (ADMIN, unscoped token); returns it as it was. Rollouts started from it keep their copy.',
  })
  @RequireRole('ADMIN')
  deleteRolloutStrategy(
    @CurrentPrincipal() principal: Principal,
    @Args('name') name: string,
  ): Promise<RolloutStrategyDefinition> {
    return this.service.delete(principal, name);
  }
}
