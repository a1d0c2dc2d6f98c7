import { Injectable } from '@nestjs/common';
import { createRegistry, fleetMetrics } from '@fleet/observability';
import { Counter, Gauge } from 'prom-client';
import { QueuesService } from '../queues/queues.service.js';

@Injectable()
export class MetricsService {
  readonly registry = createRegistry('api');
  readonly graphqlSeconds = fleetMetrics.graphqlRequestSeconds(this.registry);
  readonly reportsReceived = fleetMetrics.reportsReceived(this.registry);
  /** Heartbeats that changed nothing: liveness refreshed in Redis, no report queued (issue 19). */
  readonly heartbeatsReceived = new Counter({
    name: 'fleet_heartbeats_received_total',
    help: 'Heartbeats accepted by the API: the cluster reports the status last applied, only its liveness is refreshed',
    registers: [this.registry],
  });
  /** Database look-ups of presented API token secrets, by whether the secret was valid. */
  readonly tokenLookups = new Counter({
    name: 'fleet_api_token_lookups_total',
    help: 'API token secrets looked up in PostgreSQL',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly oidcSignIns = new Counter({
    name: 'fleet_api_oidc_sign_ins_total',
    help: 'OIDC sign-ins completed at the callback: session opened, refused (with its reason to the person), failed (an error of the fleet)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Requests the rate limiter could not count (Redis away), by what was done with them. */
  readonly rateLimiterUnavailable = new Counter({
    name: 'fleet_api_rate_limiter_unavailable_total',
    help: 'Requests the rate limiter could not count because Redis did not answer',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly tokenCacheEntries = new Gauge({
    name: 'fleet_api_token_cache_entries',
    help: 'Valid API tokens held in the verification cache',
    registers: [this.registry],
  });
  /** Requests refused before authentication by the per-address or per-credential limits. */
  readonly rateLimited = new Counter({
    name: 'fleet_api_rate_limited_total',
    help: 'Requests refused by a rate limit',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  constructor(queues: QueuesService) {
    fleetMetrics.queueDepth(this.registry, () => queues.depths());
  }
}
