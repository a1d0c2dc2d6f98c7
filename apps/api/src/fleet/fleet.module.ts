import { Module } from '@nestjs/common';
import { ClustersModule } from '../clusters/clusters.module.js';
import { FleetSummaryService } from './fleet-summary.service.js';
import { FleetResolver } from './fleet.resolver.js';

@Module({ imports: [ClustersModule], providers: [FleetSummaryService, FleetResolver] })
export class FleetModule {}
