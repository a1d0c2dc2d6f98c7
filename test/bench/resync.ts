/**
 * Fleet resync of 10,000 clusters (PostgreSQL → every pending order on its cluster's queue)
 * against the raw BullMQ multi-queue addBulk of the very same jobs, measured in the same run.
 */
import { sidecarQueueName, type ReconcileOrder } from '@fleet/contracts';
import { FlowProducer } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { orderJobOptions, SidecarQueues } from '../../apps/worker/src/dispatch/sidecar-queues.js';
import { resyncPendingOrders } from '../../apps/worker/src/maintenance/resync.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { seedClusters } from './fleet-seed.js';
import { median } from './stats.js';

export interface ResyncBenchResult {
  clusters: number;
  resyncMs: number[];
  rawMs: number[];
}

const REDIS_URL = 'redis://127.0.0.1:6379/10';

export async function benchResync(clusters = 10_000, runs = 3): Promise<ResyncBenchResult> {
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  try {
    await seedClusters(sql, clusters);
    // The same orders the resync derives, built once outside the clock for the raw baseline.
    const orders: ReconcileOrder[] = [];
    {
      const collect = {
        pushMany: (o: ReconcileOrder[]) => Promise.resolve(void orders.push(...o)),
      };
      const queues = collect as unknown as SidecarQueues;
      await resyncPendingOrders(pool, queues);
      await sql.query(`UPDATE "ReconcileRun" SET state = 'QUEUED', "dispatchedAt" = NULL`);
    }
    const jobs = orders.map((order) => ({
      name: 'order',
      queueName: sidecarQueueName(order.clusterId),
      data: order,
      opts: orderJobOptions(`generation-${order.generation}`),
    }));
    const result: ResyncBenchResult = { clusters, resyncMs: [], rawMs: [] };
    for (let run = 0; run < runs; run++) {
      await redis.flushdb();
      const flows = new FlowProducer({ connection: redis, prefix: testQueuePrefix() });
      let started = performance.now();
      for (let i = 0; i < jobs.length; i += 1000) await flows.addBulk(jobs.slice(i, i + 1000));
      result.rawMs.push(performance.now() - started);
      await flows.close();

      await redis.flushdb();
      await sql.query(`DELETE FROM "ReconcileRun"`);
      const queues = new SidecarQueues(redis, testQueuePrefix());
      started = performance.now();
      const { pending } = await resyncPendingOrders(pool, queues);
      result.resyncMs.push(performance.now() - started);
      if (pending !== clusters)
        throw new Error(`resync found ${pending} pending orders, expected ${clusters}`);
      await queues.close();
    }
    console.log(
      `resync: ${clusters} clusters, median ${median(result.resyncMs).toFixed(0)} ms vs raw addBulk ${median(result.rawMs).toFixed(0)} ms`,
    );
    return result;
  } finally {
    await redis.flushdb();
    redis.disconnect();
    await pool.end();
    await sql.end();
    await db.drop();
  }
}
