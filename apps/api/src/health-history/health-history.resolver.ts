import { DateTimeScalar } from '../common/date-time.scalar.js';
import { Args, Int, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { RequireRole } from '../auth/roles.decorator.js';
import { Cluster } from '../clusters/models/cluster.model.js';
import { HealthHistoryService, MAX_POOL_SAMPLES } from './health-history.service.js';
import { HealthPoint } from './health-point.model.js';
import { MachineConfigPoolSample } from './machine-config-pool-sample.model.js';

/** `Cluster.health` and `Cluster.machineConfigPoolHistory`: the parent query already checked the caller may see this cluster. */
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
    @Args('from', { type: () => DateTimeScalar }) from: Date,
    @Args('to', { type: () => DateTimeScalar }) to: Date,
    @Args('step', { type: () => Int, nullable: true }) step: number | null,
  ): Promise<HealthPoint[]> {
    return this.service.points(cluster.uid, from, to, step);
  }

  @ResolveField(() => [MachineConfigPoolSample], {
    description: `Each NodeClass's MachineConfigPool between from and to, as the reports stored it: every change (a report equal to the one before it is left out), oldest first, the newest \`last\` (at most and by default ${MAX_POOL_SAMPLES}). From raw samples only (kept 7 days by default); empty where the platform has no pools.`,
  })
  @RequireRole('VIEWER')
  machineConfigPoolHistory(
    @Parent() cluster: Cluster,
    @Args('from', { type: () => DateTimeScalar }) from: Date,
    @Args('to', { type: () => DateTimeScalar }) to: Date,
    @Args('last', { type: () => Int, defaultValue: 100 }) last: number,
  ): Promise<MachineConfigPoolSample[]> {
    return this.service.machineConfigPools(cluster.uid, from, to, last);
  }
}
