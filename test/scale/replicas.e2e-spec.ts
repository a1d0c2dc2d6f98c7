import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import {
  collect,
  createTestDatabase,
  eventually,
  freePort,
  graphqlClient,
  startProcess,
  subscriptionClient,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import type { StatusReport } from '@fleet/contracts';
import {
  condition,
  enqueueReports,
  OrderRecorder,
  postReport,
  query,
  type RegisteredCluster,
} from '../faults/fleet-fixture.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface ApiReplica {
  url: string;
  process: RunningProcess;
  admin: ReturnType<typeof graphqlClient>;
}

/**
 * Two API and two worker processes, as deployed, on one PostgreSQL and one Redis. Nothing in a
 * replica is the source of truth, so every order, report and rollout step must happen exactly
 * once whichever replica takes it, and a subscriber on either API sees what either worker ingested.
 */
describe('two API and two worker replicas', () => {
  let db: TestDatabase;
  let prefix: string;
  const adminToken = `bootstrap-${randomBytes(16).toString('hex')}`;
  const apis: ApiReplica[] = [];
  const workers: RunningProcess[] = [];
  const clusters: RegisteredCluster[] = [];
  let recorder: OrderRecorder | undefined;

  const everything = () => [...apis.map((a) => a.process), ...workers].map((p) => p.output());

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    const shared = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' };
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      apis.push({
        url,
        process: startProcess(
          'dist/apps/api/src/main.js',
          {
            ...shared,
            NODE_ENV: 'production',
            API_PORT: String(port),
            FLEET_BOOTSTRAP_TOKEN: adminToken,
            FLEET_PUBLIC_URL: url,
            RATE_LIMIT_PER_MINUTE: '1000000',
            REPORTS_PER_CLUSTER_PER_MINUTE: '100000',
            STALE_AFTER_SECONDS: '60',
          },
          `api-${i}`,
        ),
        admin: graphqlClient(`${url}/graphql`, { authorization: `Bearer ${adminToken}` }),
      });
      workers.push(
        startProcess(
          'dist/apps/worker/src/main.js',
          {
            ...shared,
            RECONCILE_CONCURRENCY: '4',
            ROLLOUT_TICK_MS: '150',
            RESYNC_EVERY_SECONDS: '2',
            HEARTBEAT_SECONDS: '20',
          },
          `worker-${i}`,
        ),
      );
    }
    for (const api of apis) {
      await eventually(
        () =>
          fetch(`${api.url}/readyz`)
            .then((r) => (r.ok ? true : undefined))
            .catch(() => undefined),
        { timeoutMs: 60_000, what: `API at ${api.url}` },
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${everything().join('\n')}`);
      });
    }
    // Registrations alternate between the two APIs.
    for (let i = 0; i < 12; i++) {
      const res = await apis[i % 2]!.admin<{
        registerCluster: { reportToken: string; cluster: { id: string; uid: string } };
      }>(
        `mutation($name: String!, $labels: JSON) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1", labels: $labels }) {
           reportToken cluster { id uid } } }`,
        { name: `replica-${i}`, labels: { ring: i < 6 ? 'a' : 'b' } },
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      clusters.push({
        ...res.data.registerCluster.cluster,
        reportToken: res.data.registerCluster.reportToken,
      });
    }
    // The stand-in sidecars report applied orders through the second API.
    recorder = new OrderRecorder(REDIS_URL, prefix, apis[1]!.url);
    await recorder.start(clusters);
  }, 150_000);

  afterAll(async () => {
    await recorder?.close();
    await Promise.all([...apis.map((a) => a.process), ...workers].map((p) => p.stop()));
    await db?.drop();
  });

  const atGeneration = async (generation: number) =>
    (
      await query<{ n: number }>(
        db.url,
        `SELECT count(*)::int AS n FROM "ClusterStatus" WHERE "observedGeneration" >= $1`,
        [generation],
      )
    )[0]?.n ?? 0;

  it('dispatches each change exactly once, whichever API took it and whichever worker sent it', async () => {
    for (const [i, c] of clusters.entries()) {
      const res = await apis[i % 2]!.admin(
        `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { karpenter { generation } } }`,
        { id: c.id },
      );
      expect(res.errors).toBeUndefined();
    }
    await eventually(async () => ((await atGeneration(2)) === clusters.length ? true : undefined), {
      timeoutMs: 45_000,
      what: `${clusters.length} clusters applied at generation 2`,
    });
    // Two workers resync every 2 s: past a few resyncs, a duplicate would have shown.
    await new Promise((r) => setTimeout(r, 5000));
    for (const c of clusters) {
      const generations = (recorder!.delivered.get(c.uid) ?? []).map((o) => o.generation);
      expect({ cluster: c.uid, twos: generations.filter((g) => g === 2).length }).toEqual({
        cluster: c.uid,
        twos: 1,
      });
    }
    const runs = await query<{ generation: number; n: number }>(
      db.url,
      `SELECT generation, count(*)::int AS n FROM "ReconcileRun" WHERE generation = 2 GROUP BY 1`,
    );
    expect(runs).toEqual([{ generation: 2, n: clusters.length }]);
  }, 90_000);

  it('records every report exactly once, whichever API received it and whichever worker ingested it', async () => {
    const perCluster = 20;
    const base = Date.now() + 120_000;
    const report = (c: RegisteredCluster, i: number): StatusReport => {
      const at = new Date(base + i * 1000).toISOString();
      return {
        clusterId: c.uid,
        observedGeneration: 2,
        conditions: [
          condition('Available', 'True', 'AsExpected', at),
          condition('Degraded', i % 2 ? 'True' : 'False', i % 2 ? 'Flapping' : 'AsExpected', at),
        ],
        metrics: { nodes: i },
        csrDecisions: [],
        reportedAt: at,
      };
    };
    // Half through the HTTP endpoints of both APIs (stamped with the API's reception time), half
    // straight onto the ingest queue with their own times.
    const viaHttp = clusters.slice(0, 6);
    const viaQueue = clusters.slice(6);
    const since = new Date();
    await Promise.all(
      viaHttp.map(async (c, k) => {
        for (let i = 0; i < perCluster; i++)
          await postReport(apis[(k + i) % 2]!.url, c, report(c, i));
      }),
    );
    await enqueueReports(
      REDIS_URL,
      prefix,
      viaQueue.flatMap((c) => Array.from({ length: perCluster }, (_, i) => report(c, i))),
    );
    const samples = async (of: RegisteredCluster[], from: Date) =>
      (
        await query<{ n: number }>(
          db.url,
          `SELECT count(*)::int AS n FROM "HealthSample" WHERE "observedAt" >= $1 AND "clusterId" = ANY($2::uuid[])`,
          [from, of.map((c) => c.uid)],
        )
      )[0]?.n ?? 0;
    const expected = perCluster * viaHttp.length;
    await eventually(
      async () =>
        (await samples(viaHttp, since)) === expected &&
        (await samples(viaQueue, new Date(base))) === expected
          ? true
          : undefined,
      {
        timeoutMs: 45_000,
        what: `${expected} health samples through HTTP and ${expected} through the queue`,
      },
    ).catch(async (err: Error) => {
      throw new Error(
        `${err.message} (now ${await samples(viaHttp, since)} and ${await samples(viaQueue, new Date(base))})`,
      );
    });
    const duplicates = await query(
      db.url,
      `SELECT "clusterId", type, at FROM "ConditionTransition" GROUP BY 1, 2, 3 HAVING count(*) > 1`,
    );
    expect(duplicates).toEqual([]);
    // Status moved forward to each cluster's newest report, whichever worker wrote which.
    for (const c of clusters) {
      const res = await apis[0]!.admin<{ cluster: { status: { metrics: { nodes?: number } } } }>(
        `query($id: ID!) { cluster(id: $id) { status { metrics } } }`,
        { id: c.id },
      );
      expect({ cluster: c.uid, nodes: res.data?.cluster.status.metrics.nodes }).toEqual({
        cluster: c.uid,
        nodes: perCluster - 1,
      });
    }
  }, 90_000);

  it('a subscriber on either API sees a change ingested by either worker', async () => {
    const target = clusters[3]!;
    const watchers = apis.map((api) => subscriptionClient(api.url, adminToken));
    try {
      const seen = watchers.map((client) =>
        collect<{ clusterChanged: { id: string; status: { metrics: { nodes?: number } } } }>(
          client,
          `subscription($filter: ClusterFilter) { clusterChanged(filter: $filter) { id status { metrics } } }`,
          { filter: { nameContains: 'replica-3' } },
          (events) => events.some((e) => e.clusterChanged.status.metrics.nodes === 4242),
          30_000,
        ),
      );
      // Let both subscriptions register before the report arrives.
      await new Promise((r) => setTimeout(r, 1000));
      const at = new Date(Date.now() + 600_000).toISOString();
      await postReport(apis[0]!.url, target, {
        clusterId: target.uid,
        observedGeneration: 2,
        conditions: [
          condition('Available', 'True', 'AsExpected', at),
          condition('Degraded', 'False', 'AsExpected', at),
        ],
        metrics: { nodes: 4242 },
        csrDecisions: [],
        reportedAt: at,
      });
      const events = await Promise.all(seen);
      for (const list of events) {
        expect(list.at(-1)?.clusterChanged.id).toBe(target.id);
        expect(list.at(-1)?.clusterChanged.status.metrics.nodes).toBe(4242);
      }
    } finally {
      for (const watcher of watchers) void watcher.dispose();
    }
  }, 60_000);

  it('drives a rollout with both workers ticking: each cluster changed once, every wave succeeded', async () => {
    const started = await apis[0]!.admin<{ startRollout: { id: string } }>(
      `mutation { startRollout(selector: "ring=a", change: { logLevel: debug },
         strategy: { minHealthySeconds: 0, waves: [{ count: 1 }, { count: 3 }, { percent: 100 }] }) { id } }`,
    );
    if (!started.data) throw new Error(JSON.stringify(started.errors));
    const id = started.data.startRollout.id;
    const done = await eventually(
      async () => {
        const res = await apis[1]!.admin<{
          rollout: { state: string; waves: { state: string }[] };
        }>(`query($id: ID!) { rollout(id: $id) { state waves { state } } }`, { id });
        const state = res.data?.rollout.state;
        return state && state !== 'RUNNING' ? res.data!.rollout : undefined;
      },
      { timeoutMs: 60_000, what: 'the rollout to finish' },
    );
    expect(done).toEqual({
      state: 'COMPLETED',
      waves: [{ state: 'SUCCEEDED' }, { state: 'SUCCEEDED' }, { state: 'SUCCEEDED' }],
    });
    // Exactly one generation per cluster came from the rollout, however many ticks raced for it.
    const ring = clusters.slice(0, 6);
    for (const c of ring) {
      const generations = (recorder!.delivered.get(c.uid) ?? [])
        .filter((o) => o.spec.logLevel === 'debug')
        .map((o) => o.generation);
      expect({ cluster: c.uid, generations }).toEqual({ cluster: c.uid, generations: [3] });
    }
    const others = clusters.slice(6);
    for (const c of others) {
      expect((recorder!.delivered.get(c.uid) ?? []).map((o) => o.generation)).not.toContain(3);
    }
  }, 90_000);
});
