/**
 * The issue's soak (issue 19): N clusters (100,000 by default) registered and heartbeating at the
 * sidecar's default interval (HEARTBEAT_SECONDS, 30 s), held by one API and one worker process
 * for BENCH_SOAK_SECONDS (600), while mutations are applied by real OrderConsumers and timed
 * until visible in GraphQL. Load comes from wrk in its own process, paced with its Lua `delay()`
 * hook to N/30 requests per second: every cluster once per interval with its own token, one
 * request in ten a full report (the sidecar's at-rest full report every 5 minutes), the rest
 * heartbeats naming the applied digest. Every ~10 s the bench samples what would show a backlog
 * growing: the report stream's length and pending count, the liveness hashes, the liveness flush
 * lag in PostgreSQL; at the end it fits a slope to each. Numbers, not assertions.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { INGEST_GROUP, ingestKey } from '@fleet/contracts';
import type { Condition, ReconcileOrder } from '@fleet/contracts';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { toGlobalId } from '../../apps/api/src/common/global-id.js';
import { OrderConsumer } from '../../apps/sidecar/src/orders/order-consumer.js';
import type { ReconcileResult } from '../../apps/sidecar/src/reconcile/reconciler.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { graphqlClient } from '../support/graphql-client.js';
import { eventually, freePort, spawnProcess } from '../support/processes.js';
import { benchReportToken, seedClusters } from './fleet-seed.js';
import {
  meterCpu,
  pidsNamed,
  runWrk,
  WRK_DONE,
  type CpuUse,
  type WrkResult,
} from './load-generator.js';
import { apiReady } from './api-process.js';
import { percentile } from './stats.js';

const REDIS_URL = 'redis://127.0.0.1:6379/12';
/** The sidecar's defaults: HEARTBEAT_SECONDS and FULL_REPORT_EVERY_MS (status-reporter.ts). */
const HEARTBEAT_SECONDS = 30;
const FULL_REPORT_EVERY_SECONDS = 300;
const DIGEST = 'd'.repeat(64);

export interface SoakSample {
  /** Seconds since the soak started. */
  t: number;
  /** Reports and heartbeats the API accepted per second since the previous sample. */
  acceptedPerSecond: number;
  streamLength: number;
  streamPending: number;
  /** Clusters whose heartbeat waits in Redis for the liveness flush (both hashes). */
  livenessWaiting: number;
  /** Now minus the latest lastReportAt in PostgreSQL: how far the flush trails the heartbeats. */
  flushLagMs: number;
  load1: number;
}

export interface SoakResult {
  clusters: number;
  seconds: number;
  connections: number;
  delayMs: number;
  targetPerSecond: number;
  seedSeconds: number;
  /** One full report per cluster before the soak, so each has an applied digest to heartbeat. */
  primeSeconds: number;
  wrk: WrkResult;
  acceptedPerSecond: number;
  heartbeats: number;
  fullReports: number;
  samples: SoakSample[];
  /** Taken once the load stopped and the probes finished: what was left to drain. */
  drained: SoakSample;
  /** Least-squares slopes over the samples, per minute. */
  slopes: { streamLength: number; streamPending: number; flushLagMs: number };
  probes: { consumers: number; count: number; p50: number; p99: number; max: number };
  cpu: CpuUse;
  loadAverage: { start: number; end: number; min: number; max: number };
}

/**
 * wrk's Lua: round-robin over the clusters file (each with its own token), one full report in
 * `FULL_EVERY`, paced by `delay()`. wrk's Lua has only a seconds clock (os.time), so the pace is
 * the nominal per-connection delay corrected each second towards the target count (none while behind: wrk then catches up at full speed).
 */
