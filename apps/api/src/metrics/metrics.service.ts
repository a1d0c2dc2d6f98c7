import { Injectable } from '@nestjs/common';
import { createRegistry, fleetMetrics } from '@fleet/observability';
import { QueuesService } from '../queues/queues.service.js';

@Injectable()
export class MetricsService {
  readonly registry = createRegistry('api');
  readonly graphqlSeconds = fleetMetrics.graphqlRequestSeconds(this.registry);
  readonly reportsReceived = fleetMetrics.reportsReceived(this.registry);

  constructor(queues: QueuesService) {
    fleetMetrics.queueDepth(this.registry, () => queues.depths());
  }
}
