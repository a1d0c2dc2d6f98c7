/**
 * planChange over 1,000 clusters → every entry PLANNED (issue 21 §1). Each cluster runs the
 * sidecar's real OrderConsumer (its BullMQ worker on `sidecar.<id>`) with an instant plan that
 * answers through the real `/v1/clusters/:id/plans/:planId` endpoint with the cluster's own
 * token. Baseline (same run): the same 1,000 plan orders put on the same queues with BullMQ and
 * the same 1,000 answers POSTed to the same endpoint, without the API's plan logic (no plan row,
 * no worker dispatch: the endpoint authenticates, parses and finds no PENDING entry).
 */
import { loadavg } from 'node:os';
import {
  PLAN_JOB_NAME,
  planJobId,
  sidecarQueueName,
  type PlanOrder,
  type PlanReport,
} from '@fleet/contracts';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { OrderConsumer } from '../../apps/sidecar/src/orders/order-consumer.js';
import type { PlanResult } from '../../apps/sidecar/src/plan/plan-phase.js';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi } from '../api/start-api.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { benchReportToken, seedClusters } from './fleet-seed.js';

export interface PlansBenchResult {
  clusters: number;
  planMs: number[];
  baselineMs: number[];
  /** CPU seconds of the bench process (API, worker and consumers all in it) per run. */
  planCpuSeconds: number[];
  baselineCpuSeconds: number[];
  loadAverage: { before: number; after: number };
}

const REDIS_URL = 'redis://127.0.0.1:6379/11';

const PLANNED: PlanResult = {
  outcome: 'PLANNED',
  objects: [
    {
      target: 'workload',
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'kube-system',
      name: 'karpenter',
      action: 'CHANGED',
      diff: [
        { path: '.spec.template.spec.containers[0].env[0].value', before: 'info', after: 'debug' },
      ],
      errors: [],
    },
  ],
};

export async function benchPlans(clusters = 1_000, runs = 5): Promise<PlansBenchResult> {
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  await redis.flushdb();
  const prefix = testQueuePrefix();
  const ids = await seedClusters(sql, clusters, { generation: 1, observed: 1, tokens: 'own' });
  await sql.query(`UPDATE "Cluster" SET labels = '{"bench":"plans"}'::jsonb`);
  const worker = await startWorker({
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    // Nothing heartbeats here: without this, clusters turn Stale mid-run and are NOT_PLANNED.
    STALE_AFTER_HEARTBEATS: '1000',
  });
  const api = await startApi({
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    RATE_LIMIT_PER_MINUTE: '100000000',
  });
  const log = pino({ level: 'silent' });
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  let answered = 0;
  const lastOrder = new Map<string, PlanOrder['order']>();
  const consumers = ids.map(
    (clusterId, i) =>
      new OrderConsumer({
        clusterId,
        connection,
        prefix,
        log,
        apply: () => Promise.reject(new Error('the plans bench sends no orders')),
        report: () => Promise.resolve(),
        plan: (order) => {
          lastOrder.set(clusterId, order);
          return Promise.resolve(PLANNED);
        },
        reportPlan: async (report: PlanReport) => {
          const res = await fetch(`${api.url}/v1/clusters/${clusterId}/plans/${report.planId}`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${benchReportToken(i)}`,
            },
            body: JSON.stringify(report),
          });
          await res.arrayBuffer();
          // 409 is the baseline's answer (no PENDING entry); anything else is a broken run.
          if (res.status !== 202 && res.status !== 409)
            throw new Error(`plan report refused: ${res.status}`);
          answered++;
        },
      }),
  );
  for (let k = 0; k < consumers.length; k += 200)
    await Promise.all(consumers.slice(k, k + 200).map((c) => c.start()));
  const queues = ids.map(
    (clusterId) => new Queue(sidecarQueueName(clusterId), { connection, prefix }),
  );

  const planOnce = async () => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const res = await api.admin<{ planChange: { id: string } }>(
      `mutation { planChange(input: { labelSelector: "bench=plans", change: { logLevel: debug } }) { id } }`,
    );
    const id = res.data?.planChange.id;
    if (!id) throw new Error(JSON.stringify(res.errors));
    for (;;) {
      const { rows } = await sql.query<{ planned: number; other: number }>(
        `SELECT count(*) FILTER (WHERE state = 'PLANNED')::int AS planned,
                count(*) FILTER (WHERE state NOT IN ('PLANNED', 'PENDING'))::int AS other
           FROM "ChangePlanCluster" WHERE "planId" = $1`,
        [id],
      );
      if (rows[0]!.other > 0) {
        const { rows: why } = await sql.query<{ state: string; reason: string; message: string }>(
          `SELECT state::text AS state, reason, message FROM "ChangePlanCluster"
            WHERE "planId" = $1 AND state NOT IN ('PLANNED', 'PENDING') LIMIT 1`,
          [id],
        );
        throw new Error(
          `plan ${id}: ${rows[0]!.other} not PLANNED, e.g. ${JSON.stringify(why[0])}`,
        );
      }
      if (rows[0]!.planned === clusters) break;
      if (performance.now() - started > 120_000) throw new Error(`plan ${id} not done in 120 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return { ms, cpu: (used.user + used.system) / 1e6 };
  };
  const baselineOnce = async () => {
    const planId = crypto.randomUUID();
    const target = answered + clusters;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      queues.map((q, i) => {
        const order = lastOrder.get(ids[i]!);
        if (!order) throw new Error(`no plan order seen for ${ids[i]}`);
        return q.add(PLAN_JOB_NAME, { planId, order } satisfies PlanOrder, {
          jobId: planJobId(planId),
          removeOnComplete: true,
          removeOnFail: true,
        });
      }),
    );
    while (answered < target) {
      if (performance.now() - started > 120_000) throw new Error('baseline not done in 120 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return { ms, cpu: (used.user + used.system) / 1e6 };
  };

  const before = loadavg()[0]!;
  try {
    await planOnce(); // warm-up, and the orders the baseline replays
    await baselineOnce();
    const result: PlansBenchResult = {
      clusters,
      planMs: [],
      baselineMs: [],
      planCpuSeconds: [],
      baselineCpuSeconds: [],
      loadAverage: { before, after: 0 },
    };
    for (let r = 0; r < runs; r++) {
      const p = await planOnce();
      result.planMs.push(p.ms);
      result.planCpuSeconds.push(p.cpu);
      const b = await baselineOnce();
      result.baselineMs.push(b.ms);
      result.baselineCpuSeconds.push(b.cpu);
    }
    result.loadAverage.after = loadavg()[0]!;
    console.log(
      `plans: ${result.planMs.map((m) => m.toFixed(0)).join(', ')} ms; baseline ${result.baselineMs.map((m) => m.toFixed(0)).join(', ')} ms; load ${before.toFixed(2)} → ${result.loadAverage.after.toFixed(2)}`,
    );
    return result;
  } finally {
    await Promise.all(consumers.map((c) => c.close()));
    await Promise.all(queues.map((q) => q.close()));
    connection.disconnect();
    await api.app.close();
    await worker.close();
    await redis.flushdb();
    redis.disconnect();
    await sql.end();
    await db.drop();
  }
}
