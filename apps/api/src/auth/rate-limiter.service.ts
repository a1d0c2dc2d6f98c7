import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { createRedisClient, type RedisClient } from '@fleet/contracts';
import { API_CONFIG, type ApiConfig } from '../config.js';

/** The rate limiter could not reach Redis within RATE_LIMIT_REDIS_TIMEOUT_MS. */
export class RateLimiterUnavailable extends Error {}

const STARTUP_WAIT_MS = 5_000;

/** INCR, and a new window's key expires after two windows. */
const HIT_LUA = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], 120) end
return n`;

/**
 * A fixed one-minute window per credential, counted in Redis so that every API replica shares
 * the budget. Coarse by design: it protects the fleet's database from a runaway script.
 *
 * It runs on every request, so it has a connection of its own that never waits for Redis: no
 * offline queue, no retries, a command timeout. When Redis is away `hit` fails at once with
 * RateLimiterUnavailable and the caller decides (AuthGuard: reads go on, writes get 503).
 */
@Injectable()
export class RateLimiterService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(RateLimiterService.name);
  /** Also the report budget's (reports/report-budget.ts): the same fail-fast settings. */
  readonly connection: RedisClient;

  constructor(@Inject(API_CONFIG) private readonly config: ApiConfig) {
    this.connection = createRedisClient(config.REDIS_URL, {
      commandTimeout: config.RATE_LIMIT_REDIS_TIMEOUT_MS,
      connectTimeout: config.RATE_LIMIT_REDIS_TIMEOUT_MS,
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      maxRetriesPerRequest: 0,
      // Keep trying to come back, never faster than the timeout.
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    });
    // One script (count, and expire a new window) rather than a MULTI: a single command is
    // auto-pipelined with the other requests of the tick, at report rates a write per request
    // was a syscall per request.
    this.connection.defineCommand('fleetHit', { numberOfKeys: 1, lua: HIT_LUA });
    this.connection.on('error', (err: Error) =>
      this.logger.warn(`rate limiter Redis: ${err.message}`),
    );
  }

  /**
   * Counts one request of a credential (an API token's id); returns the seconds to wait when
   * over `perMinute`, else 0.
   */
  async hit(
    credential: string,
    perMinute = this.config.RATE_LIMIT_PER_MINUTE,
    now = Date.now(),
  ): Promise<number> {
    const window = Math.floor(now / 60_000);
    return this.hitKey(
      `${this.config.QUEUE_PREFIX}:ratelimit:${credential}:${window}`,
      perMinute,
      now,
    );
  }

  /**
   * Counts one request on `key`, the counter of the one-minute window `now` is in (the report
   * budget names its own, reports/report-budget.ts); the seconds to wait when over `perMinute`.
   */
  async hitKey(key: string, perMinute: number, now = Date.now()): Promise<number> {
    let count: number;
    try {
      count = await (
        this.connection as unknown as { fleetHit(key: string): Promise<number> }
      ).fleetHit(key);
    } catch (err) {
      throw new RateLimiterUnavailable(
        `rate limiter unavailable: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    return count <= perMinute ? 0 : secondsToNextWindow(now);
  }

  /**
   * Without an offline queue, a request that comes before the connection is up is refused like
   * one during an outage; a just-started API (a rolling update, a test's first request) would
   * refuse its first writes. So start-up waits for the connection, bounded: with Redis down at
   * start the API still comes up and serves reads.
   */
  async onModuleInit(): Promise<void> {
    if (this.connection.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.connection.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, STARTUP_WAIT_MS);
      this.connection.once('ready', done);
    });
  }

  onModuleDestroy(): void {
    this.connection.disconnect();
  }
}

/** Seconds until the one-minute window after `now`'s begins. */
export function secondsToNextWindow(now: number): number {
  return Math.ceil(((Math.floor(now / 60_000) + 1) * 60_000 - now) / 1000);
}
