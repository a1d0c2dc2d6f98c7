import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  eventually,
  startPrivateRedis,
  startPrivateRedisCluster,
  testQueuePrefix,
  type PrivateRedis,
  type TestDatabase,
} from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import {
  flushRedisDb,
  OrderRecorder,
  query,
  registerClusters,
  setEnabled,
  type RegisteredCluster,
} from './fleet-fixture.js';

/**
 * Redis loses everything (FLUSHDB of this suite's own server; FLUSHALL of every master of its
 * own Redis Cluster): queued orders, reconcile requests, even the maintenance schedulers. The
 * worker restores its schedulers, the resync re-derives every pending order from PostgreSQL
 * (on a cluster, one MULTI per slot: see SidecarQueues.pushMany), and no desired change is lost.
 * Each run flushes its Redis: it starts its own, never the shared one.
 */
describe.each([
  { kind: 'one Redis server', start: () => startPrivateRedis() },
  { kind: 'a three-master Redis Cluster', start: () => startPrivateRedisCluster(3) },
])('Redis flushed ($kind)', ({ start }) => {
  let redis: PrivateRedis;
  let REDIS_URL: string;
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let prefix: string;
  let clusters: RegisteredCluster[];

  beforeAll(async () => {
    redis = await start();
    REDIS_URL = redis.url;
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    const env = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: prefix };
    api = await startApi({ ...env, RATE_LIMIT_PER_MINUTE: '1000000' });
    worker = await startWorker({
      ...env,
      LOG_LEVEL: 'warn',
      RESYNC_EVERY_SECONDS: '1',
      SWEEP_EVERY_SECONDS: '1',
    });
    clusters = await registerClusters(api, 20, 'flush');
  });

  afterAll(async () => {
    await worker?.close();
    await api?.app.close();
    await db?.drop();
    await redis?.stop();
  });

  it('rebuilds every pending order from PostgreSQL', async () => {
    for (const c of clusters) await setEnabled(api, c, true);
    // The orders are on their queues (no sidecar takes them yet) when Redis loses everything.
    await eventually(
      async () => {
        const [row] = await query<{ n: number }>(
          db.url,
          `SELECT count(*)::int AS n FROM "ReconcileRun" WHERE generation = 2 AND state = 'DISPATCHED'`,
        );
        return row?.n === clusters.length ? true : undefined;
      },
      { what: 'every generation-2 order dispatched' },
    );
    await flushRedisDb(REDIS_URL);
    // Changes after the flush travel normally; changes before it must come back from PostgreSQL.
    for (const c of clusters.slice(0, 5)) await setEnabled(api, c, false);

    const recorder = new OrderRecorder(REDIS_URL, prefix, api.url);
    await recorder.start(clusters);
    try {
      const desired = await eventually(
        async () => {
          const rows = await query<{
            clusterId: string;
            generation: number;
            enabled: boolean;
            observedGeneration: number;
          }>(
            db.url,
            `SELECT d."clusterId", d.generation, d.enabled, s."observedGeneration"
               FROM "DesiredState" d JOIN "ClusterStatus" s USING ("clusterId")`,
          );
          return rows.every((r) => r.observedGeneration === r.generation) ? rows : undefined;
        },
        { timeoutMs: 20_000, what: 'every cluster in sync after the flush' },
      );
      for (const row of desired) {
        const orders = recorder.delivered.get(row.clusterId) ?? [];
        expect(orders.at(-1)).toMatchObject({
          generation: row.generation,
          spec: { enabled: row.enabled },
        });
        const generations = orders.map((o) => o.generation);
        expect(new Set(generations).size).toBe(generations.length);
      }
    } finally {
      await recorder.close();
    }
  });
});
