/**
 * Status ingest: reports through the API's report endpoint (HTTP, token check, queue) and the
 * worker's batched writer into PostgreSQL, against a raw batched INSERT of the same health rows.
 */
import { STATUS_INGEST_QUEUE, type StatusReport } from '@fleet/contracts';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi } from '../api/start-api.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { freePort, startProcess } from '../support/processes.js';
import { apiReady } from './api-process.js';
import { BENCH_REPORT_TOKEN, seedClusters } from './fleet-seed.js';

export interface IngestBenchResult {
  reports: number;
  rawInsertMs: number;
  queueToPgMs: number;
  httpToPgMs: number;
  /** The same, with the API and the worker as their own processes (as deployed). */
  httpToPgProcessesMs: number;
}

const REDIS_URL = 'redis://127.0.0.1:6379/10';

/**
 * Round by round (every cluster's first report, then every cluster's second...), as sidecars
 * report: a health sample is keyed by its cluster and the time the API received it, so one
 * cluster's reports posted back to back could share a millisecond and be one sample.
 */
function reportsFor(ids: readonly string[], perCluster: number, base: number): StatusReport[] {
  return Array.from({ length: perCluster }, (_, i) =>
    ids.map((clusterId, c) => {
      const at = new Date(base + i * 30_000 + c).toISOString();
      return {
        clusterId,
        observedGeneration: 1,
        conditions: [
          {
            type: 'Available',
            status: 'True' as const,
            reason: 'AsExpected',
            message: 'ok',
            lastTransitionTime: at,
          },
          {
            type: 'Degraded',
            status: i % 10 === 9 ? ('True' as const) : ('False' as const),
            reason: 'AsExpected',
            message: 'ok',
            lastTransitionTime: at,
          },
        ],
        metrics: { nodes: 12, vcpus: 96 },
        csrDecisions: [],
        reportedAt: at,
      };
    }),
  ).flat();
}

async function rows(sql: pg.Client): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "HealthSample"`);
  return rows[0]?.n ?? 0;
}

/** Until `expected` rows are in, failing when their count has not moved for 30 s. */
async function waitRows(sql: pg.Client, expected: number): Promise<void> {
  let last = -1;
  let movedAt = performance.now();
  for (;;) {
    const n = await rows(sql);
    if (n >= expected) return;
    if (n !== last) [last, movedAt] = [n, performance.now()];
    else if (performance.now() - movedAt > 30_000)
      throw new Error(`health samples stuck at ${n} of ${expected} for 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Posts every report to the report endpoint, 64 requests in flight. */
async function postAll(apiUrl: string, reports: readonly StatusReport[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < reports.length) {
        const report = reports[next++]!;
        const res = await fetch(`${apiUrl}/v1/clusters/${report.clusterId}/status`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${BENCH_REPORT_TOKEN}`,
          },
          body: JSON.stringify(report),
        });
        if (!res.ok) throw new Error(`report refused: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
}

export async function benchIngest(clusters = 10_000, perCluster = 3): Promise<IngestBenchResult> {
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
  const total = clusters * perCluster;
  try {
    // Raw baseline: the same rows, 500 per INSERT, as fast as one connection goes.
    const raw = reportsFor(ids, perCluster, Date.now() - 86_400_000);
    let started = performance.now();
    for (let i = 0; i < raw.length; i += 500) {
      await sql.query(
        `INSERT INTO "HealthSample" ("clusterId", "observedAt", "observedGeneration", available, degraded, progressing, metrics)
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS h("clusterId" uuid, "observedAt" timestamptz, "observedGeneration" int,
                available boolean, degraded boolean, progressing boolean, metrics jsonb)`,
        [
          JSON.stringify(
            raw.slice(i, i + 500).map((r) => ({
              clusterId: r.clusterId,
              observedAt: r.reportedAt,
              observedGeneration: 1,
              available: true,
              degraded: r.conditions[1]?.status === 'True',
              progressing: false,
              metrics: r.metrics,
            })),
          ),
        ],
      );
    }
    const rawInsertMs = performance.now() - started;
    await sql.query(`TRUNCATE "HealthSample"`);

    // Queue → PostgreSQL: the reports queued as the API queues them, then drained by the worker.
    const queued = reportsFor(ids, perCluster, Date.now() - 43_200_000);
    const queue = new Queue<StatusReport>(STATUS_INGEST_QUEUE, { connection: redis, prefix });
    started = performance.now();
    for (let i = 0; i < queued.length; i += 1000) {
      await queue.addBulk(
        queued.slice(i, i + 1000).map((data) => ({
          name: 'report',
          data,
          opts: { attempts: 20, removeOnComplete: { count: 1000 } },
        })),
      );
    }
    await waitRows(sql, total);
    const queueToPgMs = performance.now() - started;
    await queue.close();
    await sql.query(`TRUNCATE "HealthSample"`);

    // HTTP → PostgreSQL: what a fleet of sidecars does, 64 requests in flight.
    const posted = reportsFor(ids, perCluster, Date.now() - 21_600_000);
    started = performance.now();
    await postAll(api.url, posted);
    await waitRows(sql, total);
    const httpToPgMs = performance.now() - started;
    await sql.query(`TRUNCATE "HealthSample"`);

    // The same with the API and the worker in processes of their own, as a deployment runs
    // them: the bench process then only plays the sidecars.
    const apiPort = await freePort();
    const processEnv = {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: testQueuePrefix(),
      LOG_LEVEL: 'warn',
    };
    const apiProcess = startProcess(
      'dist/apps/api/src/main.js',
      { ...processEnv, API_PORT: String(apiPort), NODE_ENV: 'production' },
      'api',
    );
    const workerProcess = startProcess('dist/apps/worker/src/main.js', processEnv, 'worker');
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    try {
      await apiReady(apiUrl);
      const again = reportsFor(ids, perCluster, Date.now() - 10_800_000);
      started = performance.now();
      await postAll(apiUrl, again);
      await waitRows(sql, total);
    } finally {
      await apiProcess.stop();
      await workerProcess.stop();
    }
    const httpToPgProcessesMs = performance.now() - started;
    console.log(
      `ingest: ${total} reports; raw INSERT ${rawInsertMs.toFixed(0)} ms, queue→PG ${queueToPgMs.toFixed(0)} ms, HTTP→PG ${httpToPgMs.toFixed(0)} ms, HTTP→PG (own processes) ${httpToPgProcessesMs.toFixed(0)} ms`,
    );
    return { reports: total, rawInsertMs, queueToPgMs, httpToPgMs, httpToPgProcessesMs };
  } finally {
    await api.app.close();
    await worker.close();
    await redis.flushdb();
    redis.disconnect();
    await sql.end();
    await db.drop();
  }
}
