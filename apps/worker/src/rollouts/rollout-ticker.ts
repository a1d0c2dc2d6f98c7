import {
  fleetEventsChannel,
  RECONCILE_QUEUE,
  type ReconcileRequest,
  type RedisClient,
} from '@fleet/contracts';
import type { PrismaClient } from '@fleet/database';
import { requestReconcile, ROLLOUT_QUEUE } from '@fleet/desired-state';
import { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { RolloutDriver } from './rollout-driver.js';

export interface RolloutTickerOptions {
  db: PrismaClient;
  /** Shared producer connection (queues, pub/sub publish). */
  producer: RedisClient;
  /** A fresh connection for the blocking BullMQ worker. */
  workerConnection: RedisClient;
  prefix: string;
  tickMs: number;
  staleAfterSeconds: number;
  log: Logger;
}

/**
 * A BullMQ job scheduler ticks the rollout driver. The schedule lives in Redis and every tick
 * re-derives the state from PostgreSQL, so any worker (a restarted one, or one of several) takes
 * over where another stopped; concurrency 1 per worker, and row locks across workers.
 */
export async function startRolloutTicker(opts: RolloutTickerOptions) {
  const queue = new Queue(ROLLOUT_QUEUE, { connection: opts.producer, prefix: opts.prefix });
  const reconcile = new Queue<ReconcileRequest>(RECONCILE_QUEUE, {
    connection: opts.producer,
    prefix: opts.prefix,
  });
  const channel = fleetEventsChannel(opts.prefix);
  const driver = new RolloutDriver(
    opts.db,
    { staleAfterSeconds: opts.staleAfterSeconds },
    (requests) => requestReconcile(reconcile, requests),
    async (rolloutId) => {
      // Subscribers re-read the rollout; a lost event costs only freshness.
      await opts.producer
        .publish(channel, JSON.stringify({ type: 'rollout-changed', rolloutId }))
        .catch(() => undefined);
    },
  );
  await queue.upsertJobScheduler(
    'rollout-tick',
    { every: opts.tickMs },
    { name: 'tick', opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
  );
  const worker = new Worker(ROLLOUT_QUEUE, () => driver.tick(), {
    connection: opts.workerConnection,
    prefix: opts.prefix,
    concurrency: 1,
  });
  worker.on('failed', (job, err) =>
    opts.log.warn({ queue: ROLLOUT_QUEUE, job: job?.id, err: err.message }, 'rollout tick failed'),
  );
  worker.on('error', (err) =>
    opts.log.error({ queue: ROLLOUT_QUEUE, err: err.message }, 'rollout worker error'),
  );
  await worker.waitUntilReady();
  return {
    worker,
    async close(): Promise<void> {
      await worker.close();
      await Promise.all([queue.close(), reconcile.close()]);
    },
  };
}
