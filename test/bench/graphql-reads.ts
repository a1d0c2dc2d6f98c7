/**
 * GraphQL reads at fleet scale: the first 100 clusters with status, filtered, and the fleet
 * summary, at 10,000 registered clusters (`BENCH_CLUSTERS`) — against the raw SQL of the same
 * page as baseline.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { foldFleetSummary } from '../../apps/worker/src/maintenance/fleet-summary.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiProcess, type ApiProcess } from './api-process.js';
import { WRK_DONE, meterCpu, runWrk } from './load-generator.js';
import { createTestDatabase } from '../support/database.js';
import { testQueuePrefix } from '../support/database.js';
import { median, timeRuns } from './stats.js';

export interface ReadBenchResult {
  clusters: number;
  /** The machine's 1-minute load average before and after the measured queries (shared cores). */
  load: [number, number];
  rows: {
    what: string;
    p50: number;
    p99: number;
    baselineP50?: number;
    ratio?: number;
    target?: string;
  }[];
}

/** The clusters in one statement each table: names, labels, desired state, reported status. */
async function seedFleet(sql: pg.Client, url: string, clusters: number): Promise<void> {
  await sql.query(
    `
    INSERT INTO "Cluster" (id, name, topology, platform, region, labels, "reportTokenHash", "redisPasswordHash", "updatedAt")
    SELECT gen_random_uuid(), 'bench-' || lpad(i::text, 6, '0'), 'STANDALONE', (ARRAY['AWS','CAPI','AZURE'])[1 + i % 3]::"Platform",
           'us-east-1', jsonb_build_object('env', (ARRAY['prod','staging','dev'])[1 + i % 3], 'team', 'team-' || (i % 40)),
           repeat('0', 64), repeat('0', 64), now()
      FROM generate_series(1, $1) i`,
    [clusters],
  );
  await sql.query(`
    INSERT INTO "DesiredState" ("clusterId", generation, enabled, "updatedAt")
    SELECT id, 3, (row_number() OVER (ORDER BY name)) % 2 = 0, now() FROM "Cluster"`);
  await sql.query(`
    INSERT INTO "ClusterStatus" ("clusterId", "observedGeneration", conditions, metrics, "lastReportAt", "updatedAt")
    SELECT id, 3, '[{"type":"Available","status":"True","reason":"AsExpected","message":"ok","lastTransitionTime":"2026-11-30T00:00:00.000Z"},
                    {"type":"Degraded","status":"False","reason":"AsExpected","message":"ok","lastTransitionTime":"2026-11-30T00:00:00.000Z"}]'::jsonb,
           '{"nodes": 12, "vcpus": 96}'::jsonb, now(), now()
      FROM "Cluster"`);
  // The registrations into the fleet summary's counts, as the worker's next sweep does.
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await foldFleetSummary(pool);
  } finally {
    await pool.end();
  }
  await sql.query('VACUUM ANALYZE');
  // The seeding's WAL written out now: a checkpoint during the measured queries is the bulk
  // load's cost, not the reads'.
  await sql.query('CHECKPOINT');
}

const PAGE_QUERY = `query($filter: ClusterFilter) { clusters(first: 100, filter: $filter) {
  totalCount totalCountIsExact edges { cursor node { id name labels karpenter { generation enabled }
  status { observedGeneration lastReportAt stale conditions { type status reason } } inSync } } } }`;
type PageAnswer = {
  clusters: { edges: unknown[]; totalCount: number; totalCountIsExact: boolean };
};
/** What a page said of its total, for the row: "16666, exact" or "1000, inexact (more match)". */
const totalOf = (page: PageAnswer) =>
  `totalCount ${page.clusters.totalCount}${page.clusters.totalCountIsExact ? ', exact' : ', inexact: more match'}`;

/** What wrk measured of one query. */
interface Timed {
  p50: number;
  p99: number;
  apiCpuMs: number;
  requests: number;
}

/** A Lua string literal of any text (wrk scripts are Lua). */
const luaString = (text: string): string =>
  `"${text.replace(/[\\"]/g, '\\$&').replace(/\n/g, '\\n')}"`;

const FILTER = { labelSelector: 'env=prod,team notin (team-1)', karpenterEnabled: true };

