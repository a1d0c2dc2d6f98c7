/**
 * Mutation → applied by a sidecar → visible in GraphQL, with 10,000 clusters heartbeating. 100
 * clusters are served by real OrderConsumer instances (the sidecar's own order loop, with its
 * BullMQ worker on the cluster's queue and reports over HTTP); a simulator heartbeats for all
 * 10,000 at the sidecar's rate. Apply is instant here: this measures the fleet's path, not kube.
 */
import type { Condition, ReconcileOrder, StatusReport } from '@fleet/contracts';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { toGlobalId } from '../../apps/api/src/common/global-id.js';
import { OrderConsumer } from '../../apps/sidecar/src/orders/order-consumer.js';
import type { ReconcileResult } from '../../apps/sidecar/src/reconcile/reconciler.js';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi } from '../api/start-api.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { BENCH_REPORT_TOKEN, seedClusters } from './fleet-seed.js';
import { percentile } from './stats.js';

export interface LatencyBenchResult {
  clusters: number;
  consumers: number;
  mutations: number;
  heartbeatsPerSecond: number;
  p50: number;
  p99: number;
}

const REDIS_URL = 'redis://127.0.0.1:6379/10';

export async function benchLatency(
  clusters = 10_000,
  consumers = 100,
  mutations = 200,
  heartbeatSeconds = 30,
): Promise<LatencyBenchResult> {
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  await redis.flushdb();
  const prefix = testQueuePrefix();
  const ids = await seedClusters(sql, clusters, { generation: 1, observed: 1 });
  const worker = await startWorker({
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
  });
  const api = await startApi({
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    RATE_LIMIT_PER_MINUTE: '100000000',
  });
  const log = pino({ level: 'silent' });
  const post = async (report: StatusReport) => {
    const res = await fetch(`${api.url}/v1/clusters/${report.clusterId}/status`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${BENCH_REPORT_TOKEN}`,
      },
      body: JSON.stringify(report),
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`report refused: ${res.status}`);
  };
  const conditions = (at: string): Condition[] => [
    {
      type: 'Available',
      status: 'True',
      reason: 'AsExpected',
      message: 'ok',
      lastTransitionTime: at,
    },
    {
      type: 'Degraded',
      status: 'False',
      reason: 'AsExpected',
      message: 'ok',
      lastTransitionTime: at,
    },
  ];
  const observed = new Map<string, number>(ids.map((id) => [id, 1]));
  const real = ids.slice(0, consumers);
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const orderConsumers = real.map((clusterId) => {
    let last = 1;
    return new OrderConsumer({
      clusterId,
      connection,
      prefix,
      log,
      apply: (order: ReconcileOrder): Promise<ReconcileResult> => {
        last = order.generation;
        observed.set(clusterId, order.generation);
        return Promise.resolve({
          conditions: conditions(new Date().toISOString()),
          applied: 1,
          pruned: 0,
          requeue: false,
        });
      },
      report: () =>
        post({
          clusterId,
          observedGeneration: last,
          conditions: conditions(new Date().toISOString()),
          metrics: {},
          csrDecisions: [],
          reportedAt: new Date().toISOString(),
        }),
    });
  });
  await Promise.all(orderConsumers.map((c) => c.start()));

  // Heartbeats for every cluster, spread evenly over the interval (as 10,000 sidecars would).
  let heartbeats = 0;
  let cursor = 0;
  const tickMs = 100;
  const perTick = Math.ceil((clusters / heartbeatSeconds) * (tickMs / 1000));
  const simulator = setInterval(() => {
    for (let i = 0; i < perTick; i++) {
      const clusterId = ids[cursor++ % ids.length]!;
      const at = new Date().toISOString();
      heartbeats++;
      void post({
        clusterId,
        observedGeneration: observed.get(clusterId) ?? 1,
        conditions: conditions(at),
        metrics: { nodes: 12 },
        csrDecisions: [],
        reportedAt: at,
      }).catch(() => undefined);
    }
  }, tickMs);
  const heartbeatStart = performance.now();
  try {
    await new Promise((r) => setTimeout(r, 3000)); // let the heartbeat load settle
    const samples: number[] = [];
    const STATUS = `query($id: ID!) { cluster(id: $id) { inSync karpenter { generation } status { observedGeneration } } }`;
    for (let i = 0; i < mutations; i++) {
      const clusterId = real[i % real.length]!;
      const id = toGlobalId('Cluster', clusterId);
      const started = performance.now();
      const res = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(
        `mutation($id: ID!, $enabled: Boolean!) { setKarpenter(clusterId: $id, input: { enabled: $enabled }) { karpenter { generation } } }`,
        { id, enabled: i % 2 === 0 },
      );
      const generation = res.data?.setKarpenter.karpenter.generation;
      if (!generation) throw new Error(JSON.stringify(res.errors));
      for (;;) {
        const seen = await api.admin<{ cluster: { status: { observedGeneration: number } } }>(
          STATUS,
          { id },
        );
        if ((seen.data?.cluster.status.observedGeneration ?? 0) >= generation) break;
        if (performance.now() - started > 30_000)
          throw new Error(`generation ${generation} of ${clusterId} not visible after 30 s`);
        await new Promise((r) => setTimeout(r, 5));
      }
      samples.push(performance.now() - started);
    }
    const heartbeatsPerSecond = heartbeats / ((performance.now() - heartbeatStart) / 1000);
    const result = {
      clusters,
      consumers,
      mutations,
      heartbeatsPerSecond,
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
    };
    console.log(
      `latency: p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms (${heartbeatsPerSecond.toFixed(0)} heartbeats/s)`,
    );
    return result;
  } finally {
    clearInterval(simulator);
    await Promise.all(orderConsumers.map((c) => c.close()));
    connection.disconnect();
    await api.app.close();
    await worker.close();
    await redis.flushdb();
    redis.disconnect();
    await sql.end();
    await db.drop();
  }
}
