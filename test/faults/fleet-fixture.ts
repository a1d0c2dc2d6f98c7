import {
  createRedisClient,
  flushRedis,
  ingestKey,
  INGEST_REPORT_FIELD,
  sidecarQueueName,
  type RedisClient,
  type Condition,
  type ReconcileOrder,
  type StatusReport,
} from '@fleet/contracts';
import { Worker } from 'bullmq';
import pg from 'pg';
import type { RunningApi } from '../api/start-api.js';

/**
 * Shared pieces of the fault suites. Each suite owns a database, a BullMQ prefix and its own
 * redis-server (startPrivateRedis), and the PostgreSQL suite its own PostgreSQL
 * (startPrivatePostgres), so flushing, cutting or crashing one touches no other suite.
 */

export interface RegisteredCluster {
  id: string;
  uid: string;
  reportToken: string;
}

export async function registerClusters(
  api: RunningApi,
  count: number,
  namePrefix = 'fault',
): Promise<RegisteredCluster[]> {
  const clusters: RegisteredCluster[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api.admin<{
      registerCluster: { reportToken: string; cluster: { id: string; uid: string } };
    }>(
      `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1" }) {
         reportToken cluster { id uid } } }`,
      { name: `${namePrefix}-${i}` },
    );
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    clusters.push({
      ...res.data.registerCluster.cluster,
      reportToken: res.data.registerCluster.reportToken,
    });
  }
  return clusters;
}

export async function setEnabled(
  api: RunningApi,
  cluster: RegisteredCluster,
  enabled: boolean,
): Promise<number> {
  const res = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(
    `mutation($id: ID!, $enabled: Boolean!) { setKarpenter(clusterId: $id, input: { enabled: $enabled }) { karpenter { generation } } }`,
    { id: cluster.id, enabled },
  );
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.setKarpenter.karpenter.generation;
}

export const condition = (
  type: string,
  status: Condition['status'],
  reason: string,
  at: string,
): Condition => ({
  type,
  status,
  reason,
  message: `${type} is ${status}`,
  lastTransitionTime: at,
});

/** POSTs a report as a sidecar would, retrying while the API answers 5xx or not at all. */
export async function postReport(
  apiUrl: string,
  cluster: RegisteredCluster,
  report: StatusReport,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${apiUrl}/v1/clusters/${cluster.uid}/status`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${cluster.reportToken}`,
        },
        body: JSON.stringify(report),
      });
      if (res.ok) return;
      if (res.status < 500) throw new Error(`report refused: ${res.status} ${await res.text()}`);
    } catch (err) {
      if (attempt >= 20 || String(err).includes('refused')) throw err;
    }
    await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
  }
}

/**
 * Stand-ins for sidecars that only take orders and report them applied: every order each one
 * processed is counted, so a suite can assert "delivered exactly once".
 */
export class OrderRecorder {
  readonly delivered = new Map<string, ReconcileOrder[]>();
  private readonly workers: Worker[] = [];
  private readonly connection: RedisClient;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
    private readonly apiUrl: string,
  ) {
    this.connection = createRedisClient(redisUrl, { maxRetriesPerRequest: null });
  }

  async start(clusters: readonly RegisteredCluster[]): Promise<void> {
    for (const cluster of clusters) {
      const worker = new Worker<ReconcileOrder>(
        sidecarQueueName(cluster.uid),
        async (job) => {
          const list = this.delivered.get(cluster.uid) ?? [];
          list.push(job.data);
          this.delivered.set(cluster.uid, list);
          const at = new Date().toISOString();
          await postReport(this.apiUrl, cluster, {
            clusterId: cluster.uid,
            observedGeneration: job.data.generation,
            conditions: [
              condition('Available', 'True', 'AsExpected', at),
              condition('Degraded', 'False', 'AsExpected', at),
            ],
            metrics: { nodes: 3 },
            csrDecisions: [],
            reportedAt: at,
          });
        },
        { connection: this.connection, prefix: this.prefix, concurrency: 1 },
      );
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    this.connection.disconnect();
  }
}

export async function query<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Empties this suite's Redis logical database, and only it; on a Redis Cluster (database 0
 * only), every master.
 */
export async function flushRedisDb(redisUrl: string): Promise<void> {
  const redis = createRedisClient(redisUrl, { maxRetriesPerRequest: null });
  try {
    await flushRedis(redis);
  } finally {
    redis.disconnect();
  }
}

/** Queues reports exactly as the API's report endpoint does: one entry each on the report stream. */
export async function enqueueReports(
  redisUrl: string,
  prefix: string,
  reports: readonly StatusReport[],
): Promise<void> {
  const connection = createRedisClient(redisUrl, { maxRetriesPerRequest: null });
  const stream = ingestKey(prefix, 'reports');
  try {
    for (let i = 0; i < reports.length; i += 1000) {
      const pipeline = connection.pipeline();
      for (const report of reports.slice(i, i + 1000))
        pipeline.xadd(stream, '*', INGEST_REPORT_FIELD, JSON.stringify(report));
      await pipeline.exec();
    }
  } finally {
    connection.disconnect();
  }
}
