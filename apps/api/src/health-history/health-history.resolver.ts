import { Args, GraphQLISODateTime, Int, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { RequireRole } from '../auth/roles.decorator.js';
import { Cluster } from '../clusters/models/cluster.model.js';
import { HealthHistoryService } from './health-history.service.js';
import { HealthPoint } from './health-point.model.js';

/** `Cluster.health`: the parent query already checked the caller may see this cluster. */
@Resolver(() => Cluster)
export class HealthHistoryResolver {
  constructor(private readonly service: HealthHistoryService) {}

  @ResolveField(() => [HealthPoint], {
    description:
      'Health between from and to, one point per step (seconds; default range/200, at least range/1000).',
  })
  @RequireRole('VIEWER')
  health(
    @Parent() cluster: Cluster,
    @Args('from', { type: () => GraphQLISODateTime }) from: Date,
    @Args('to', { type: () => GraphQLISODateTime }) to: Date,
    @Args('step', { type: () => Int, nullable: true }) step: number | null,
  ): Promise<HealthPoint[]> {
    return this.service.points(cluster.uid, from, to, step);
  }
}