export async function benchGraphqlReads(clusters = 10_000, runs = 300): Promise<ReadBenchResult> {
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const env = {
    DATABASE_URL: db.url,
    QUEUE_PREFIX: testQueuePrefix(),
    LOG_LEVEL: 'warn',
  };
  // The API as deployed, in processes of their own: the bench process is the client.
  const api = await startApiProcess(env);
  // The same API counting every match (the exact count of before issue 48), for a same-run row.
  const exactApi = await startApiProcess({ ...env, TOTAL_COUNT_LIMIT: String(clusters) });
  try {
    await seedFleet(sql, db.url, clusters);
    const viewerToken = await api.createToken('VIEWER');
    const exactToken = await exactApi.createToken('VIEWER');
    const viewer = api.as(viewerToken);
    const exactViewer = exactApi.as(exactToken);
    const exact = await exactViewer<PageAnswer>(PAGE_QUERY, { filter: FILTER });
    if (!exact.data) throw new Error(`page query failed: ${JSON.stringify(exact.errors)}`);
    const filter = FILTER;
    const check = await viewer<PageAnswer>(PAGE_QUERY, { filter });
    if (check.data?.clusters.edges.length !== 100)
      throw new Error(`page query failed: ${JSON.stringify(check.errors)}`);
    const unfiltered = await viewer<PageAnswer>(PAGE_QUERY, {});
    if (!unfiltered.data)
      throw new Error(`page query failed: ${JSON.stringify(unfiltered.errors)}`);

    // Each API row: wrk (its own process, one connection: one reader at a time, as a person
    // paging is) posting the query for BENCH_READS_SECONDS, latency from wrk's histogram; the
    // API's CPU a request from /proc.
    const dir = mkdtempSync(join(tmpdir(), 'fleet-reads-'));
    const seconds = Number(process.env.BENCH_READS_SECONDS ?? 10);
    let scripts = 0;
    const underWrk = async (
      target: ApiProcess,
      token: string,
      query: string,
      variables: object,
    ): Promise<Timed> => {
      const script = join(dir, `query-${++scripts}.lua`);
      writeFileSync(
        script,
        `wrk.method = "POST"
wrk.body = ${luaString(JSON.stringify({ query, variables }))}
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer ${token}"
${WRK_DONE}`,
      );
      // Warm (the JIT, the connections), as a serving API is; not measured.
      await runWrk({ url: `${target.url}/graphql`, script, connections: 1, seconds: 3 });
      const meter = meterCpu({ api: () => [target.process.child.pid!] });
      const run = await runWrk({ url: `${target.url}/graphql`, script, connections: 1, seconds });
      const cpu = meter.stop();
      if (run.non2xx > 0 || run.socketErrors > 0)
        throw new Error(`wrk: ${run.non2xx} non-2xx answers, ${run.socketErrors} socket errors`);
      return {
        p50: run.p50Ms,
        p99: run.p99Ms,
        apiCpuMs: ((cpu.api?.seconds ?? 0) * 1000) / run.requests,
        requests: run.requests,
      };
    };

    const loadBefore = loadavg()[0]!;
    const page = await underWrk(api, viewerToken, PAGE_QUERY, { filter: FILTER });
    // The same page straight from PostgreSQL: what any API must at least spend.
    const rawPage = await timeRuns(
      () =>
        sql.query(`
          SELECT c.*, d.*, s.* FROM "Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id JOIN "ClusterStatus" s ON s."clusterId" = c.id
           WHERE c.labels->>'env' = 'prod' AND NOT (c.labels->>'team' = ANY('{team-1}')) AND d.enabled
           ORDER BY c.name LIMIT 100`),
      runs,
    );
    // The same page without totalCount: what the count adds.
    const pageOnly = await underWrk(
      api,
      viewerToken,
      PAGE_QUERY.replace('totalCount totalCountIsExact ', ''),
      { filter: FILTER },
    );
    const exactPage = await underWrk(exactApi, exactToken, PAGE_QUERY, { filter: FILTER });
    // The whole fleet's list: its total is the maintained count, exact at any size.
    const fleetPage = await underWrk(api, viewerToken, PAGE_QUERY, {});
    const summary = await underWrk(
      api,
      viewerToken,
      `{ fleetSummary { clusters inSync stale byCondition { type status reason count } } }`,
      {},
    );
    rmSync(dir, { recursive: true, force: true });
    const row = (what: string, timed: Timed, target?: string) => ({
      what: `${what} (wrk, one connection, ${timed.requests} requests; the API's CPU ${timed.apiCpuMs.toFixed(1)} ms a request)`,
      p50: timed.p50,
      p99: timed.p99,
      ...(target ? { target } : {}),
    });
    const rows = [
      {
        ...row(
          `clusters(first: 100, filter) with status and totalCount (${totalOf(check.data)})`,
          page,
          'p99 < 30 ms',
        ),
        baselineP50: median(rawPage),
        ratio: page.p50 / median(rawPage),
      },
      row(
        `the same page counting every match (TOTAL_COUNT_LIMIT raised to the fleet: the exact count of before issue 48; ${totalOf(exact.data)})`,
        exactPage,
      ),
      row('the same page without totalCount', pageOnly),
      row(
        `clusters(first: 100) with status and totalCount, no filter (${totalOf(unfiltered.data)})`,
        fleetPage,
      ),
      row('fleetSummary', summary, 'p99 < 50 ms'),
    ];
    return { clusters, load: [loadBefore, loadavg()[0]!], rows };
  } finally {
    await api.stop();
    await exactApi.stop();
    await sql.end();
    await db.drop();
  }
}
