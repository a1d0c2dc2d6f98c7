import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { RequireRole } from '../auth/roles.decorator.js';
import { DeadLetter, DeadLetterConnection } from './dead-letter.model.js';
import { DeadLettersService } from './dead-letters.service.js';

@Resolver(() => DeadLetter)
export class DeadLettersResolver {
  constructor(private readonly service: DeadLettersService) {}

  @Query(() => DeadLetterConnection, {
    description:
      'Jobs that exhausted their attempts, oldest first; a scoped token sees those of its clusters.',
  })
  @RequireRole('ADMIN')
  deadLetters(
    @CurrentPrincipal() principal: Principal,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<DeadLetterConnection> {
    return this.service.list(principal, first, after);
  }

  @Mutation(() => DeadLetter, { description: 'Puts a dead-lettered job back on its queue.' })
  @RequireRole('ADMIN')
  redriveDeadLetter(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<DeadLetter> {
    return this.service.redrive(principal, id);
  }

  @Mutation(() => Int, { description: 'Redrives every dead letter; returns how many.' })
  @RequireRole('ADMIN')
  redriveAllDeadLetters(@CurrentPrincipal() principal: Principal): Promise<number> {
    return this.service.redriveAll(principal);
  }
}
