/**
 * Report ingest as deployed: the API and the worker in processes of their own, 10,000 distinct
 * clusters each reporting with its own token, load from wrk in its own process. The baseline is a
 * bare Node HTTP server answering 202 under the very same wrk settings, in the same run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestKey } from '@fleet/contracts';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { eventually, freePort, spawnProcess } from '../support/processes.js';
import { apiReady } from './api-process.js';
import { benchReportToken, seedClusters } from './fleet-seed.js';
import {
  meterCpu,
  pidsNamed,
  runWrk,
  WRK_DONE,
  type CpuUse,
  type WrkResult,
} from './load-generator.js';

const REDIS_URL = 'redis://127.0.0.1:6379/11';

/** One wrk run of full reports, drained. */
export interface ReportPhase {
  wrk: WrkResult;
  /** Reports accepted (202) per second, as wrk counted them. */
  acceptedPerSecond: number;
  /** Health samples committed, and per second from the first request to the last commit. */
  committed: number;
  committedPerSecond: number;
  /** CPU of each process over the run, in cores (1 = one core busy all along). */
  cpu: CpuUse;
}

export interface IngestLoadResult {
  clusters: number;
  connections: number;
  seconds: number;
  bare: WrkResult;
  /** Full reports each a change (a new digest): every one written whole. */
  changes: ReportPhase;
  /** Full reports repeating what the status holds (the sidecar's at-rest report). */
  repeats: ReportPhase;
  /** Heartbeats that change nothing, over every cluster, after the reports were drained. */
  heartbeats: {
    wrk: WrkResult;
    acceptedPerSecond: number;
    /** Clusters whose lastReportAt the liveness flush moved past the heartbeats' start. */
    flushedClusters: number;
    cpu: CpuUse;
  };
  /** The machine's 1-minute load average at the start and at the end (other work shares it). */
  loadAverage: [number, number];
}

/**
 * NodeClaims each benchmark report carries (issue 47: the sidecar reports them, at most
 * REPORT_NODECLAIMS_MAX): one per node of the report's 12 by default, as a 12-node cluster's
 * sidecar sends them; BENCH_REPORT_NODECLAIMS=0 for the body before issue 47.
 */
const REPORT_NODECLAIMS = Number(process.env.BENCH_REPORT_NODECLAIMS ?? 12);
/** As JSON text (`lua`: quoted for a Lua string literal). */
const nodeClaimsJson = (n: number, { lua = true } = {}): string => {
  const json = JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      name: `general-${String(i).padStart(5, '0')}`,
      nodePool: 'general',
      nodeName: `ip-10-0-${i >> 8}-${i & 255}.ec2.internal`,
      instanceType: 'm6i.xlarge',
      zone: `us-east-1${'abc'[i % 3]}`,
      capacityType: 'on-demand',
      state: 'Ready',
      createdAt: '2026-12-05T00:00:00.000Z',
    })),
  );
  return lua ? json.replace(/"/g, '\\"') : json;
};

/**
 * wrk's Lua for full reports, round-robin over the clusters file, each with the cluster's own
 * token, the body as a 12-node cluster's sidecar sends it. Its conditions keep their transition
 * times, as a sidecar's do. `repeat`: every report the same content and digest, as the
 * sidecar's at-rest full report every five minutes (the status already holds it after the
 * first). `change`: every report a new digest and a new node count, so each is written whole.
 */
const reportScript = (mode: 'repeat' | 'change') => `
local clusters = {}
for line in io.lines(os.getenv("BENCH_CLUSTERS")) do
  local uid, token = line:match("^(%S+) (%S+)$")
  clusters[#clusters + 1] = { uid, token }
end
local n = #clusters
local i = math.random(n)
local k = 0
local nodeClaims = ${REPORT_NODECLAIMS > 0 ? `'"nodeClaims":' .. "${nodeClaimsJson(REPORT_NODECLAIMS)}" .. ','` : `''`}
local since = "2026-12-05T00:00:00.000Z"
request = function()
  i = i % n + 1
  k = k + 1
  local c = clusters[i]
  local now = os.date("!%Y-%m-%dT%H:%M:%S.000Z")
  local nodes, digest = 12, string.rep("d", 64)
  ${mode === 'change' ? 'nodes, digest = k, string.format("%064d", k)' : ''}
  local body = '{"clusterId":"' .. c[1] .. '","observedGeneration":1,"conditions":[' ..
    '{"type":"Available","status":"True","reason":"AsExpected","message":"ok","lastTransitionTime":"' .. since .. '"},' ..
    '{"type":"Degraded","status":"False","reason":"AsExpected","message":"ok","lastTransitionTime":"' .. since .. '"}],' ..
    '"metrics":{"nodes":' .. nodes .. ',"vcpus":96},"csrDecisions":[],' .. nodeClaims .. '"reportedAt":"' .. now .. '","digest":"' .. digest .. '"}'
  return wrk.format("POST", "/v1/clusters/" .. c[1] .. "/status",
    { ["content-type"] = "application/json", ["authorization"] = "Bearer " .. c[2] }, body)
end
${WRK_DONE}`;

