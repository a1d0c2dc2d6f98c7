import { Inject, Injectable } from '@nestjs/common';
import { ingestKey, redisKey } from '@fleet/contracts';
import {
  RateLimiterService,
  RateLimiterUnavailable,
  secondsToNextWindow,
} from '../auth/rate-limiter.service.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { TurnBatcher } from '../common/turn-batcher.js';

/**
 * Heartbeats in one step, as many as arrived in the same turn of the event loop: for each i
 * (from 1: budget key KEYS[2 + i], cluster ARGV[3i - 1], digest ARGV[3i], received at ARGV[3i + 1]),
 * count it against the cluster's budget (over ARGV[1] a minute: -1, nothing else touched), then
 * compare the applied digest (KEYS[1], digests) and refresh liveness (KEYS[2], never moved back).
 * One answer each: 1 accepted, 0 not the applied digest, -1 over the budget.
 */
const HEARTBEATS_LUA = `
local limit = tonumber(ARGV[1])
local answers = {}
for i = 1, #KEYS - 2 do
  local budget = KEYS[i + 2]
  local cluster, digest, at = ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1]
  local n = redis.call('INCR', budget)
  if n == 1 then redis.call('EXPIRE', budget, 120) end
  if n > limit then
    answers[i] = -1
  elseif redis.call('HGET', KEYS[1], cluster) ~= digest then
    answers[i] = 0
  else
    local seen = tonumber(redis.call('HGET', KEYS[2], cluster) or '0')
    if tonumber(at) > seen then redis.call('HSET', KEYS[2], cluster, at) end
    answers[i] = 1
  end
end
return answers`;

/** At most this many heartbeats in one script: a bounded time for Redis in one command. */
const HEARTBEATS_PER_SCRIPT = 256;

interface BudgetCommands {
  fleetHeartbeats(keyCount: number, ...keysThenArgs: string[]): Promise<number[]>;
}

interface Heartbeat {
  clusterId: string;
  digest: string;
  receivedAtMs: number;
}

export type HeartbeatOutcome =
  | { kind: 'accepted' }
  | { kind: 'not-applied-digest' }
  | { kind: 'over-budget'; retryAfterSeconds: number };

/**
 * Each cluster's report budget (REPORTS_PER_CLUSTER_PER_MINUTE over its status reports, plan
 * answers and heartbeats), counted in Redis so that every API replica shares it, on the rate
 * limiter's connection (no offline queue: with Redis away a report is refused at once, and the
 * sidecar keeps it and sends it again).
 *
 * A heartbeat's count and its digest check are one script (issue 48, target 2), and the
 * heartbeats that arrive in one turn of the event loop share one: two commands a heartbeat were
 * two auto-pipelined writes a tick on two connections and a Lua call each in Redis. So the
 * budget's counters live in the ingest hash tag's slot, beside the digests and liveness hashes a
 * heartbeat reads, which on a Redis Cluster is what lets one script touch all three (every
 * report already goes to that slot's master: the report stream is there too).
 */
@Injectable()
export class ReportBudget {
  private readonly commands: BudgetCommands;
  private readonly digests: string;
  private readonly liveness: string;

  constructor(
    private readonly rateLimiter: RateLimiterService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {
    const connection = rateLimiter.connection;
    // The number of keys is the first argument of each call: one budget key per heartbeat.
    connection.defineCommand('fleetHeartbeats', { lua: HEARTBEATS_LUA });
    this.commands = connection as unknown as BudgetCommands;
    this.digests = ingestKey(config.QUEUE_PREFIX, 'digests');
    this.liveness = ingestKey(config.QUEUE_PREFIX, 'liveness');
  }

  /** Counts one report or plan answer; the seconds to wait when over the budget, else 0. */
  hit(clusterId: string, now = Date.now()): Promise<number> {
    return this.rateLimiter.hitKey(
      this.budgetKey(clusterId, now),
      this.config.REPORTS_PER_CLUSTER_PER_MINUTE,
      now,
    );
  }

  /**
   * Counts a heartbeat and, within the budget, takes it when `digest` is the report last applied
   * for the cluster: its liveness is set to `receivedAtMs`. The heartbeats of one turn of the
   * event loop go to Redis as one script (issue 48, target 2).
   */
  heartbeat(clusterId: string, digest: string, receivedAtMs: number): Promise<HeartbeatOutcome> {
    return this.heartbeats.add({ clusterId, digest, receivedAtMs });
  }

  private readonly heartbeats = new TurnBatcher<Heartbeat, HeartbeatOutcome>(
    HEARTBEATS_PER_SCRIPT,
    async (batch) => {
      const keys = batch.map((h) => this.budgetKey(h.clusterId, h.receivedAtMs));
      const args = batch.flatMap((h) => [h.clusterId, h.digest, String(h.receivedAtMs)]);
      let answers: number[];
      try {
        answers = await this.commands.fleetHeartbeats(
          keys.length + 2,
          this.digests,
          this.liveness,
          ...keys,
          String(this.config.REPORTS_PER_CLUSTER_PER_MINUTE),
          ...args,
        );
      } catch (err) {
        throw new RateLimiterUnavailable(
          `report budget unavailable: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      return batch.map((h, i): HeartbeatOutcome =>
        answers[i] === -1
          ? { kind: 'over-budget', retryAfterSeconds: secondsToNextWindow(h.receivedAtMs) }
          : answers[i] === 1
            ? { kind: 'accepted' }
            : { kind: 'not-applied-digest' },
      );
    },
  );

  private budgetKey(clusterId: string, now: number): string {
    return redisKey(
      this.config.QUEUE_PREFIX,
      'ingest',
      'budget',
      clusterId.toLowerCase(),
      String(Math.floor(now / 60_000)),
    );
  }
}
