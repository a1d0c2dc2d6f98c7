import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import pg from 'pg';
// Tests boot the real worker in process; the apps-never-import-apps rule is about app code.

import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { FakeSidecar } from './fake-sidecar.js';

const ROLLOUT_FIELDS = `id state reason planId counts { total healthy failed skipped }
  waves { index state clusters { clusterName state generation reason } }`;
const START_FROM_PLAN = `mutation($planId: ID!, $strategy: RolloutStrategyInput, $selector: String) {
  startRollout(planId: $planId, strategy: $strategy, selector: $selector) { ${ROLLOUT_FIELDS} } }`;
const PLAN_CHANGE = `mutation($input: PlanChangeInput!) { planChange(input: $input) { id } }`;
const CHANGE_PLAN = `query($id: ID!, $strategy: RolloutStrategyInput) { changePlan(id: $id) {
  id rolloutId appliedAt counts { total pending planned }
  wavePlan(strategy: $strategy, sample: 2) { index size clusterNames more } } }`;
const APPLY_PLAN = `mutation($id: ID!) { applyPlan(id: $id) { name } }`;
const GET = `query($id: ID!) { rollout(id: $id) { ${ROLLOUT_FIELDS} } }`;

interface RolloutView {
  id: string;
  state: string;
  reason: string | null;
  planId: string | null;
  counts: Record<string, number>;
  waves: {
    index: number;
    state: string;
    clusters: {
      clusterName: string;
      state: string;
      generation: number | null;
      reason: string | null;
    }[];
  }[];
}
interface PlanView {
  id: string;
  rolloutId: string | null;
  appliedAt: string | null;
  counts: { total: number; pending: number; planned: number };
  wavePlan: { index: number; size: number; clusterNames: string[]; more: number }[];
}

const STRATEGY = {
  waves: [{ count: 1 }, { percent: 100 }],
  minHealthySeconds: 1,
  waveTimeoutSeconds: 60,
};

/**
 * Rollouts started from a plan (issue 21 §1): the real API and worker, PostgreSQL and Redis; fake
 * sidecars that apply orders and answer plan orders through the real plan report endpoint.
 */