/** Each cluster's heartbeat naming the digest its reports carried (the applied one). */
const HEARTBEAT_SCRIPT = `
local clusters = {}
for line in io.lines(os.getenv("BENCH_CLUSTERS")) do
  local uid, token = line:match("^(%S+) (%S+)$")
  clusters[#clusters + 1] = { uid, token }
end
local n = #clusters
local i = math.random(n)
local digest = string.rep("d", 64)
request = function()
  i = i % n + 1
  local c = clusters[i]
  return wrk.format("POST", "/v1/clusters/" .. c[1] .. "/heartbeat",
    { ["content-type"] = "application/json", ["authorization"] = "Bearer " .. c[2] },
    '{"clusterId":"' .. c[1] .. '","digest":"' .. digest .. '"}')
end
${WRK_DONE}`;

/** The same request shape to a server that only reads the body and answers 202. */
const BARE_SCRIPT = `
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.body = string.rep("x", 420)
${WRK_DONE}`;

const BARE_SERVER = `require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.statusCode = 202; res.end(); });
}).listen(Number(process.env.PORT), '127.0.0.1');`;

async function waitHttp(url: string, what: string): Promise<void> {
  await eventually(
    () =>
      fetch(url)
        .then(() => true)
        .catch(() => undefined),
    { timeoutMs: 60_000, what },
  );
}

