import { Module } from '@nestjs/common';
import { ClustersModule } from '../clusters/clusters.module.js';
import { PlansResolver } from './plans.resolver.js';
import { PlansService } from './plans.service.js';

@Module({
  imports: [ClustersModule],
  providers: [PlansResolver, PlansService],
  exports: [PlansService],
})
export class PlansModule {}
