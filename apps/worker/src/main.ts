import {
  DEAD_LETTER_QUEUE,
  RECONCILE_QUEUE,
  ReconcileRequest,
  STATUS_INGEST_QUEUE,
  IngestedStatusReport,
  PLAN_QUEUE,
  PlanRequest,
  createRedisClient,
  type RedisClient,
  queueLabel,
  ingestKey,
} from '@fleet/contracts';
import { createPrismaClient } from '@fleet/database';
import { onStoredSpecWarning } from '@fleet/desired-state';
import { createRegistry, fleetMetrics, oldestQueuedAt, startOpsServer } from '@fleet/observability';
import { Queue, Worker } from 'bullmq';
import { pino } from 'pino';
import { loadWorkerConfig, operandDefault } from './config.js';
import { ReconcileDispatcher } from './dispatch/reconcile-dispatcher.js';
import { SidecarQueues } from './dispatch/sidecar-queues.js';
import { PlanDispatcher } from './dispatch/plan-dispatcher.js';
import { createPgPool } from './ingest/pg-pool.js';
import { StatusIngester } from './ingest/status-ingester.js';
import { ReportStreamConsumer } from './ingest/report-stream.js';
import { flushLiveness, recordDigests } from './ingest/liveness.js';
import { ChangeEvents } from './ingest/change-events.js';
import { DeadLetters } from './dead-letters/dead-letters.js';
import { ensureHealthPartitions } from './maintenance/health-history.js';
import { startMaintenance } from './maintenance/maintenance.js';
import { startAclSync } from './credentials/acl-sync.js';
import { startRolloutTicker } from './rollouts/rollout-ticker.js';
import { readFleetState } from './metrics/fleet-state.js';

