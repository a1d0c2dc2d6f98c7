/**
 * Fleet resync of 10,000 clusters (PostgreSQL → every pending order on its cluster's queue)
 * against the raw BullMQ multi-queue addBulk of the very same jobs, measured in the same run.
 */
import {
  createRedisClient,
  isRedisCluster,
  keySlot,
  sidecarQueueName,
  type ReconcileOrder,
  type RedisClient,
} from '@fleet/contracts';
import { FlowProducer } from 'bullmq';
import pg from 'pg';
import { orderJobOptions, SidecarQueues } from '../../apps/worker/src/dispatch/sidecar-queues.js';
import { resyncPendingOrders } from '../../apps/worker/src/maintenance/resync.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { seedClusters } from './fleet-seed.js';
import { median } from './stats.js';

export interface ResyncBenchResult {
  clusters: number;
  /** Where the queues were: one Redis server, or the local three-master Redis Cluster. */
  redis: 'server' | 'cluster';
  resyncMs: number[];
  rawMs: number[];
}

const REDIS_URL = 'redis://127.0.0.1:6379/10';
/** The local three-master Redis Cluster of `scripts/setup.mjs`. */
export const REDIS_CLUSTER_URL =
  process.env.REDIS_CLUSTER_URL ??
  'redis-cluster://127.0.0.1:7000/?nodes=127.0.0.1:7001,127.0.0.1:7002';

/**
 * The raw baseline: the same jobs with BullMQ's addBulk and nothing else, 1,000 per call. On one
 * server one multi-queue addBulk (one MULTI) per 1,000; a Redis Cluster refuses a MULTI across
 * slots (CROSSSLOT), so there the least BullMQ can do is one addBulk per slot, all at once.
 */
async function rawAddBulk(
  flows: FlowProducer,
  redis: RedisClient,
  jobs: { queueName: string }[],
): Promise<void> {
  for (let i = 0; i < jobs.length; i += 1000) {
    const page = jobs.slice(i, i + 1000) as Parameters<FlowProducer['addBulk']>[0];
    if (!isRedisCluster(redis)) {
      await flows.addBulk(page);
      continue;
    }
    const slots = new Map<number, typeof page>();
    for (const job of page) {
      const slot = keySlot(job.queueName);
      slots.set(slot, [...(slots.get(slot) ?? []), job]);
    }
    await Promise.all([...slots.values()].map((slot) => flows.addBulk(slot)));
  }
}

export async function benchResync(
  clusters = 10_000,
  runs = 3,
  redisUrl = REDIS_URL,
): Promise<ResyncBenchResult> {
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  const redis = createRedisClient(redisUrl, { maxRetriesPerRequest: null });
  // One server: its database 10 is the bench's own. The cluster has only database 0, shared:
  // the bench removes its own prefix's keys and nothing else.
  const prefix = testQueuePrefix();
  const empty = () =>
    isRedisCluster(redis) ? deleteRedisKeys(redis, `${prefix}:*`) : redis.flushdb();
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
    const result: ResyncBenchResult = {
      clusters,
      redis: isRedisCluster(redis) ? 'cluster' : 'server',
      resyncMs: [],
      rawMs: [],
    };
    for (let run = 0; run < runs; run++) {
      await empty();
      const flows = new FlowProducer({ connection: redis, prefix });
      let started = performance.now();
      await rawAddBulk(flows, redis, jobs);
      result.rawMs.push(performance.now() - started);
      await flows.close();

      await empty();
      await sql.query(`DELETE FROM "ReconcileRun"`);
      const queues = new SidecarQueues(redis, prefix);
      started = performance.now();
      const { pending } = await resyncPendingOrders(pool, queues);
      result.resyncMs.push(performance.now() - started);
      if (pending !== clusters)
        throw new Error(`resync found ${pending} pending orders, expected ${clusters}`);
      await queues.close();
    }
    console.log(
      `resync (${result.redis}): ${clusters} clusters, median ${median(result.resyncMs).toFixed(0)} ms vs raw addBulk ${median(result.rawMs).toFixed(0)} ms`,
    );
    return result;
  } finally {
    await empty();
    redis.disconnect();
    await pool.end();
    await sql.end();
    await db.drop();
  }
}
