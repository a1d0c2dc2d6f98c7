import { Module } from '@nestjs/common';
import { HealthHistoryResolver } from './health-history.resolver.js';
import { HealthHistoryService } from './health-history.service.js';

@Module({ providers: [HealthHistoryResolver, HealthHistoryService] })
export class HealthHistoryModule {}
