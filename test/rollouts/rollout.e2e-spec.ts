import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  collect,
  createTestDatabase,
  eventually,
  subscriptionClient,
  testQueuePrefix,
  type TestDatabase,
} from '@fleet/testing';
import pg from 'pg';
// Tests boot the real worker in process; the apps-never-import-apps rule is about app code.

import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { FakeSidecar } from './fake-sidecar.js';

const ROLLOUT_FIELDS = `id uid state reason currentWave counts { total pending applying healthy failed skipped }
  waves { index state startedAt finishedAt counts { total healthy failed } clusters { clusterName state generation reason appliedAt healthySince } }`;
const START = `mutation($selector: String!, $change: RolloutChangeInput!, $strategy: RolloutStrategyInput, $clusterIds: [ID!]) {
  startRollout(selector: $selector, change: $change, strategy: $strategy, clusterIds: $clusterIds) { ${ROLLOUT_FIELDS} } }`;
const GET = `query($id: ID!) { rollout(id: $id) { ${ROLLOUT_FIELDS} } }`;

interface RolloutView {
  id: string;
  uid: string;
  state: string;
  reason: string | null;
  currentWave: number;
  counts: Record<string, number>;
  waves: {
    index: number;
    state: string;
    startedAt: string | null;
    finishedAt: string | null;
    clusters: {
      clusterName: string;
      state: string;
      generation: number | null;
      reason: string | null;
      appliedAt: string | null;
      healthySince: string | null;
    }[];
  }[];
}

