import { Inject, Injectable } from '@nestjs/common';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { QueuesService } from '../queues/queues.service.js';

/**
 * A fixed one-minute window per token, counted in Redis so that every API replica shares the
 * budget. Coarse by design: it protects the fleet's database from a runaway script.
 */
@Injectable()
export class RateLimiterService {
  constructor(
    private readonly queues: QueuesService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  /**
   * Counts one request of a credential (an API token's id, or `report:<cluster>`); returns the
   * seconds to wait when over `perMinute`, else 0.
   */
  async hit(
    credential: string,
    perMinute = this.config.RATE_LIMIT_PER_MINUTE,
    now = Date.now(),
  ): Promise<number> {
    const window = Math.floor(now / 60_000);
    const key = `${this.config.QUEUE_PREFIX}:ratelimit:${credential}:${window}`;
    const [[, count]] = (await this.queues.connection
      .multi()
      .incr(key)
      .expire(key, 120)
      .exec()) as [[Error | null, number], [Error | null, number]];
    if (count <= perMinute) return 0;
    return Math.ceil(((window + 1) * 60_000 - now) / 1000);
  }
}
