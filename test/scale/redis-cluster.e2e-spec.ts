import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createRedisClient,
  deleteSidecarAcl,
  isRedisCluster,
  keySlot,
  redisNodes,
  sidecarQueueName,
  sidecarRedisUser,
  type ReconcileOrder,
  type RedisClient,
} from '@fleet/contracts';
import { Queue } from 'bullmq';
import type { Cluster } from 'ioredis';
import pino from 'pino';
import {
  createTestDatabase,
  deleteRedisKeys,
  eventually,
  testQueuePrefix,
  type TestDatabase,
} from '@fleet/testing';
import { OrderConsumer } from '../../apps/sidecar/src/orders/order-consumer.js';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { condition, postReport, query, setEnabled } from '../faults/fleet-fixture.js';

/** The local three-master Redis Cluster `scripts/setup.mjs` starts (ports 7000-7002). */
const REDIS_CLUSTER_URL =
  process.env.REDIS_CLUSTER_URL ??
  'redis-cluster://127.0.0.1:7000/?nodes=127.0.0.1:7001,127.0.0.1:7002';

interface Registered {
  id: string;
  uid: string;
  reportToken: string;
  redisUrl: string;
}

/**
 * The fleet on a real three-master Redis Cluster: the API and worker speak to it through ioredis'
 * Cluster client, every cluster's order queue is a hash-tagged slot of its own (so the queues of
 * a fleet spread over the masters), each sidecar's Redis user exists on every node, real
 * OrderConsumers take their orders over their own users and nothing else, and the resync
 * rebuilds the queues after their keys are gone. The suite shares the cluster with nothing that
 * flushes it: its keys carry its own prefix, and "the flush" removes exactly those.
 */
