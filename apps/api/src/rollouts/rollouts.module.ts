import { Module } from '@nestjs/common';
import { ClustersModule } from '../clusters/clusters.module.js';
import { RolloutQueries } from './rollout-queries.service.js';
import { RolloutStarts } from './rollout-starts.service.js';
import { RolloutSteering } from './rollout-steering.service.js';
import { RolloutsResolver } from './rollouts.resolver.js';
import { RolloutsService } from './rollouts.service.js';

@Module({
  imports: [ClustersModule],
  providers: [RolloutsResolver, RolloutsService, RolloutStarts, RolloutSteering, RolloutQueries],
  exports: [RolloutsService],
})
export class RolloutsModule {}