const SOAK_SCRIPT = `
local clusters = {}
for line in io.lines(os.getenv("BENCH_CLUSTERS")) do
  local uid, token = line:match("^(%S+) (%S+)$")
  clusters[#clusters + 1] = { uid, token }
end
local n = #clusters
local rate = tonumber(os.getenv("BENCH_RATE"))
local base = tonumber(os.getenv("BENCH_DELAY_MS"))
local fullEvery = tonumber(os.getenv("BENCH_FULL_EVERY"))
local i = math.random(n)
local sent = 0
local t0 = nil
local digest = "${DIGEST}"
delay = function()
  if t0 == nil then t0 = os.time() end
  local due = rate * (os.time() - t0 + 0.5)
  local d = base
  if sent > due + rate * 0.5 then d = base * 1.5 elseif sent < due - rate * 0.5 then d = 0 end
  return math.floor(d + math.random())
end
request = function()
  sent = sent + 1
  i = i % n + 1
  local c = clusters[i]
  local headers = { ["content-type"] = "application/json", ["authorization"] = "Bearer " .. c[2] }
  if sent % fullEvery == 0 then
    local now = os.date("!%Y-%m-%dT%H:%M:%S.000Z")
    local body = '{"clusterId":"' .. c[1] .. '","observedGeneration":1,"conditions":[' ..
      '{"type":"Available","status":"True","reason":"AsExpected","message":"ok","lastTransitionTime":"' .. now .. '"},' ..
      '{"type":"Degraded","status":"False","reason":"AsExpected","message":"ok","lastTransitionTime":"' .. now .. '"}],' ..
      '"metrics":{"nodes":12,"vcpus":96},"csrDecisions":[],"reportedAt":"' .. now .. '","digest":"' .. digest .. '"}'
    return wrk.format("POST", "/v1/clusters/" .. c[1] .. "/status", headers, body)
  end
  return wrk.format("POST", "/v1/clusters/" .. c[1] .. "/heartbeat", headers,
    '{"clusterId":"' .. c[1] .. '","digest":"' .. digest .. '"}')
end
${WRK_DONE}`;

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

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

