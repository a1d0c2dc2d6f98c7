import { Controller, Get, Header } from '@nestjs/common';
import { Public } from '../auth/roles.decorator.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus scrape endpoint; holds no cluster data beyond counts, so it is unauthenticated. */
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