export async function startWorker(env: NodeJS.ProcessEnv = process.env) {
  const config = loadWorkerConfig(env);
  const log = pino({ name: 'worker', level: config.LOG_LEVEL });
  onStoredSpecWarning((w) =>
    log.warn(
      { spec: w.spec, field: w.field },
      `stored ${w.spec}: ${w.field || '(whole)'}: ${w.reason}`,
    ),
  );
  const jobLocks = { lockDuration: config.JOB_LOCK_MS, stalledInterval: config.JOB_LOCK_MS };
  const db = createPrismaClient(config.DATABASE_URL, { poolSize: 20 });
  const producer = createRedisClient(config.REDIS_URL, { maxRetriesPerRequest: null });
  const sidecarQueues = new SidecarQueues(producer, config.QUEUE_PREFIX);
  const dispatcher = new ReconcileDispatcher(db, sidecarQueues, operandDefault(config));
  const planner = new PlanDispatcher(db, sidecarQueues, log, operandDefault(config));
  // Batched ingest speaks SQL directly: a few set-based statements per batch, one transaction.
  const pool = createPgPool(config.DATABASE_URL, log);
  // The health partitions of today and the days around it before any report is consumed: one
  // created while batches insert into the default partition fails them (each batch then falls
  // back to one report at a time). The maintenance run at start-up below finds them made.
  await ensureHealthPartitions(pool, 1, config.HISTORY_PARTITIONS_AHEAD_DAYS).catch(
    (err: unknown) => log.error({ err: String(err) }, 'health partitions not made at start-up'),
  );
  const ingester = new StatusIngester(pool, log, {
    maxBatch: config.INGEST_BATCH_SIZE,
    flushMs: config.INGEST_FLUSH_MS,
    parallelFlushes: 2,
  });
  const changeEvents = new ChangeEvents(producer, config.QUEUE_PREFIX);
  // BullMQ does not close connections it was given; keep them to close on shutdown.
  const connections: RedisClient[] = [producer];
  const connection = () => {
    const redis = createRedisClient(config.REDIS_URL, { maxRetriesPerRequest: null });
    connections.push(redis);
    return redis;
  };

  const reconcile = new Worker(
    RECONCILE_QUEUE,
    async (job) => {
      const outcome = await dispatcher.dispatch(ReconcileRequest.parse(job.data));
      log.debug({ job: job.id, outcome }, 'reconcile request handled');
      return outcome;
    },
    {
      connection: connection(),
      prefix: config.QUEUE_PREFIX,
      concurrency: config.RECONCILE_CONCURRENCY,
      ...jobLocks,
    },
  );
  const ingest = new Worker(
    STATUS_INGEST_QUEUE,
    async (job) => {
      const report = IngestedStatusReport.parse(job.data);
      const result = await ingester.ingest(report);
      changeEvents.changed(report.clusterId);
      return result;
    },
    {
      connection: connection(),
      prefix: config.QUEUE_PREFIX,
      concurrency: config.INGEST_CONCURRENCY,
      ...jobLocks,
    },
  );
  const plans = new Worker(
    PLAN_QUEUE,
    async (job) => planner.dispatch(PlanRequest.parse(job.data).planId),
    { connection: connection(), prefix: config.QUEUE_PREFIX, concurrency: 4, ...jobLocks },
  );
  for (const worker of [reconcile, ingest, plans]) {
    worker.on('failed', (job, err) =>
      log.warn({ queue: worker.name, job: job?.id, err: err.message }, 'job failed'),
    );
    worker.on('error', (err) =>
      log.error({ queue: worker.name, err: err.message }, 'worker error'),
    );
  }
  await Promise.all([reconcile.waitUntilReady(), ingest.waitUntilReady(), plans.waitUntilReady()]);
  const deadLetters = new DeadLetters(producer, config.QUEUE_PREFIX, log);
  deadLetters.watch(reconcile, (job, reason) =>
    dispatcher.markFailed(ReconcileRequest.parse(job.data), reason),
  );
  deadLetters.watch(ingest);
  const registry = createRegistry('worker');
  const reportsIngested = fleetMetrics.reportsIngested(registry);
  // The report stream the API appends to (issue 19); the BullMQ queue above drains what was
  // queued before, and dead letters redriven onto it.
  const reportStream = new ReportStreamConsumer(
    connection(),
    producer,
    pool,
    config.QUEUE_PREFIX,
    log,
    {
      committed: (reports, results, fences) => {
        reportsIngested.inc(reports.length);
        const applied = new Map<string, IngestedStatusReport>();
        reports.forEach((report, i) => {
          // A report that changed nothing moved lastReportAt only, as a heartbeat does: no event.
          if (results[i]?.changed !== false) changeEvents.changed(report.clusterId);
          if (!results[i]?.advanced) return;
          // Several of one cluster in a batch: the one applied last is the newest.
          const held = applied.get(report.clusterId);
          if (
            !held ||
            held.observedGeneration < report.observedGeneration ||
            (held.observedGeneration === report.observedGeneration &&
              (held.receivedAt ?? held.reportedAt) <= (report.receivedAt ?? report.reportedAt))
          )
            applied.set(report.clusterId, report);
        });
        void recordDigests(producer, config.QUEUE_PREFIX, [...applied.values()], fences).catch(
          (err: unknown) => log.warn({ err: String(err) }, 'cannot record report digests'),
        );
      },
      deadLetter: (letter) => deadLetters.record(letter),
    },
    {
      batch: config.INGEST_BATCH_SIZE,
      blockMs: 1000,
      claimIdleMs: config.JOB_LOCK_MS,
      parallel: 2,
      maxDeliveries: 20,
      // Far past the claim window: a live consumer reads every second.
      deadConsumerIdleMs: Math.max(10 * config.JOB_LOCK_MS, 10 * 60_000),
    },
  );
  await reportStream.start();
  let flushingLiveness = false;
  const livenessTimer = setInterval(() => {
    if (flushingLiveness) return;
    flushingLiveness = true;
    flushLiveness(producer, pool, config.QUEUE_PREFIX)
      .catch((err: unknown) => log.warn({ err: String(err) }, 'liveness flush failed'))
      .finally(() => (flushingLiveness = false));
  }, config.LIVENESS_FLUSH_MS);
  livenessTimer.unref();
  const maintenance = await startMaintenance({
    pool,
    sidecarQueues,
    producer,
    workerConnection: connection(),
    config,
    log,
  });
  const rollouts = await startRolloutTicker({
    db,
    producer,
    workerConnection: connection(),
    prefix: config.QUEUE_PREFIX,
    tickMs: config.ROLLOUT_TICK_MS,
    staleAfterSeconds: config.HEARTBEAT_SECONDS * config.STALE_AFTER_HEARTBEATS,
    log,
  });
  const aclSync = await startAclSync({
    db,
    producer,
    workerConnection: connection(),
    prefix: config.QUEUE_PREFIX,
    everyMs: config.ACL_SYNC_SECONDS * 1000,
    fullEveryMs: config.ACL_FULL_SYNC_SECONDS * 1000,
    log,
  });
  const dispatchSeconds = fleetMetrics.dispatchSeconds(registry);
  reconcile.on('completed', (job) => {
    if (job.processedOn && job.finishedOn)
      dispatchSeconds.observe(
        { outcome: String(job.returnvalue) },
        (job.finishedOn - job.processedOn) / 1000,
      );
  });
  ingest.on('completed', () => reportsIngested.inc());
  // Nothing consumes the dead-letter queue: its depth is the dead letters awaiting a redrive.
  const observed = [RECONCILE_QUEUE, STATUS_INGEST_QUEUE, DEAD_LETTER_QUEUE].map(
    (name) => new Queue(name, { connection: producer, prefix: config.QUEUE_PREFIX }),
  );
  // The oldest of the BullMQ queue's jobs and of the report stream's entries (each entry stays
  // until committed; its id begins with the time Redis appended it).
  fleetMetrics.ingestLag(registry, async () => {
    const [queued, first] = await Promise.all([
      oldestQueuedAt(observed[1]!),
      producer.xrange(ingestKey(config.QUEUE_PREFIX, 'reports'), '-', '+', 'COUNT', 1),
    ]);
    const streamed = first[0] ? Number(first[0][0].split('-')[0]) : undefined;
    const stamps = [queued, streamed].filter((t): t is number => t !== undefined);
    return stamps.length ? Math.min(...stamps) : undefined;
  });
  fleetMetrics.fleetState(registry, () => readFleetState(pool));
  fleetMetrics.queueDepth(registry, async () => {
    const counts = await Promise.all(
      observed.map(async (q) => {
        const c = await q.getJobCounts('waiting', 'delayed', 'prioritized');
        // The report stream's backlog counts as the ingest queue's (issue 19).
        const stream =
          q.name === STATUS_INGEST_QUEUE
            ? await producer.xlen(ingestKey(config.QUEUE_PREFIX, 'reports'))
            : 0;
        return [queueLabel(q.name), Object.values(c).reduce((a, b) => a + b, 0) + stream] as const;
      }),
    );
    return Object.fromEntries(counts);
  });
  const ops =
    config.OPS_PORT === undefined
      ? undefined
      : await startOpsServer({
          port: config.OPS_PORT,
          host: config.OPS_HOST,
          registry,
          checks: { postgresql: () => db.$queryRaw`SELECT 1`, redis: () => producer.ping() },
        });
  log.info({ ops: ops?.url }, 'worker ready');

  return {
    opsUrl: ops?.url,
    async close(): Promise<void> {
      clearInterval(livenessTimer);
      await Promise.all([
        reconcile.close(),
        ingest.close(),
        plans.close(),
        rollouts.close(),
        reportStream.close(),
      ]);
      await changeEvents.close();
      await maintenance.close();
      await aclSync.close();
      await ops?.close();
      await Promise.all(observed.map((q) => q.close()));
      await deadLetters.close();
      await sidecarQueues.close();
      for (const redis of connections) redis.disconnect();
      await db.$disconnect();
      await pool.end();
    },
  };
}

const isMain = import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  startWorker()
    .then((worker) => {
      const stop = () => void worker.close().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    })
    .catch((err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    });
}
