import { Module } from '@nestjs/common';
import { ClustersModule } from '../clusters/clusters.module.js';
import { RolloutsResolver } from './rollouts.resolver.js';
import { RolloutsService } from './rollouts.service.js';

@Module({
  imports: [ClustersModule],
  providers: [RolloutsResolver, RolloutsService],
  exports: [RolloutsService],
})
export class RolloutsModule {}