export async function benchSoak({
  clusters = 100_000,
  seconds = 600,
  consumers = 20,
  sampleSeconds = 10,
} = {}): Promise<SoakResult> {
  const debug = !!process.env.BENCH_DEBUG;
  const say = (msg: string) => console.log(`[soak] ${new Date().toISOString()} ${msg}`);
  const dir = mkdtempSync(join(tmpdir(), 'fleet-soak-'));
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  await redis.flushdb();
  const prefix = testQueuePrefix();
  const running: { stop(): Promise<void> }[] = [];
  const orderConsumers: OrderConsumer[] = [];
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  try {
    let phase = performance.now();
    const seeded = await seedClusters(sql, clusters, { generation: 1, observed: 1, tokens: 'own' });
    const seedSeconds = (performance.now() - phase) / 1000;
    say(`seeded ${clusters} clusters in ${seedSeconds.toFixed(1)} s`);
    // The first `consumers` clusters are the probes' (real OrderConsumers reporting on each
    // order); wrk drives all the others, so its full reports never race the probes' generations.
    const probeIds = seeded.slice(0, consumers);
    const driven = seeded.map((id, i) => ({ id, token: benchReportToken(i) })).slice(consumers);
    const clustersFile = join(dir, 'clusters.txt');
    writeFileSync(clustersFile, driven.map((c) => `${c.id} ${c.token}`).join('\n') + '\n');
    const script = join(dir, 'soak.lua');
    writeFileSync(script, SOAK_SCRIPT);

    const apiPort = await freePort();
    const adminToken = `bootstrap-${randomBytes(16).toString('hex')}`;
    const env = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' };
    const node = (entry: string, processEnv: Record<string, string>, name: string) =>
      spawnProcess({
        command: process.execPath,
        args: [join(process.cwd(), entry)],
        env: { ...process.env, NODE_OPTIONS: '', ...processEnv },
        name,
      });
    const apiProcess = node(
      'dist/apps/api/src/main.js',
      {
        ...env,
        API_PORT: String(apiPort),
        NODE_ENV: 'production',
        FLEET_BOOTSTRAP_TOKEN: adminToken,
        RATE_LIMIT_PER_MINUTE: '100000000',
        REPORTS_PER_CLUSTER_PER_MINUTE: '100000000',
      },
      'api',
    );
    running.push(apiProcess);
    // The Stale sweep forgets a silent cluster's digest after 3 heartbeats (90 s). A sidecar
    // answers the 409 that follows with a full report; wrk cannot (its Lua does not know which
    // request a response answers), and priming 100,000 clusters one report each takes minutes,
    // so the window is widened here (the sweep still runs every minute, on every cluster).
    const workerProcess = node(
      'dist/apps/worker/src/main.js',
      { ...env, STALE_AFTER_HEARTBEATS: process.env.BENCH_SOAK_STALE_AFTER_HEARTBEATS ?? '60' },
      'worker',
    );
    running.push(workerProcess);
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await apiReady(apiUrl);
    const admin = graphqlClient(`${apiUrl}/graphql`, { authorization: `Bearer ${adminToken}` });

    // Prime: one full report per driven cluster (what a starting sidecar sends first), so each
    // has an applied digest its heartbeats can name; 64 in flight from this process.
    phase = performance.now();
    const report = (clusterId: string, token: string, observedGeneration: number) => {
      const at = new Date().toISOString();
      return fetch(`${apiUrl}/v1/clusters/${clusterId}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          clusterId,
          observedGeneration,
          conditions: conditions(at),
          metrics: { nodes: 12, vcpus: 96 },
          csrDecisions: [],
          reportedAt: at,
          ...(observedGeneration === 1 ? { digest: DIGEST } : {}),
        }),
      }).then(async (res) => {
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`report for ${clusterId} refused: ${res.status}`);
      });
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < driven.length) {
          const c = driven[next++]!;
          await report(c.id, c.token, 1);
        }
      }),
    );
    const digests = ingestKey(prefix, 'digests');
    await eventually(
      async () => ((await redis.hlen(digests)) >= driven.length ? true : undefined),
      { timeoutMs: 30 * 60_000, intervalMs: 1000, what: 'every primed report applied' },
    );
    const primeSeconds = (performance.now() - phase) / 1000;
    say(`primed ${driven.length} clusters' digests in ${primeSeconds.toFixed(1)} s`);

    // The probes: real OrderConsumers (the sidecar's order loop) with an instant apply.
    const log = pino({ level: 'silent' });
    for (const [k, clusterId] of probeIds.entries()) {
      let last = 1;
      orderConsumers.push(
        new OrderConsumer({
          clusterId,
          connection,
          prefix,
          log,
          apply: (order: ReconcileOrder): Promise<ReconcileResult> => {
            last = order.generation;
            return Promise.resolve({
              conditions: conditions(new Date().toISOString()),
              applied: 1,
              pruned: 0,
              requeue: false,
            });
          },
          report: () => report(clusterId, benchReportToken(k), last),
        }),
      );
    }
    await Promise.all(orderConsumers.map((c) => c.start()));

    const targetPerSecond = driven.length / HEARTBEAT_SECONDS;
    // About 50 requests/s a connection; wrk's delay is whole milliseconds.
    const connections = Math.min(64, Math.max(2, Math.ceil(targetPerSecond / 50)));
    const delayMs = (connections * 1000) / targetPerSecond;
    const fullEvery = FULL_REPORT_EVERY_SECONDS / HEARTBEAT_SECONDS;

    const acceptedCount = async (): Promise<number> => {
      const text = await fetch(`${apiUrl}/metrics`)
        .then((r) => r.text())
        .catch(() => '');
      let total = 0;
      for (const name of [
        'fleet_status_reports_received_total',
        'fleet_heartbeats_received_total',
      ]) {
        const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
        total += m ? Number(m[1]) : 0;
      }
      return total;
    };
    const stream = ingestKey(prefix, 'reports');
    const samples: SoakSample[] = [];
    const loads: number[] = [loadavg()[0] ?? 0];
    const soakStart = performance.now();
    let lastCount = await acceptedCount();
    let lastAt = soakStart;
    const sample = async () => {
      const now = performance.now();
      const count = await acceptedCount();
      const [len, pending, live, flushing] = await Promise.all([
        redis.xlen(stream),
        redis.xpending(stream, INGEST_GROUP).catch(() => [0]) as Promise<unknown[]>,
        redis.hlen(ingestKey(prefix, 'liveness')),
        redis.hlen(ingestKey(prefix, 'liveness-flushing')),
      ]);
      const { rows } = await sql.query<{ lag: number }>(
        `SELECT extract(epoch FROM now() - max("lastReportAt")) * 1000 AS lag FROM "ClusterStatus"`,
      );
      const s: SoakSample = {
        t: (now - soakStart) / 1000,
        acceptedPerSecond: (count - lastCount) / ((now - lastAt) / 1000),
        streamLength: len,
        streamPending: Number(pending[0] ?? 0),
        livenessWaiting: live + flushing,
        flushLagMs: Number(rows[0]?.lag ?? 0),
        load1: loadavg()[0] ?? 0,
      };
      lastCount = count;
      lastAt = now;
      samples.push(s);
      loads.push(s.load1);
      say(
        `t=${s.t.toFixed(0)} s accepted ${s.acceptedPerSecond.toFixed(0)}/s stream ${s.streamLength} pending ${s.streamPending} liveness waiting ${s.livenessWaiting} flush lag ${s.flushLagMs.toFixed(0)} ms load ${s.load1.toFixed(1)}`,
      );
    };

    const meter = meterCpu({
      api: () => [apiProcess.child.pid!],
      worker: () => [workerProcess.child.pid!],
      postgres: () => pidsNamed('postgres'),
      redis: () => pidsNamed('redis-server'),
      bench: () => [process.pid],
    });
    say(
      `soak: ${driven.length} clusters, target ${targetPerSecond.toFixed(0)}/s, wrk ${connections} connections, delay ${delayMs.toFixed(1)} ms, ${seconds} s`,
    );
    const load = runWrk({
      url: apiUrl,
      script,
      connections,
      seconds,
      env: {
        BENCH_CLUSTERS: clustersFile,
        BENCH_RATE: String(targetPerSecond),
        BENCH_DELAY_MS: String(delayMs),
        BENCH_FULL_EVERY: String(fullEvery),
      },
    });
    let loadDone = false;
    const loadResult = load.finally(() => (loadDone = true));

    // Mutation → applied → visible, one after another over the probe clusters all along.
    const latencies: number[] = [];
    const STATUS = `query($id: ID!) { cluster(id: $id) { status { observedGeneration } } }`;
    const probing = (async () => {
      for (let i = 0; !loadDone; i++) {
        const id = toGlobalId('Cluster', probeIds[i % probeIds.length]!);
        const started = performance.now();
        const res = await admin<{ setKarpenter: { karpenter: { generation: number } } }>(
          `mutation($id: ID!, $enabled: Boolean!) { setKarpenter(clusterId: $id, input: { enabled: $enabled }) { karpenter { generation } } }`,
          { id, enabled: i % 2 === 0 },
        );
        const generation = res.data?.setKarpenter.karpenter.generation;
        if (!generation) throw new Error(JSON.stringify(res.errors));
        for (;;) {
          const seen = await admin<{ cluster: { status: { observedGeneration: number } } }>(
            STATUS,
            { id },
          );
          if ((seen.data?.cluster.status.observedGeneration ?? 0) >= generation) break;
          if (performance.now() - started > 60_000)
            throw new Error(`generation ${generation} not visible after 60 s`);
          await new Promise((r) => setTimeout(r, 10));
        }
        latencies.push(performance.now() - started);
        if (debug) say(`probe ${i}: ${latencies.at(-1)!.toFixed(0)} ms`);
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const sampler = setInterval(() => void sample().catch(() => undefined), sampleSeconds * 1000);
    const wrk = await loadResult;
    clearInterval(sampler);
    const cpu = meter.stop();
    await probing;
    // After the load: what is left to drain (not a sample of the soak itself).
    await sample();
    const drained = samples.pop()!;

    const xs = samples.map((s) => s.t / 60);
    const result: SoakResult = {
      clusters,
      seconds,
      connections,
      delayMs,
      targetPerSecond,
      seedSeconds,
      primeSeconds,
      wrk,
      acceptedPerSecond: (wrk.requests - wrk.non2xx) / wrk.durationSeconds,
      heartbeats: wrk.requests - Math.floor(wrk.requests / fullEvery),
      fullReports: Math.floor(wrk.requests / fullEvery),
      samples,
      drained,
      slopes: {
        streamLength: slope(
          xs,
          samples.map((s) => s.streamLength),
        ),
        streamPending: slope(
          xs,
          samples.map((s) => s.streamPending),
        ),
        flushLagMs: slope(
          xs,
          samples.map((s) => s.flushLagMs),
        ),
      },
      probes: {
        consumers,
        count: latencies.length,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: Math.max(...latencies),
      },
      cpu,
      loadAverage: {
        start: loads[0] ?? 0,
        end: loads.at(-1) ?? 0,
        min: Math.min(...loads),
        max: Math.max(...loads),
      },
    };
    say(
      `done: accepted ${result.acceptedPerSecond.toFixed(0)}/s of ${targetPerSecond.toFixed(0)}/s target (${wrk.non2xx} non-2xx, ${wrk.socketErrors} socket errors, p99 ${wrk.p99Ms.toFixed(1)} ms); slopes/min stream ${result.slopes.streamLength.toFixed(1)} pending ${result.slopes.streamPending.toFixed(1)} flush lag ${result.slopes.flushLagMs.toFixed(1)} ms; after the load stream ${drained.streamLength} pending ${drained.streamPending}; probes ${latencies.length} p50 ${result.probes.p50.toFixed(0)} p99 ${result.probes.p99.toFixed(0)} max ${result.probes.max.toFixed(0)} ms; CPU ${Object.entries(
        cpu,
      )
        .map(([k, v]) => `${k} ${v.cores.toFixed(2)}`)
        .join(
          ', ',
        )}, wrk ${wrk.generatorCores.toFixed(2)}; load ${result.loadAverage.start.toFixed(1)} → ${result.loadAverage.end.toFixed(1)} (min ${result.loadAverage.min.toFixed(1)}, max ${result.loadAverage.max.toFixed(1)})`,
    );
    return result;
  } finally {
    await Promise.allSettled(orderConsumers.map((c) => c.close()));
    connection.disconnect();
    for (const p of running.reverse()) await p.stop();
    await redis.flushdb();
    redis.disconnect();
    await sql.end();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
