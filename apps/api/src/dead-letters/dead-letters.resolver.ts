import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { RequireRole } from '../auth/roles.decorator.js';
import { DeadLetter, DeadLetterConnection } from './dead-letter.model.js';
import { DeadLettersService } from './dead-letters.service.js';

@Resolver(() => DeadLetter)
export class DeadLettersResolver {
  constructor(private readonly service: DeadLettersService) {}

  @Query(() => DeadLetterConnection, {
    description: 'Jobs that exhausted their attempts, oldest first.',
  })
  @RequireRole('ADMIN')
  deadLetters(
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<DeadLetterConnection> {
    return this.service.list(first, after);
  }

  @Mutation(() => DeadLetter, { description: 'Puts a dead-lettered job back on its queue.' })
  @RequireRole('ADMIN')
  redriveDeadLetter(@Args('id', { type: () => ID }) id: string): Promise<DeadLetter> {
    return this.service.redrive(id);
  }

  @Mutation(() => Int, { description: 'Redrives every dead letter; returns how many.' })
  @RequireRole('ADMIN')
  redriveAllDeadLetters(): Promise<number> {
    return this.service.redriveAll();
  }
}