describe('progressive rollouts (real API, worker, PostgreSQL, Redis; fake sidecars)', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let sql: pg.Client;
  let prefix: string;
  let workerEnv: Record<string, string>;
  const sidecars = new Map<string, FakeSidecar>();

  const gql = <T>(query: string, variables?: Record<string, unknown>) =>
    api.admin<T>(query, variables);
  const generations = async (names: string[]) => {
    const res = await sql.query<{ name: string; generation: number }>(
      `SELECT c.name, d.generation FROM "Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id WHERE c.name = ANY($1) ORDER BY c.name`,
      [names],
    );
    return Object.fromEntries(res.rows.map((r) => [r.name, r.generation]));
  };
  const clusterId = async (name: string) => {
    if (!/^[a-d]-\d$/.test(name)) return name;
    const res = await gql<{ clusters: { nodes: { id: string }[] } }>(
      `query($name: String!) { clusters(first: 1, filter: { nameContains: $name }) { nodes { id } } }`,
      { name },
    );
    return res.data!.clusters.nodes[0]!.id;
  };
  const rollout = async (id: string) => {
    const res = await gql<{ rollout: RolloutView }>(GET, { id });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.rollout;
  };
  const waitFor = (
    id: string,
    what: string,
    ok: (r: RolloutView) => boolean,
    // Generous: on a 2-core machine shared with other suites, three waves of reports and ticks
    // have been seen to take over 15 s; a rollout that is really stuck still fails here.
    timeoutMs = 45_000,
  ) => {
    let last: RolloutView | undefined;
    return eventually(
      async () => {
        last = await rollout(id);
        return ok(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 100, what },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; rollout was ${JSON.stringify(last)}`);
    });
  };
  const start = async (
    selector: string,
    change: Record<string, unknown>,
    strategy: Record<string, unknown>,
  ) => {
    const res = await gql<{ startRollout: RolloutView }>(START, { selector, change, strategy });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.startRollout;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, STALE_AFTER_SECONDS: '30' });
    workerEnv = {
      DATABASE_URL: db.url,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      ROLLOUT_TICK_MS: '150',
      HEARTBEAT_SECONDS: '2',
      // The worker, not the API, marks clusters Stale (HEARTBEAT_SECONDS × STALE_AFTER_HEARTBEATS):
      // 30 s, so a late heartbeat on a loaded machine cannot fail a wave; nothing here tests staleness.
      STALE_AFTER_HEARTBEATS: '15',
    };
    worker = await startWorker(workerEnv);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    const groups: Record<string, number> = { a: 6, b: 4, c: 3, d: 4 };
    await Promise.all(
      Object.entries(groups).flatMap(([group, n]) =>
        Array.from({ length: n }, async (_, i) => {
          const res = await gql<{
            registerCluster: { reportToken: string; cluster: { uid: string } };
          }>(
            `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { reportToken cluster { uid } } }`,
            {
              input: {
                name: `${group}-${i}`,
                topology: 'STANDALONE',
                platform: 'AWS',
                region: 'us-east-1',
                labels: { wave: group },
              },
            },
          );
          if (!res.data) throw new Error(JSON.stringify(res.errors));
          const { reportToken, cluster } = res.data.registerCluster;
          sidecars.set(`${group}-${i}`, new FakeSidecar(cluster.uid, reportToken, api.url, prefix));
        }),
      ),
    );
    // Every cluster reports its registration order (generation 1) before any rollout starts.
    await eventually(
      async () => {
        const res = await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "ClusterStatus" WHERE "observedGeneration" >= 1`,
        );
        return res.rows[0]!.n === 17 ? true : undefined;
      },
      // Generous: 17 registrations and their first reports take over 20 s on a loaded machine.
      { timeoutMs: 60_000, what: 'every cluster at generation 1' },
    );
  });

  afterAll(async () => {
    await Promise.all([...sidecars.values()].map((s) => s.stop()));
    await worker?.close();
    await api?.app.close();
    await sql?.end();
    await db?.drop();
  });

  it('completes wave by wave: 1, then 10 % (nobody new), 50 %, 100 %; each wave only after the previous held healthy', async () => {
    // A Karpenter upgrade (the release, and with it the CRDs) rolls out like any other change.
    const started = await start(
      'wave=a',
      { logLevel: 'debug', karpenterVersion: '1.13.1' },
      { minHealthySeconds: 1, waveTimeoutSeconds: 90 },
    );
    expect(started.state).toBe('RUNNING');
    expect(started.waves.map((w) => w.clusters.map((c) => c.clusterName))).toEqual([
      ['a-0'],
      ['a-1', 'a-2'],
      ['a-3', 'a-4', 'a-5'],
    ]);

    const client = subscriptionClient(api.url, api.adminToken);
    const events = collect<{ rolloutChanged: { state: string } }>(
      client,
      `subscription($id: ID!) { rolloutChanged(id: $id) { state } }`,
      { id: started.id },
      (seen) => seen.some((e) => e.rolloutChanged.state === 'COMPLETED'),
      45_000,
    );
    const done = await waitFor(started.id, 'COMPLETED', (r) => r.state === 'COMPLETED');
    expect((await events).length).toBeGreaterThan(1);
    await client.dispose();

    expect(done.waves.map((w) => w.state)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const versions = await sql.query<{ name: string; karpenterVersion: string | null }>(
      `SELECT c.name, d."karpenterVersion" FROM "DesiredState" d JOIN "Cluster" c ON c.id = d."clusterId"
        WHERE c.name LIKE 'a-%' ORDER BY c.name`,
    );
    expect(versions.rows.map((r) => r.karpenterVersion)).toEqual(Array(6).fill('1.13.1'));
    expect(done.counts).toMatchObject({ total: 6, healthy: 6, failed: 0 });
    const byNode = await gql<{ node: { __typename: string; state: string } }>(
      `query($id: ID!) { node(id: $id) { __typename ... on Rollout { state } } }`,
      { id: started.id },
    );
    expect(byNode.data?.node).toEqual({ __typename: 'Rollout', state: 'COMPLETED' });
    for (let k = 1; k < done.waves.length; k++) {
      const previous = done.waves[k - 1]!;
      const firstApplied = Math.min(
        ...done.waves[k]!.clusters.map((c) => Date.parse(c.appliedAt!)),
      );
      // The next wave starts only after every cluster of the previous one held healthy for 1 s.
      for (const c of previous.clusters)
        expect(firstApplied).toBeGreaterThanOrEqual(Date.parse(c.healthySince!) + 1000);
      expect(firstApplied).toBeGreaterThanOrEqual(Date.parse(previous.finishedAt!));
    }
    expect(await generations(['a-0', 'a-1', 'a-2', 'a-3', 'a-4', 'a-5'])).toEqual({
      'a-0': 2,
      'a-1': 2,
      'a-2': 2,
      'a-3': 2,
      'a-4': 2,
      'a-5': 2,
    });
    // Each change went through the shared path: reconcile run and audit event with the rollout as actor.
    const audit = await sql.query(
      `SELECT count(*)::int AS n FROM "AuditEvent" WHERE actor = $1 AND action = 'applyRollout'`,
      [`rollout:${done.uid}`],
    );
    expect(audit.rows[0]).toEqual({ n: 6 });
    const runs = await sql.query(
      `SELECT count(*)::int AS n FROM "ReconcileRun" WHERE generation = 2 AND "clusterId" IN (SELECT id FROM "Cluster" WHERE labels->>'wave' = 'a')`,
    );
    expect(runs.rows[0]).toEqual({ n: 6 });
  }, 120_000);

  it('stops by itself when its second wave turns Degraded, leaves the rest untouched, and resume finishes it', async () => {
    sidecars.get('b-1')!.failFrom = 2;
    const spec = {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [],
        },
      },
      limits: { cpu: '64' },
    };
    const started = await start(
      'wave=b',
      { upsertNodePool: { name: 'general', spec } },
      {
        waves: [{ count: 1 }, { count: 2 }, { percent: 100 }],
        minHealthySeconds: 1,
        waveTimeoutSeconds: 90,
      },
    );
    const failed = await waitFor(started.id, 'FAILED', (r) => r.state === 'FAILED');
    expect(failed.reason).toMatch(
      /^TooManyFailures: 1 clusters failed, more than maxFailures 0: b-1 \(Degraded: NodePoolRejected\)/,
    );
    expect(failed.waves.map((w) => w.state)).toEqual(['SUCCEEDED', 'FAILED', 'PENDING']);
    expect(failed.waves[2]!.clusters.map((c) => c.state)).toEqual(['PENDING', 'PENDING']);
    // Nothing more happens: the third wave's clusters keep generation 1 in PostgreSQL.
    await new Promise((r) => setTimeout(r, 800));
    expect(await generations(['b-0', 'b-1', 'b-2', 'b-3'])).toEqual({
      'b-0': 2,
      'b-1': 2,
      'b-2': 1,
      'b-3': 1,
    });
    expect((await rollout(started.id)).state).toBe('FAILED');

    // The SRE fixes the cluster; resume watches b-1 again and carries on.
    sidecars.get('b-1')!.failFrom = undefined;
    // Resuming while the last report still says Degraded would fail it again at once (as designed).
    await eventually(
      async () => {
        const res = await sql.query(
          `SELECT 1 FROM "ClusterStatus" s JOIN "Cluster" c ON c.id = s."clusterId"
            WHERE c.name = 'b-1' AND s.conditions @> '[{"type":"Degraded","status":"False"}]'`,
        );
        return res.rowCount ? true : undefined;
      },
      { what: 'b-1 reporting healthy again' },
    );
    const resumed = await gql<{ resumeRollout: { state: string } }>(
      `mutation($id: ID!) { resumeRollout(id: $id) { state } }`,
      { id: started.id },
    );
    expect(resumed.data?.resumeRollout.state).toBe('RUNNING');
    const done = await waitFor(started.id, 'COMPLETED', (r) => r.state === 'COMPLETED');
    expect(done.counts).toMatchObject({ total: 4, healthy: 4 });
    expect(await generations(['b-0', 'b-1', 'b-2', 'b-3'])).toEqual({
      'b-0': 2,
      'b-1': 2,
      'b-2': 2,
      'b-3': 2,
    });
  }, 120_000);

  it('pause holds it, abort ends it without reverting the changed cluster and skips the rest', async () => {
    const started = await start(
      'wave=c',
      { featureGates: { Drift: false } },
      {
        waves: [{ count: 1 }, { percent: 100 }],
        minHealthySeconds: 3600,
        waveTimeoutSeconds: 7200,
      },
    );
    await waitFor(started.id, 'c-0 applied', (r) => r.waves[0]!.clusters[0]!.state === 'APPLYING');
    const paused = await gql<{ pauseRollout: { state: string; reason: string } }>(
      `mutation($id: ID!) { pauseRollout(id: $id) { state reason } }`,
      { id: started.id },
    );
    expect(paused.data?.pauseRollout).toEqual({
      state: 'PAUSED',
      reason: 'paused by bootstrap-admin',
    });
    const again = await gql(`mutation($id: ID!) { pauseRollout(id: $id) { state } }`, {
      id: started.id,
    });
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');

    const aborted = await gql<{ abortRollout: RolloutView }>(
      `mutation($id: ID!) { abortRollout(id: $id, reason: "wrong gates") { ${ROLLOUT_FIELDS} } }`,
      { id: started.id },
    );
    const r = aborted.data!.abortRollout;
    expect(r.state).toBe('ABORTED');
    expect(r.reason).toBe('aborted by bootstrap-admin: wrong gates');
    expect(
      r.waves.flatMap((w) => w.clusters.map((c) => [c.clusterName, c.state, c.reason])),
    ).toEqual([
      ['c-0', 'APPLYING', null],
      ['c-1', 'SKIPPED', 'RolloutAborted'],
      ['c-2', 'SKIPPED', 'RolloutAborted'],
    ]);
    await new Promise((res) => setTimeout(res, 500));
    // c-0 keeps its new desired state (not reverted); the others were never touched.
    expect(await generations(['c-0', 'c-1', 'c-2'])).toEqual({ 'c-0': 2, 'c-1': 1, 'c-2': 1 });
    const gates = await sql.query<{ featureGates: unknown }>(
      `SELECT c.name, d."featureGates" FROM "Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id WHERE c.name = 'c-0'`,
    );
    expect(gates.rows[0]?.featureGates).toEqual({ Drift: false });
    const resume = await gql(`mutation($id: ID!) { resumeRollout(id: $id) { state } }`, {
      id: started.id,
    });
    expect(resume.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('survives a worker restart: a new worker continues from PostgreSQL', async () => {
    const started = await start(
      'wave=d',
      { clusterAutoscalerMode: 'DISABLE' },
      {
        waves: [{ count: 1 }, { count: 2 }, { percent: 100 }],
        minHealthySeconds: 1,
        waveTimeoutSeconds: 90,
      },
    );
    await waitFor(started.id, 'second wave under way', (r) => r.currentWave >= 1);
    await worker.close();
    const frozen = await rollout(started.id);
    await new Promise((r) => setTimeout(r, 1500));
    // No worker, no progress (sidecars still report; nobody judges).
    expect((await rollout(started.id)).waves.map((w) => w.state)).toEqual(
      frozen.waves.map((w) => w.state),
    );
    expect(frozen.state).toBe('RUNNING');

    worker = await startWorker(workerEnv);
    const done = await waitFor(
      started.id,
      'COMPLETED after restart',
      (r) => r.state === 'COMPLETED',
      20_000,
    );
    expect(done.counts).toMatchObject({ total: 4, healthy: 4 });
    expect(await generations(['d-0', 'd-1', 'd-2', 'd-3'])).toEqual({
      'd-0': 2,
      'd-1': 2,
      'd-2': 2,
      'd-3': 2,
    });
  }, 120_000);

  describe('refuses bad input with BAD_USER_INPUT naming the field, and writes nothing', () => {
    const snapshot = async () => {
      const tables = [
        'Rollout',
        'RolloutWave',
        'RolloutCluster',
        'DesiredState',
        'NodePool',
        'ReconcileRun',
        'AuditEvent',
      ];
      return Promise.all(
        tables.map((t) =>
          sql
            .query<Record<string, unknown>>(`SELECT * FROM "${t}" ORDER BY 1, 2`)
            .then((r) => r.rows),
        ),
      );
    };
    const valid = { change: { logLevel: 'error' }, strategy: { minHealthySeconds: 1 } };

    it.each([
      ['selector', { selector: 'wave in (a', ...valid }],
      ['selector', { selector: 'wave=nowhere', ...valid }],
      ['change', { selector: 'wave=a', change: {}, strategy: {} }],
      [
        'change.featureGates.drift',
        { selector: 'wave=a', change: { featureGates: { drift: true } } },
      ],
      [
        'change.deleteNodePool',
        {
          selector: 'wave=a',
          change: { upsertNodePool: { name: 'x', spec: {} }, deleteNodePool: 'y' },
        },
      ],
      [
        'change.upsertNodePool.name',
        { selector: 'wave=a', change: { upsertNodePool: { name: 'Bad_Name', spec: {} } } },
      ],
      [
        'change.upsertNodePool.spec.template',
        {
          selector: 'wave=a',
          change: { upsertNodePool: { name: 'general', spec: { limits: { cpu: '1' } } } },
        },
      ],
      ['change.karpenterVersion', { selector: 'wave=a', change: { karpenterVersion: '0.37.0' } }],
      [
        'change.operandImage',
        { selector: 'wave=a', change: { operandImage: 'quay.io/example/karpenter:latest' } },
      ],
      [
        'strategy.waves[0].percent',
        { selector: 'wave=a', change: valid.change, strategy: { waves: [{ percent: 0 }] } },
      ],
      [
        'strategy.waves[1]',
        {
          selector: 'wave=a',
          change: valid.change,
          strategy: { waves: [{ count: 1 }, { count: 2, percent: 50 }] },
        },
      ],
      [
        'strategy.waves[1].percent',
        {
          selector: 'wave=a',
          change: valid.change,
          strategy: { waves: [{ percent: 50 }, { percent: 20 }] },
        },
      ],
      [
        'strategy.minHealthySeconds',
        { selector: 'wave=a', change: valid.change, strategy: { minHealthySeconds: -1 } },
      ],
      [
        'strategy.maxFailures',
        { selector: 'wave=a', change: valid.change, strategy: { maxFailures: -2 } },
      ],
      [
        'strategy.waveTimeoutSeconds',
        {
          selector: 'wave=a',
          change: valid.change,
          strategy: { minHealthySeconds: 60, waveTimeoutSeconds: 30 },
        },
      ],
      ['clusterIds', { selector: 'wave=a', ...valid, clusterIds: [] }],
      ['clusterIds[0]', { selector: 'wave=a', ...valid, clusterIds: ['not-an-id'] }],
      // A picked cluster the selector does not match (d-0 is wave=d) is refused, not dropped.
      ['clusterIds[1]', { selector: 'wave=a', ...valid, clusterIds: ['a-0', 'd-0'] }],
    ])('%s', async (field, input) => {
      const before = await snapshot();
      const variables = { ...input } as Record<string, unknown>;
      // Picked by name in the table above; the API takes the clusters' global IDs.
      if (Array.isArray(variables.clusterIds))
        variables.clusterIds = await Promise.all(
          (variables.clusterIds as string[]).map((name) => clusterId(name)),
        );
      const res = await gql(START, variables);
      expect(res.data ?? null).toBeNull();
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
      const got = String(res.errors?.[0]?.extensions?.field);
      expect(got.startsWith(field)).toBe(true);
      expect(await snapshot()).toEqual(before);
    });

    it('needs OPERATOR to start, VIEWER to read', async () => {
      const viewer = api.as(await api.createToken('VIEWER'));
      const before = await snapshot();
      const res = await viewer(START, { selector: 'wave=a', ...valid });
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(await snapshot()).toEqual(before);
      const list = await viewer<{ rollouts: { totalCount: number; nodes: { state: string }[] } }>(
        `{ rollouts(first: 10) { totalCount nodes { state } } }`,
      );
      expect(list.data?.rollouts.totalCount).toBe(4);
      const completed = await viewer<{ rollouts: { totalCount: number } }>(
        `{ rollouts(first: 1, state: COMPLETED) { totalCount } }`,
      );
      expect(completed.data?.rollouts.totalCount).toBe(3);
    });
  });
});
