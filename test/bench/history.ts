/**
 * Health history of one cluster over 24 h with 10 M rows in the partitioned table, through
 * GraphQL (Cluster.health) and as the bare SQL the resolver runs.
 */
import pg from 'pg';
import { toGlobalId } from '../../apps/api/src/common/global-id.js';
import { maintainHealthHistory } from '../../apps/worker/src/maintenance/health-history.js';
import { startApi } from '../api/start-api.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { seedClusters } from './fleet-seed.js';
import { percentile, timeRuns } from './stats.js';

export interface HistoryBenchResult {
  rows: number;
  generateMs: number;
  graphql: { p50: number; p99: number };
  sql: { p50: number; p99: number };
}

export async function benchHistory(
  targetRows = 10_000_000,
  runs = 300,
): Promise<HistoryBenchResult> {
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    const ids = await seedClusters(sql, 10_000, { generation: 1, observed: 1 });
    await maintainHealthHistory(pool, {
      rawRetentionDays: 7,
      rollupRetentionDays: 90,
      partitionsAheadDays: 1,
    });
    const target = ids[0]!;
    const started = performance.now();
    // The cluster under test heartbeats every 30 s for 7 days (20,160 rows); the other 9,999
    // fill the table to 10 M rows, spread over the same 7 days (one statement per day).
    const perClusterPerDay = Math.ceil((targetRows - 20_160) / 9_999 / 7);
    const step = Math.floor(86_400 / perClusterPerDay);
    for (let day = 0; day < 7; day++) {
      await sql.query(
        `INSERT INTO "HealthSample" ("clusterId", "observedAt", "observedGeneration", available, degraded, progressing, metrics)
         SELECT c.id, date_trunc('day', now()) - make_interval(days => $1) + make_interval(secs => s * $2 + (abs(hashtext(c.id::text)) % $2)),
                1, s % 50 <> 0, s % 50 = 0, false, '{"nodes": 12, "vcpus": 96}'::jsonb
           FROM "Cluster" c CROSS JOIN generate_series(0, $3 - 1) AS s
          WHERE c.id <> $4::uuid`,
        [day, step, perClusterPerDay, target],
      );
    }
    await sql.query(
      `INSERT INTO "HealthSample" ("clusterId", "observedAt", "observedGeneration", available, degraded, progressing, metrics)
       SELECT $1::uuid, now() - make_interval(secs => s * 30), 1, s % 40 <> 0, s % 40 = 0, false, '{"nodes": 12, "vcpus": 96}'::jsonb
         FROM generate_series(0, 20159) AS s`,
      [target],
    );
    await sql.query('ANALYZE "HealthSample"');
    const generateMs = performance.now() - started;
    const { rows } = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "HealthSample"`,
    );
    const total = rows[0]?.n ?? 0;

    const api = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      RATE_LIMIT_PER_MINUTE: '100000000',
    });
    try {
      const id = toGlobalId('Cluster', target);
      const to = new Date();
      const from = new Date(to.getTime() - 86_400_000);
      const QUERY = `query($id: ID!, $from: DateTime!, $to: DateTime!) { cluster(id: $id) {
        health(from: $from, to: $to, step: 300) { at samples available degraded nodes vcpus } } }`;
      const check = await api.admin<{ cluster: { health: { samples: number }[] } }>(QUERY, {
        id,
        from: from.toISOString(),
        to: to.toISOString(),
      });
      const samples = check.data?.cluster.health.reduce((n, p) => n + p.samples, 0);
      if (!samples || samples < 2800)
        throw new Error(
          `health query returned ${samples} samples: ${JSON.stringify(check.errors)}`,
        );
      const gql = await timeRuns(
        () => api.admin(QUERY, { id, from: from.toISOString(), to: to.toISOString() }),
        runs,
        20,
      );
      const bare = await timeRuns(
        () =>
          pool.query(
            `SELECT date_bin(make_interval(secs => 300), "observedAt", $2::timestamptz) AS at, count(*)::int,
                    avg(available::int), avg(degraded::int), avg(progressing::int),
                    avg((metrics->>'nodes')::float8), avg((metrics->>'vcpus')::float8)
               FROM "HealthSample" WHERE "clusterId" = $1::uuid AND "observedAt" >= $2 AND "observedAt" < $3 GROUP BY 1 ORDER BY 1`,
            [target, from, to],
          ),
        runs,
        20,
      );
      const result = {
        rows: total,
        generateMs,
        graphql: { p50: percentile(gql, 50), p99: percentile(gql, 99) },
        sql: { p50: percentile(bare, 50), p99: percentile(bare, 99) },
      };
      console.log(
        `history: ${total} rows (generated in ${(generateMs / 1000).toFixed(1)} s); GraphQL p50 ${result.graphql.p50.toFixed(1)} ms p99 ${result.graphql.p99.toFixed(1)} ms`,
      );
      return result;
    } finally {
      await api.app.close();
    }
  } finally {
    await pool.end();
    await sql.end();
    await db.drop();
  }
}