describe('rollouts from a plan (real API, worker, PostgreSQL, Redis; fake sidecars)', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let sql: pg.Client;
  const sidecars = new Map<string, FakeSidecar>();
  const ids = new Map<string, string>();

  const gql = <T>(query: string, variables?: Record<string, unknown>) =>
    api.admin<T>(query, variables);
  const logLevels = async () => {
    const res = await sql.query<{ name: string; logLevel: string | null; generation: number }>(
      `SELECT c.name, d."logLevel"::text AS "logLevel", d.generation FROM "DesiredState" d
         JOIN "Cluster" c ON c.id = d."clusterId" ORDER BY c.name`,
    );
    return Object.fromEntries(res.rows.map((r) => [r.name, r.logLevel]));
  };
  const plannedPlan = async (input: Record<string, unknown>) => {
    const res = await gql<{ planChange: { id: string } }>(PLAN_CHANGE, { input });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    const id = res.data.planChange.id;
    return eventually(
      async () => {
        const p = await gql<{ changePlan: PlanView }>(CHANGE_PLAN, { id, strategy: STRATEGY });
        const plan = p.data?.changePlan;
        return plan && plan.counts.pending === 0 ? plan : undefined;
      },
      { timeoutMs: 30_000, what: `plan ${id} answered by every cluster` },
    );
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, STALE_AFTER_SECONDS: '30' });
    worker = await startWorker({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      ROLLOUT_TICK_MS: '150',
      HEARTBEAT_SECONDS: '2',
      STALE_AFTER_HEARTBEATS: '15',
    });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    for (const name of ['p-0', 'p-1', 'p-2', 'p-3']) {
      const res = await gql<{
        registerCluster: { reportToken: string; cluster: { id: string; uid: string } };
      }>(
        `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { reportToken cluster { id uid } } }`,
        {
          input: {
            name,
            topology: 'STANDALONE',
            platform: 'AWS',
            region: 'us-east-1',
            labels: { tier: 'p' },
          },
        },
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      const { reportToken, cluster } = res.data.registerCluster;
      ids.set(name, cluster.id);
      sidecars.set(name, new FakeSidecar(cluster.uid, reportToken, api.url, prefix));
    }
    await eventually(
      async () => {
        const res = await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "ClusterStatus" WHERE "observedGeneration" >= 1`,
        );
        return res.rows[0]!.n === 4 ? true : undefined;
      },
      { what: 'every cluster at generation 1' },
    );
  });

  afterAll(async () => {
    await Promise.all([...sidecars.values()].map((s) => s.stop()));
    await worker?.close();
    await api?.app.close();
    await sql?.end();
    await db?.drop();
  });

  it('previews the waves, rolls the plan out to its PLANNED clusters, skips one that moved, and uses the plan up', async () => {
    const plan = await plannedPlan({ labelSelector: 'tier=p', change: { logLevel: 'debug' } });
    expect(plan.counts).toMatchObject({ total: 4, planned: 4 });
    expect(plan.wavePlan).toEqual([
      { index: 0, size: 1, clusterNames: ['p-0'], more: 0 },
      { index: 1, size: 3, clusterNames: ['p-1', 'p-2'], more: 1 },
    ]);
    expect([...sidecars.values()].map((s) => s.plansAnswered)).toEqual([1, 1, 1, 1]);

    // p-3 moves after the plan: the plan's preview of it is no longer true.
    const moved = await gql(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: error }) { name } }`,
      { id: ids.get('p-3') },
    );
    expect(moved.errors).toBeUndefined();

    const started = await gql<{ startRollout: RolloutView }>(START_FROM_PLAN, {
      planId: plan.id,
      strategy: STRATEGY,
    });
    if (!started.data) throw new Error(JSON.stringify(started.errors));
    const rollout = started.data.startRollout;
    expect(rollout.planId).toBe(plan.id);
    expect(rollout.waves.map((w) => w.clusters.map((c) => c.clusterName))).toEqual([
      ['p-0'],
      ['p-1', 'p-2', 'p-3'],
    ]);

    const done = await eventually(
      async () => {
        const r = (await gql<{ rollout: RolloutView }>(GET, { id: rollout.id })).data?.rollout;
        return r && r.state === 'COMPLETED' ? r : undefined;
      },
      { timeoutMs: 45_000, what: 'rollout COMPLETED' },
    );
    expect(done.counts).toMatchObject({ total: 4, healthy: 3, skipped: 1, failed: 0 });
    const p3 = done.waves[1]!.clusters.find((c) => c.clusterName === 'p-3')!;
    expect(p3.state).toBe('SKIPPED');
    expect(p3.reason).toMatch(
      /^DesiredStateMoved: at generation 2, not the 1 the plan was computed against/,
    );
    expect(await logLevels()).toEqual({
      'p-0': 'debug',
      'p-1': 'debug',
      'p-2': 'debug',
      'p-3': 'error',
    });

    // Used up: neither applyPlan nor a second rollout takes it.
    const read = await gql<{ changePlan: PlanView }>(CHANGE_PLAN, { id: plan.id });
    expect(read.data?.changePlan.rolloutId).toBe(rollout.id);
    const apply = await gql(APPLY_PLAN, { id: plan.id });
    expect(apply.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(apply.errors?.[0]?.message).toMatch(/started rollout/);
    const again = await gql(START_FROM_PLAN, { planId: plan.id });
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(again.errors?.[0]?.message).toMatch(/already started rollout/);
  });

  it('refuses a plan already applied, and planId together with a selector', async () => {
    const plan = await plannedPlan({ clusterId: ids.get('p-1'), change: { logLevel: 'info' } });
    expect(plan.counts).toMatchObject({ total: 1, planned: 1 });

    const both = await gql(START_FROM_PLAN, { planId: plan.id, selector: 'tier=p' });
    expect(both.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'selector',
    });
    const neither = await gql(`mutation { startRollout { id } }`);
    expect(neither.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'selector',
    });

    const applied = await gql(APPLY_PLAN, { id: plan.id });
    expect(applied.errors).toBeUndefined();
    const start = await gql(START_FROM_PLAN, { planId: plan.id });
    expect(start.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(start.errors?.[0]?.message).toMatch(/was applied at/);
    expect((await logLevels())['p-1']).toBe('info');
  });
});
