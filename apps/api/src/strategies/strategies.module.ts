import { Module } from '@nestjs/common';
import { StrategiesResolver } from './strategies.resolver.js';
import { StrategiesService } from './strategies.service.js';

@Module({ providers: [StrategiesResolver, StrategiesService] })
export class StrategiesModule {}
