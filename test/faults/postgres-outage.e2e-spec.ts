import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  eventually,
  startPrivatePostgres,
  startPrivateRedis,
  startProcess,
  testQueuePrefix,
  type PrivatePostgres,
  type PrivateRedis,
  type RunningProcess,
} from '@fleet/testing';
import { startApi, type RunningApi } from '../api/start-api.js';
import {
  condition,
  enqueueReports,
  query,
  registerClusters,
  type RegisteredCluster,
} from './fleet-fixture.js';

// This suite restarts PostgreSQL and cuts its sessions: it runs its own PostgreSQL and Redis,
// never the shared ones other suites use.
let redis: PrivateRedis;
let REDIS_URL: string;
let postgres: PrivatePostgres;
const DATABASE = 'fleet_outage';
const APP = 'fleet-worker-outage';

/**
 * PostgreSQL restarts under the ingest (`pg_ctl restart -m fast`: every session ends, the server
 * is away for a moment), then every connection of the worker is terminated, again and again,
 * while it writes. Reports are retried; none is lost or recorded twice; the worker stays up.
 */
describe('PostgreSQL connections cut during ingest', () => {
  let db: { url: string; name: string };
  let api: RunningApi;
  let prefix: string;
  let clusters: RegisteredCluster[];
  let worker: RunningProcess;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    REDIS_URL = redis.url;
    postgres = await startPrivatePostgres(DATABASE);
    db = { url: postgres.databaseUrl(DATABASE), name: DATABASE };
    prefix = testQueuePrefix();
    api = await startApi({
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    clusters = await registerClusters(api, 20, 'outage');
  });

  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await api?.app.close();
    await postgres?.stop();
    await redis?.stop();
  });

  it('records every report exactly once', async () => {
    // Enough that the batched stream drain (issue 19) is still writing when the cuts begin.
    const perCluster = 300;
    const total = clusters.length * perCluster;
    const base = Date.now() + 60_000;
    const reports = clusters.flatMap((c) =>
      Array.from({ length: perCluster }, (_, i) => {
        const at = new Date(base + i * 1000).toISOString();
        return {
          clusterId: c.uid,
          observedGeneration: 1,
          conditions: [
            condition('Available', i % 3 ? 'True' : 'False', i % 3 ? 'AsExpected' : 'Scaling', at),
          ],
          metrics: { nodes: i },
          csrDecisions: [],
          reportedAt: at,
        };
      }),
    );
    const url = new URL(db.url);
    url.searchParams.set('application_name', APP);
    worker = startProcess(
      'dist/apps/worker/src/main.js',
      {
        DATABASE_URL: url.toString(),
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        LOG_LEVEL: 'error',
        INGEST_BATCH_SIZE: '100',
        JOB_LOCK_MS: '5000',
      },
      'worker',
    );
    await enqueueReports(REDIS_URL, prefix, reports);
    const count = async () =>
      (
        await query<{ n: number }>(
          db.url,
          `SELECT count(*)::int AS n FROM "HealthSample" WHERE "observedAt" >= $1`,
          [new Date(base)],
        )
      )[0]?.n ?? 0;

    await postgres.restart();
    let cuts = 0;
    let terminated = 0;
    // Cuts for 4 s, longer if the worker had no session to cut yet (it may still be reconnecting
    // after the restart on a loaded machine), but never past 20 s.
    const started = Date.now();
    const cutting = () =>
      (Date.now() - started < 4000 || terminated === 0) && Date.now() - started < 20_000;
    while (cutting() && (await count()) < total) {
      const rows = await query<{ ok: boolean }>(
        db.url,
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`,
        [db.name, APP],
      );
      cuts++;
      terminated += rows.filter((r) => r.ok).length;
      await new Promise((r) => setTimeout(r, 150));
    }
    await eventually(async () => ((await count()) === total ? true : undefined), {
      timeoutMs: 30_000,
      what: `${total} health samples after ${cuts} cuts (${terminated} sessions terminated)`,
    }).catch((err: Error) => {
      throw new Error(`${err.message}\n${worker.output()}`);
    });
    expect(terminated).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await count()).toBe(total);
    expect(
      await query(
        db.url,
        `SELECT "clusterId", type, at FROM "ConditionTransition" GROUP BY 1, 2, 3 HAVING count(*) > 1`,
      ),
    ).toEqual([]);
    const latest = await query<{ n: number }>(
      db.url,
      `SELECT count(*)::int AS n FROM "ClusterStatus" WHERE "lastReportAt" = $1`,
      [new Date(base + (perCluster - 1) * 1000)],
    );
    expect(latest[0]?.n).toBe(clusters.length);
    expect(worker.child.exitCode).toBeNull();
  }, 120_000);
});