export async function benchIngestLoad({
  clusters = 10_000,
  seconds = 20,
  connections = 64,
} = {}): Promise<IngestLoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-'));
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  await redis.flushdb();
  const running: { stop(): Promise<void> }[] = [];
  try {
    const seeded = await seedClusters(sql, clusters, { generation: 1, observed: 1, tokens: 'own' });
    const clustersFile = join(dir, 'clusters.txt');
    writeFileSync(
      clustersFile,
      seeded.map((id, i) => `${id} ${benchReportToken(i)}`).join('\n') + '\n',
    );
    const scripts = { repeat: join(dir, 'repeat.lua'), change: join(dir, 'change.lua') };
    writeFileSync(scripts.repeat, reportScript('repeat'));
    writeFileSync(scripts.change, reportScript('change'));
    const heartbeatScript = join(dir, 'heartbeat.lua');
    writeFileSync(heartbeatScript, HEARTBEAT_SCRIPT);
    const bareScript = join(dir, 'bare.lua');
    writeFileSync(bareScript, BARE_SCRIPT);

    // Baseline: the bare server, same generator and settings.
    const barePort = await freePort();
    const bareServer = spawnProcess({
      command: process.execPath,
      args: ['-e', BARE_SERVER],
      env: { PATH: process.env.PATH, PORT: String(barePort) },
      name: 'bare server',
    });
    running.push(bareServer);
    const bareUrl = `http://127.0.0.1:${barePort}`;
    await waitHttp(bareUrl, 'the bare server');
    const bare = await runWrk({ url: bareUrl, script: bareScript, connections, seconds });
    await bareServer.stop();

    const apiPort = await freePort();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: testQueuePrefix(),
      LOG_LEVEL: 'warn',
    };
    // BENCH_CPU_PROF_DIR=<dir>: the API and the worker write V8 CPU profiles there on exit.
    const profile = process.env.BENCH_CPU_PROF_DIR
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
      : [];
    const node = (entry: string, processEnv: Record<string, string>, name: string) =>
      spawnProcess({
        command: process.execPath,
        args: [...profile, join(process.cwd(), entry)],
        env: { ...process.env, NODE_OPTIONS: '', ...processEnv },
        name,
      });
    const apiProcess = node(
      'dist/apps/api/src/main.js',
      {
        ...env,
        API_PORT: String(apiPort),
        NODE_ENV: 'production',
        RATE_LIMIT_PER_MINUTE: '100000000',
        REPORTS_PER_CLUSTER_PER_MINUTE: '100000000',
      },
      'api',
    );
    running.push(apiProcess);
    const workerProcess = node('dist/apps/worker/src/main.js', env, 'worker');
    running.push(workerProcess);
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await apiReady(apiUrl);
    const samples = async () =>
      (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "HealthSample"`)).rows[0]
        ?.n ?? 0;
    const meters = () =>
      meterCpu({
        api: () => [apiProcess.child.pid!],
        worker: () => [workerProcess.child.pid!],
        postgres: () => pidsNamed('postgres'),
        redis: () => pidsNamed('redis-server'),
      });
    const loadStart = loadavg()[0] ?? 0;

    // As a running fleet is: every cluster has reported once (its status holds the repeated
    // content, and the API has read its credentials, which it keeps for
    // REPORT_CREDENTIALS_CACHE_SECONDS); 64 in flight from this process, not measured.
    let next = 0;
    const since = '2026-12-05T00:00:00.000Z';
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < seeded.length) {
          const i = next++;
          const res = await fetch(`${apiUrl}/v1/clusters/${seeded[i]}/status`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${benchReportToken(i)}`,
            },
            body: `{"clusterId":"${seeded[i]}","observedGeneration":1,"conditions":[{"type":"Available","status":"True","reason":"AsExpected","message":"ok","lastTransitionTime":"${since}"},{"type":"Degraded","status":"False","reason":"AsExpected","message":"ok","lastTransitionTime":"${since}"}],"metrics":{"nodes":12,"vcpus":96},"csrDecisions":[],${REPORT_NODECLAIMS > 0 ? `"nodeClaims":${nodeClaimsJson(REPORT_NODECLAIMS, { lua: false })},` : ''}"reportedAt":"${new Date().toISOString()}","digest":"${'d'.repeat(64)}"}`,
          });
          if (!res.ok) throw new Error(`priming report refused: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
        }
      }),
    );
    await eventually(async () => ((await samples()) >= seeded.length ? true : undefined), {
      timeoutMs: 120_000,
      what: 'every priming report committed',
    });

    /** wrk for `seconds`, then until every accepted report is a row or the count stops moving. */
    const reportPhase = async (script: string): Promise<ReportPhase> => {
      const initial = await samples();
      const meter = meters();
      const started = performance.now();
      const wrk = await runWrk({
        url: apiUrl,
        script,
        connections,
        seconds,
        env: { BENCH_CLUSTERS: clustersFile },
      });
      const accepted = wrk.requests - wrk.non2xx;
      let last = -1;
      let committed: number;
      let stillSince = performance.now();
      let lastGrowth = performance.now();
      for (;;) {
        committed = (await samples()) - initial;
        if (committed !== last) {
          last = committed;
          stillSince = performance.now();
          lastGrowth = stillSince;
        }
        if (committed >= accepted || performance.now() - stillSince > 5000) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      return {
        wrk,
        acceptedPerSecond: accepted / wrk.durationSeconds,
        committed,
        committedPerSecond: committed / ((lastGrowth - started) / 1000),
        cpu: meter.stop(),
      };
    };
    // Changes first: the repeated reports then leave every cluster at the digest the
    // heartbeats name.
    const changes = await reportPhase(scripts.change);
    const repeats = await reportPhase(scripts.repeat);

    // Heartbeats that change nothing: every cluster's reports carried the same digest, which
    // the worker recorded as applied; a heartbeat naming it only refreshes liveness.
    const heartbeatsFrom = new Date();
    const beatMeter = meters();
    const beats = await runWrk({
      url: apiUrl,
      script: heartbeatScript,
      connections,
      seconds,
      env: { BENCH_CLUSTERS: clustersFile },
    });
    const beatCpu = beatMeter.stop();
    const flushedClusters = await eventually(
      async () => {
        const { rows } = await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "ClusterStatus" WHERE "lastReportAt" >= $1`,
          [heartbeatsFrom],
        );
        const n = rows[0]?.n ?? 0;
        const pending = await redis.hlen(ingestKey(env.QUEUE_PREFIX, 'liveness'));
        return pending === 0 && n > 0 ? n : undefined;
      },
      { timeoutMs: 60_000, what: 'the heartbeats flushed' },
    ).catch(() => 0);
    const result: IngestLoadResult = {
      clusters,
      connections,
      seconds,
      bare,
      changes,
      repeats,
      heartbeats: {
        wrk: beats,
        acceptedPerSecond: (beats.requests - beats.non2xx) / beats.durationSeconds,
        flushedClusters,
        cpu: beatCpu,
      },
      loadAverage: [loadStart, loadavg()[0] ?? 0],
    };
    const cores = (cpu: CpuUse) =>
      Object.entries(cpu)
        .map(([k, v]) => `${k} ${v.cores.toFixed(2)}`)
        .join(', ');
    const phase = (p: ReportPhase) =>
      `accepted ${p.acceptedPerSecond.toFixed(0)}/s (${p.wrk.non2xx} non-2xx, wrk ${p.wrk.generatorCores.toFixed(2)} cores), committed ${p.committed}/${p.wrk.requests - p.wrk.non2xx} at ${p.committedPerSecond.toFixed(0)}/s; CPU ${cores(p.cpu)}`;
    console.log(
      `ingest under wrk: bare ${(bare.requests / bare.durationSeconds).toFixed(0)} req/s (wrk ${bare.generatorCores.toFixed(2)} cores); changes ${phase(changes)}; repeats ${phase(repeats)}; heartbeats ${result.heartbeats.acceptedPerSecond.toFixed(0)}/s (${beats.non2xx} non-2xx), ${flushedClusters} clusters' liveness flushed; CPU ${cores(beatCpu)}; load average ${result.loadAverage.map((l) => l.toFixed(1)).join(' → ')}`,
    );
    return result;
  } finally {
    for (const p of running.reverse()) await p.stop();
    await redis.flushdb();
    redis.disconnect();
    await sql.end();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
