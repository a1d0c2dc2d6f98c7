import { queueName, type RedisClient } from '@fleet/contracts';
import { Queue, Worker } from 'bullmq';
import type pg from 'pg';
import type { Logger } from 'pino';
import { operandDefault, type WorkerConfig } from '../config.js';
import type { SidecarQueues } from '../dispatch/sidecar-queues.js';
import { maintainHealthHistory } from './health-history.js';
import { resyncPendingOrders } from './resync.js';
import { sweepStaleness } from './staleness.js';
import { flushLiveness, forgetDigests } from '../ingest/liveness.js';
import { foldFleetSummary } from './fleet-summary.js';

export const MAINTENANCE_QUEUE = queueName('maintenance');
type Task = 'resync' | 'sweep' | 'history';

export interface MaintenanceDeps {
  pool: pg.Pool;
  sidecarQueues: SidecarQueues;
  producer: RedisClient;
  workerConnection: RedisClient;
  config: WorkerConfig;
  log: Logger;
}

/**
 * The staleness sweep: liveness flushed, Stale judged, digests of changed clusters forgotten, then
 * the clusters changed since the last sweep folded into the fleet summary's counts. The fold runs
 * even when an earlier step fails (Redis down, a query refused): else FleetSummaryDirty grows for
 * as long as that step keeps failing. The first failure is logged and still thrown, so the job
 * fails visibly.
 */
export async function sweep({
  pool,
  producer,
  config,
  log,
}: Pick<MaintenanceDeps, 'pool' | 'producer' | 'config' | 'log'>) {
  let failure: Error | undefined;
  let counts = {};
  try {
    // Liveness of the heartbeats accepted so far is in PostgreSQL before Stale is judged.
    await flushLiveness(producer, pool, config.QUEUE_PREFIX);
    const { changed, ...judged } = await sweepStaleness(pool, {
      staleAfterSeconds: config.HEARTBEAT_SECONDS * config.STALE_AFTER_HEARTBEATS,
      orderNotTakenSeconds: config.ORDER_NOT_TAKEN_SECONDS,
    });
    counts = judged;
    await forgetDigests(producer, config.QUEUE_PREFIX, changed);
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
    log.error({ err: String(err) }, 'staleness sweep failed; folding the fleet summary anyway');
  }
  const summarized = await foldFleetSummary(pool).catch((err: unknown) => {
    if (failure === undefined) throw err;
    log.error({ err: String(err) }, 'fleet summary fold failed');
    return 0;
  });
  if (failure !== undefined) throw failure;
  return { ...counts, summarized };
}

/**
 * Periodic maintenance as BullMQ job schedulers: with several worker replicas each task runs once
 * per interval, on whichever replica takes it. The schedulers live in Redis, so they are upserted
 * again at every start (a flushed Redis loses them; the next start restores them).
 */
export async function startMaintenance({
  pool,
  sidecarQueues,
  producer,
  workerConnection,
  config,
  log,
}: MaintenanceDeps) {
  const queue = new Queue<Record<string, never>>(MAINTENANCE_QUEUE, {
    connection: producer,
    prefix: config.QUEUE_PREFIX,
  });
  const run = async (task: Task): Promise<unknown> => {
    switch (task) {
      case 'resync':
        return resyncPendingOrders(pool, sidecarQueues, { operandDefault: operandDefault(config) });
      case 'sweep':
        return sweep({ pool, producer, config, log });
      case 'history':
        return maintainHealthHistory(pool, {
          rawRetentionDays: config.HISTORY_RAW_RETENTION_DAYS,
          rollupRetentionDays: config.HISTORY_ROLLUP_RETENTION_DAYS,
          partitionsAheadDays: config.HISTORY_PARTITIONS_AHEAD_DAYS,
        });
    }
  };
  const every: Record<Task, number> = {
    resync: config.RESYNC_EVERY_SECONDS * 1000,
    sweep: config.SWEEP_EVERY_SECONDS * 1000,
    history: config.HISTORY_EVERY_SECONDS * 1000,
  };
  const ensureSchedulers = async () => {
    for (const [task, ms] of Object.entries(every) as [Task, number][]) {
      // Only when missing: re-upserting an existing scheduler would push its next run back.
      if (await queue.getJobScheduler(task)) continue;
      await queue.upsertJobScheduler(
        task,
        { every: Math.max(100, Math.round(ms)) },
        {
          name: task,
          opts: { removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } },
        },
      );
    }
  };
  await ensureSchedulers();
  // Schedulers live in Redis: after a flush they are gone, and with them the resync that would
  // heal the flush. The worker puts them back by itself.
  const watchdog = setInterval(
    () =>
      void ensureSchedulers().catch((err: unknown) =>
        log.warn({ err: String(err) }, 'cannot restore maintenance schedulers'),
      ),
    Math.max(1000, Math.min(every.resync, every.sweep, 60_000)),
  );
  watchdog.unref();
  const worker = new Worker(
    MAINTENANCE_QUEUE,
    async (job) => {
      const started = Date.now();
      const result = await run(job.name as Task);
      log.debug({ task: job.name, ms: Date.now() - started, result }, 'maintenance done');
      return result;
    },
    { connection: workerConnection, prefix: config.QUEUE_PREFIX, concurrency: 1 },
  );
  worker.on('failed', (job, err) =>
    log.warn({ task: job?.name, err: err.message }, 'maintenance failed'),
  );
  worker.on('error', (err) => log.error({ err: err.message }, 'maintenance worker error'));
  await worker.waitUntilReady();

  // At start-up, before any interval: today's partitions must exist, and orders lost while no
  // worker ran (or with a flushed Redis) go out now rather than a resync interval later.
  await run('history').catch((err: unknown) =>
    log.error({ err: String(err) }, 'history maintenance failed at start-up'),
  );
  await run('resync').catch((err: unknown) =>
    log.error({ err: String(err) }, 'resync failed at start-up'),
  );

  return {
    run,
    async close(): Promise<void> {
      clearInterval(watchdog);
      await worker.close();
      await queue.close();
    },
  };
}
