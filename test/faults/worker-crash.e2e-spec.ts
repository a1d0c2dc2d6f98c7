import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  eventually,
  startProcess,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
  startPrivateRedis,
  type PrivateRedis,
} from '@fleet/testing';
import { startApi, type RunningApi } from '../api/start-api.js';
import {
  condition,
  enqueueReports,
  OrderRecorder,
  query,
  registerClusters,
  setEnabled,
  type RegisteredCluster,
} from './fleet-fixture.js';

// This suite flushes Redis: it runs its own redis-server, never the shared one.
let redis: PrivateRedis;
let REDIS_URL: string;

/**
 * The worker, run as a real process from dist, dies with SIGKILL in the middle of dispatching and
 * in the middle of ingesting. After a restart every order is delivered and every report recorded,
 * each exactly once: PostgreSQL holds the truth, the worker holds nothing that matters.
 */
describe('worker killed with SIGKILL', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let prefix: string;
  let clusters: RegisteredCluster[];
  const workers: RunningProcess[] = [];

  const startWorkerProcess = () => {
    const worker = startProcess(
      'dist/apps/worker/src/main.js',
      {
        DATABASE_URL: db.url,
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        RECONCILE_CONCURRENCY: '2',
        JOB_LOCK_MS: '4000',
        RESYNC_EVERY_SECONDS: '2',
      },
      'worker',
    );
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    redis = await startPrivateRedis();
    REDIS_URL = redis.url;
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    api = await startApi({
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    clusters = await registerClusters(api, 20, 'crash');
  });

  afterAll(async () => {
    for (const w of workers) await w.stop('SIGKILL');
    await api?.app.close();
    await db?.drop();
    await redis?.stop();
  });

  it('in the middle of dispatch: after a restart every cluster gets its newest order exactly once', async () => {
    // A backlog of reconcile requests (registration, then a change) waits for a worker.
    for (const c of clusters) await setEnabled(api, c, true);
    const first = startWorkerProcess();
    const dispatchedAtKill = await eventually(
      async () => {
        const [row] = await query<{ n: number }>(
          db.url,
          `SELECT count(*)::int AS n FROM "ReconcileRun" WHERE generation = 2 AND state = 'DISPATCHED'`,
        );
        return row && row.n > 0 ? row.n : undefined;
      },
      // The bound covers the worker's start-up, which a loaded machine (CI) stretches; the test's
      // own bound (below) leaves room for it.
      { intervalMs: 5, timeoutMs: 60_000, what: 'the first dispatched order' },
    );
    first.child.kill('SIGKILL');
    await first.stop();

    startWorkerProcess();
    const recorder = new OrderRecorder(REDIS_URL, prefix, api.url);
    await recorder.start(clusters);
    try {
      await eventually(
        async () => {
          const [row] = await query<{ n: number }>(
            db.url,
            `SELECT count(*)::int AS n FROM "ClusterStatus" WHERE "observedGeneration" = 2`,
          );
          return row?.n === clusters.length ? true : undefined;
        },
        {
          timeoutMs: 30_000,
          what: `all ${clusters.length} clusters at generation 2 (${dispatchedAtKill} dispatched at the kill)`,
        },
      );
      // Stalled jobs of the killed worker come back after their lock expires: wait past it.
      await new Promise((r) => setTimeout(r, 4500));
      for (const c of clusters) {
        const generations = (recorder.delivered.get(c.uid) ?? []).map((o) => o.generation);
        expect(generations.filter((g) => g === 2)).toHaveLength(1);
        expect(generations.filter((g) => g === 1).length).toBeLessThanOrEqual(1);
        expect(recorder.delivered.get(c.uid)?.at(-1)?.spec.enabled).toBe(true);
      }
      const runs = await query<{ state: string; n: number }>(
        db.url,
        `SELECT state::text, count(*)::int AS n FROM "ReconcileRun" WHERE generation = 2 GROUP BY 1`,
      );
      expect(runs).toEqual([{ state: 'APPLIED', n: clusters.length }]);
    } finally {
      await recorder.close();
    }
  }, 180_000);

  it('in the middle of ingest: after a restart every report is recorded exactly once', async () => {
    for (const w of workers) await w.stop('SIGKILL');
    const perCluster = 50;
    const total = clusters.length * perCluster;
    // Newer than anything the first test reported, so status must end at the last of these.
    const base = Date.now() + 60_000;
    const reports = clusters.flatMap((c) =>
      Array.from({ length: perCluster }, (_, i) => {
        const at = new Date(base + i * 1000).toISOString();
        // Degraded flips on every report: each report is a condition transition.
        return {
          cluster: c,
          report: {
            clusterId: c.uid,
            observedGeneration: 2,
            conditions: [
              condition('Available', 'True', 'AsExpected', at),
              condition(
                'Degraded',
                i % 2 ? 'True' : 'False',
                i % 2 ? 'Flapping' : 'AsExpected',
                at,
              ),
            ],
            metrics: { nodes: i },
            csrDecisions: [],
            reportedAt: at,
          },
        };
      }),
    );
    const count = async () =>
      (
        await query<{ n: number }>(
          db.url,
          `SELECT count(*)::int AS n FROM "HealthSample" WHERE "observedAt" >= $1 AND "observedAt" < $2`,
          [new Date(base), new Date(base + perCluster * 1000)],
        )
      )[0]?.n ?? 0;

    // All reports queued (as the API queues them) before the worker starts, so the kill lands in ingest.
    await enqueueReports(
      REDIS_URL,
      prefix,
      reports.map((r) => r.report),
    );
    const first = startWorkerProcess();
    const atKill = await eventually(async () => ((await count()) > 0 ? count() : undefined), {
      intervalMs: 5,
      what: 'the first recorded report',
    });
    first.child.kill('SIGKILL');
    await first.stop();

    startWorkerProcess();
    await eventually(async () => ((await count()) === total ? true : undefined), {
      timeoutMs: 30_000,
      what: `${total} health samples (${atKill} recorded at the kill)`,
    }).catch(async (err: Error) => {
      throw new Error(
        `${err.message} (now ${await count()})\n${workers.map((w) => w.output()).join('\n')}`,
      );
    });
    await new Promise((r) => setTimeout(r, 4500)); // past the lock: any redelivery would show now
    expect(await count()).toBe(total);
    const duplicates = await query(
      db.url,
      `SELECT "clusterId", type, at FROM "ConditionTransition" GROUP BY 1, 2, 3 HAVING count(*) > 1`,
    );
    expect(duplicates).toEqual([]);
    // Status moved forward to the newest report of each cluster, whatever the order of retries.
    const latest = await query<{ n: number }>(
      db.url,
      `SELECT count(*)::int AS n FROM "ClusterStatus" WHERE "lastReportAt" = $1`,
      [new Date(base + (perCluster - 1) * 1000)],
    );
    expect(latest[0]?.n).toBe(clusters.length);
  }, 180_000);
});
