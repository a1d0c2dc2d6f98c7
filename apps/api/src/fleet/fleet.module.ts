import { Module } from '@nestjs/common';
import { ClustersModule } from '../clusters/clusters.module.js';
import { RolloutsModule } from '../rollouts/rollouts.module.js';
import { FleetHealthHistoryService } from './fleet-health-history.js';
import { FleetSummaryService } from './fleet-summary.service.js';
import { FleetResolver } from './fleet.resolver.js';

@Module({
  imports: [ClustersModule, RolloutsModule],
  providers: [FleetSummaryService, FleetHealthHistoryService, FleetResolver],
})
export class FleetModule {}