describe('the fleet on a three-master Redis Cluster', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let admin: Cluster;
  const prefix = testQueuePrefix();
  const clusters: Registered[] = [];
  const log = pino({ level: 'silent' });
  /** Every order each cluster's consumer took, in order. */
  const taken = new Map<string, ReconcileOrder[]>();
  const open: RedisClient[] = [];
  const asSidecar = (cluster: Registered) => {
    const redis = createRedisClient(cluster.redisUrl, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    open.push(redis);
    return redis;
  };
  let consumers: OrderConsumer[] = [];

  const startConsumers = async () => {
    consumers = clusters.map(
      (cluster) =>
        new OrderConsumer({
          clusterId: cluster.uid,
          connection: asSidecar(cluster),
          prefix,
          log,
          apply: (order) => {
            taken.set(cluster.uid, [...(taken.get(cluster.uid) ?? []), order]);
            return Promise.resolve({ applied: 1, pruned: 0, requeue: false, conditions: [] });
          },
          report: async () => {
            const at = new Date().toISOString();
            const last = taken.get(cluster.uid)?.at(-1);
            await postReport(api.url, cluster, {
              clusterId: cluster.uid,
              observedGeneration: last?.generation ?? 0,
              conditions: [condition('Available', 'True', 'AsExpected', at)],
              metrics: { nodes: 3 },
              csrDecisions: [],
              reportedAt: at,
            });
          },
        }),
    );
    await Promise.all(consumers.map((c) => c.start()));
  };
  const stopConsumers = async () => {
    await Promise.all(consumers.map((c) => c.close()));
    consumers = [];
  };
  const inSync = () =>
    eventually(
      async () => {
        const rows = await query<{ generation: number; observedGeneration: number }>(
          db.url,
          `SELECT d.generation, s."observedGeneration"
             FROM "DesiredState" d JOIN "ClusterStatus" s USING ("clusterId")`,
        );
        return rows.length === clusters.length &&
          rows.every((r) => r.observedGeneration === r.generation)
          ? rows
          : undefined;
      },
      { timeoutMs: 30_000, what: 'every cluster to report its desired generation applied' },
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL: REDIS_CLUSTER_URL, QUEUE_PREFIX: prefix };
    api = await startApi({ ...env, RATE_LIMIT_PER_MINUTE: '1000000' });
    worker = await startWorker({
      ...env,
      LOG_LEVEL: 'warn',
      RESYNC_EVERY_SECONDS: '1',
      SWEEP_EVERY_SECONDS: '1',
      ACL_SYNC_SECONDS: '1',
    });
    admin = createRedisClient(REDIS_CLUSTER_URL, { maxRetriesPerRequest: null }) as Cluster;
    for (let i = 0; i < 9; i++) {
      const res = await api.admin<{
        registerCluster: Omit<Registered, 'id' | 'uid'> & {
          cluster: { id: string; uid: string };
        };
      }>(
        `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1" }) {
           reportToken redisUrl cluster { id uid } } }`,
        { name: `shard-${i}` },
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      const { cluster, ...credentials } = res.data.registerCluster;
      clusters.push({ ...cluster, ...credentials });
    }
  }, 60_000);

  afterAll(async () => {
    await stopConsumers();
    await Promise.all(open.map((redis) => redis.quit().catch(() => redis.disconnect())));
    await worker?.close();
    await api?.app.close();
    if (admin) {
      for (const c of clusters) await deleteSidecarAcl(admin, c.uid).catch(() => undefined);
      await deleteRedisKeys(admin, `${prefix}:*`);
      admin.disconnect();
    }
    await db?.drop();
  });

  it("hands each sidecar a cluster URL, and its Redis user to every master; the fleet's queues spread over the masters", async () => {
    const masters = admin.nodes('master');
    expect(masters).toHaveLength(3);
    for (const cluster of clusters) {
      expect(cluster.redisUrl).toMatch(/^redis-cluster:\/\/sidecar\./);
      for (const node of redisNodes(admin)) {
        expect(await node.call('ACL', 'GETUSER', sidecarRedisUser(cluster.uid))).not.toBeNull();
      }
    }
    // Each queue is its own slot; the slots of nine clusters fall on more than one master.
    const owners = new Set(
      clusters.map((c) => {
        const slot = keySlot(`${prefix}:${sidecarQueueName(c.uid)}:wait`);
        expect(slot).toBe(keySlot(sidecarQueueName(c.uid)));
        return admin.slots[slot]?.[0];
      }),
    );
    expect(owners.size).toBeGreaterThan(1);
  });

  it("dispatches each cluster's orders to its own queue, taken by its sidecar's own user; reports come back", async () => {
    const sidecar = asSidecar(clusters[0]!);
    expect(isRedisCluster(sidecar)).toBe(true);
    await startConsumers();
    const generations = new Map<string, number>();
    for (const c of clusters) generations.set(c.uid, await setEnabled(api, c, true));
    await inSync();
    for (const c of clusters) {
      const orders = taken.get(c.uid) ?? [];
      expect(orders.at(-1)).toMatchObject({
        clusterId: c.uid,
        generation: generations.get(c.uid),
        spec: { enabled: true },
      });
      const seen = orders.map((o) => o.generation);
      expect(new Set(seen).size).toBe(seen.length);
    }
    // Another cluster's queue, wherever its slot lives, is refused to this user.
    const [a, b] = clusters;
    const other = new Queue(sidecarQueueName(b!.uid), { connection: sidecar, prefix });
    try {
      await expect(other.getJobCounts('waiting')).rejects.toThrow(/NOPERM/);
      await expect(sidecar.get(`${prefix}:{reconcile}:meta`)).rejects.toThrow(/NOPERM/);
      await expect(sidecar.call('ACL', 'LIST')).rejects.toThrow(/NOPERM/);
    } finally {
      await other.close();
    }
    const own = new Queue(sidecarQueueName(a!.uid), { connection: sidecar, prefix });
    try {
      expect(await own.getJobCounts('completed')).toEqual({
        completed: taken.get(a!.uid)?.length,
      });
    } finally {
      await own.close();
    }
  });

  it('rebuilds every pending order from PostgreSQL after its keys and sidecar users are gone', async () => {
    await stopConsumers();
    for (const c of clusters) await setEnabled(api, c, false);
    await eventually(
      async () => {
        const [row] = await query<{ n: number }>(
          db.url,
          `SELECT count(*)::int AS n FROM "ReconcileRun" WHERE generation = 3 AND state = 'DISPATCHED'`,
        );
        return row?.n === clusters.length ? true : undefined;
      },
      { what: 'every generation-3 order dispatched' },
    );
    // Redis lost everything of this fleet: every queue (its orders, the schedulers) and, as a
    // node restarted empty would, every sidecar user on every node.
    await deleteRedisKeys(admin, `${prefix}:*`);
    for (const c of clusters) await deleteSidecarAcl(admin, c.uid);
    // The ACL sync re-creates the users on every node; the resync re-derives the orders.
    await eventually(
      async () => {
        for (const c of clusters)
          for (const node of redisNodes(admin))
            if (!(await node.call('ACL', 'GETUSER', sidecarRedisUser(c.uid)))) return undefined;
        return true;
      },
      { timeoutMs: 30_000, what: 'every sidecar user back on every node' },
    );
    await startConsumers();
    await inSync();
    for (const c of clusters) {
      const orders = taken.get(c.uid) ?? [];
      expect(orders.at(-1)).toMatchObject({ generation: 3, spec: { enabled: false } });
      const seen = orders.map((o) => o.generation);
      expect(new Set(seen).size).toBe(seen.length);
    }
  });
});
