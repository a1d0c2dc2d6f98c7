import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  createTestDatabase,
  eventually,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { startApi, type Gql, type RunningApi } from '../api/start-api.js';
import { startWorker } from '../../apps/worker/src/main.js';
import { generalNodePoolYaml, runKfleetInProcess } from '../cli/kfleet-process.js';

const NODE_CLASS_REF = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' };
const poolSpec = (extra: Record<string, unknown> = {}, template: Record<string, unknown> = {}) => ({
  template: {
    spec: {
      nodeClassRef: NODE_CLASS_REF,
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
      ...template,
    },
  },
  ...extra,
});

interface PlannedObject {
  kind: string;
  name: string;
  action: string;
  diff: { path: string; before: unknown; after: unknown }[];
  errors: { field: string; message: string; reason: string | null }[];
}
interface PlanView {
  id: string;
  expired: boolean;
  counts: Record<string, number>;
  clusters: {
    totalCount: number;
    nodes: {
      clusterName: string;
      generation: number;
      state: string;
      reason: string | null;
      message: string | null;
      objects: PlannedObject[];
    }[];
  };
}

const PLAN_FIELDS = `id expired counts { total pending planned notPlanned failed invalid created changed deleted unchanged }
  clusters(first: 10) { totalCount nodes { clusterName generation state reason message
    objects { kind name action diff { path before after } errors { field message reason } } } }`;
const PLAN_CHANGE = `mutation($input: PlanChangeInput!) { planChange(input: $input) { ${PLAN_FIELDS} } }`;
const CHANGE_PLAN = `query($id: ID!) { changePlan(id: $id) { ${PLAN_FIELDS} } }`;
const APPLY_PLAN = `mutation($id: ID!) { applyPlan(id: $id) { name karpenter { generation } } }`;

/**
 * Plans end to end (issue 21 §1): the API, the worker, PostgreSQL and Redis, and a real sidecar
 * process against an emulated standalone AWS cluster. A plan is rendered by the sidecar and
 * dry-run on the cluster's API server; nothing is written and desired state does not move.
 */
describe('plans: the exact change, cluster by cluster, before anything is applied', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedCluster;
  let sidecar: RunningProcess;
  let gql: Gql;
  let east: { id: string; uid: string; reportToken: string };
  let pausedCluster: { id: string; uid: string; reportToken: string };
  let plannedId: string;

  const generationOf = async (id: string) => {
    const res = await gql<{ cluster: { karpenter: { generation: number }; inSync: boolean } }>(
      `query($id: ID!) { cluster(id: $id) { inSync karpenter { generation } } }`,
      { id },
    );
    return res.data!.cluster;
  };
  const inSyncAt = (generation: number) =>
    eventually(
      async () => {
        const c = await generationOf(east.id);
        return c.inSync && c.karpenter.generation === generation ? c : undefined;
      },
      { timeoutMs: 30_000, what: `east in sync at generation ${generation}` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output().slice(-4000)}`);
    });
  const planned = (id: string) =>
    eventually(
      async () => {
        const res = await gql<{ changePlan: PlanView }>(CHANGE_PLAN, { id });
        const plan = res.data?.changePlan;
        return plan && plan.counts.pending === 0 ? plan : undefined;
      },
      { timeoutMs: 20_000, what: `plan ${id} answered by every cluster` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output().slice(-4000)}`);
    });
  const plan = async (input: Record<string, unknown>) => {
    const res = await gql<{ planChange: PlanView }>(PLAN_CHANGE, { input });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.planChange;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedCluster();
    gql = api.admin;
    const registered = await registerCluster(gql, { name: 'plan-east', labels: { env: 'plan' } });
    east = registered;
    sidecar = startSidecarProcess(
      cluster,
      registered,
      { apiUrl: api.url, queuePrefix: prefix },
      { HEARTBEAT_SECONDS: '3600' },
    );
    // A second cluster, paused: a selector's plan reports it NOT_PLANNED, never skips it.
    const paused = await registerCluster(gql, { name: 'plan-paused', labels: { env: 'plan' } });
    pausedCluster = paused;
    const pause = await gql(`mutation($id: ID!) { pauseCluster(clusterId: $id) { name } }`, {
      id: paused.id,
    });
    expect(pause.errors).toBeUndefined();
    await inSyncAt(1);
    // Enabled, with a NodePool that sets expireAfter explicitly (Never).
    const enable = await gql(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { name } }`,
      { id: east.id },
    );
    expect(enable.errors).toBeUndefined();
    const pool = await gql(
      `mutation($id: ID!, $spec: JSON!) { upsertNodePool(clusterId: $id, input: { name: "general", spec: $spec }) { name } }`,
      { id: east.id, spec: poolSpec({ limits: { cpu: '100' } }, { expireAfter: 'Never' }) },
    );
    expect(pool.errors).toBeUndefined();
    await inSyncAt(3);
    await eventually(() => cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general'), {
      timeoutMs: 10_000,
      what: 'NodePool general applied',
    });
  }, 120_000);

  afterAll(async () => {
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('shows a NodePool change field by field, defaults included, and writes nothing', async () => {
    const rvBefore = cluster.kube.resourceVersion;
    const live = cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general')!;
    const events: string[] = [];
    const stop = cluster.kube.watch(
      'karpenter.sh/v1',
      'NodePool',
      (type, o) => events.push(`${type} ${o.metadata?.name ?? ''}`),
      { resourceVersion: rvBefore },
    );
    try {
      // The change leaves expireAfter unset: the API server's default (720h) replaces Never.
      const created = await plan({
        labelSelector: 'env=plan',
        upsertNodePool: { name: 'general', spec: poolSpec({ limits: { cpu: '200' } }) },
      });
      expect(created.expired).toBe(false);
      expect(created.counts).toMatchObject({ total: 2, notPlanned: 1 });
      const done = await planned(created.id);
      plannedId = done.id;
      const [eastPlan, pausedPlan] = done.clusters.nodes;
      expect(pausedPlan).toMatchObject({
        clusterName: 'plan-paused',
        state: 'NOT_PLANNED',
        reason: 'Paused',
        objects: [],
      });
      expect(eastPlan).toMatchObject({ clusterName: 'plan-east', state: 'PLANNED', generation: 3 });
      const nodePool = eastPlan!.objects.find((o) => o.kind === 'NodePool' && o.name === 'general');
      expect(nodePool).toMatchObject({ action: 'CHANGED', errors: [] });
      expect(nodePool!.diff).toEqual([
        { path: '.spec.limits.cpu', before: '100', after: '200' },
        { path: '.spec.template.spec.expireAfter', before: 'Never', after: '720h' },
      ]);
      // Everything else the fleet renders is there and unchanged.
      const others = eastPlan!.objects.filter((o) => o !== nodePool);
      expect(others.length).toBeGreaterThan(5);
      expect(others.filter((o) => o.action !== 'UNCHANGED')).toEqual([]);
      expect(done.counts).toMatchObject({ planned: 1, changed: 1, created: 0, deleted: 0 });
    } finally {
      stop();
    }
    // Nothing was written: no resourceVersion moved, no watch event, desired state unchanged.
    expect(cluster.kube.resourceVersion).toBe(rvBefore);
    expect(events).toEqual([]);
    expect(cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general')).toEqual(live);
    expect((await generationOf(east.id)).karpenter.generation).toBe(3);
  });

  it("a validation error from the CRD comes back at its field, as the cluster's API server gave it", async () => {
    const created = await plan({
      clusterId: east.id,
      upsertNodePool: {
        name: 'general',
        spec: poolSpec({ disruption: { consolidateAfter: 'soon' } }),
      },
    });
    const done = await planned(created.id);
    const nodePool = done.clusters.nodes[0]!.objects.find((o) => o.kind === 'NodePool')!;
    expect(nodePool.errors).toEqual([
      expect.objectContaining({ field: 'spec.disruption.consolidateAfter' }),
    ]);
    expect(done.counts.invalid).toBe(1);
    // What was reviewed was a refusal: applying it is refused too, and nothing moves.
    const res = await gql(APPLY_PLAN, { id: created.id });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
    expect((await generationOf(east.id)).karpenter.generation).toBe(3);
  });

  it('applyPlan applies the reviewed change and the cluster converges', async () => {
    const res = await gql<{ applyPlan: { name: string; karpenter: { generation: number } }[] }>(
      APPLY_PLAN,
      { id: plannedId },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.applyPlan).toEqual([{ name: 'plan-east', karpenter: { generation: 4 } }]);
    await inSyncAt(4);
    const pool = await eventually(
      () => {
        const p = cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general') as
          | { spec: { limits: { cpu: string }; template: { spec: { expireAfter: string } } } }
          | undefined;
        return p?.spec.limits.cpu === '200' ? p : undefined;
      },
      { timeoutMs: 10_000, what: 'the planned NodePool applied' },
    );
    expect(pool.spec.template.spec.expireAfter).toBe('720h');
    // A plan is applied once.
    const again = await gql(APPLY_PLAN, { id: plannedId });
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('applyPlan fails with CONFLICT, naming the cluster, after a newer setKarpenter', async () => {
    const created = await plan({ clusterId: east.id, change: { logLevel: 'debug' } });
    const done = await planned(created.id);
    expect(done.clusters.nodes[0]).toMatchObject({ state: 'PLANNED', generation: 4 });
    const newer = await gql(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: error }) { name } }`,
      { id: east.id },
    );
    expect(newer.errors).toBeUndefined();
    const res = await gql(APPLY_PLAN, { id: created.id });
    expect(res.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(res.errors?.[0]?.message).toMatch(/plan-east is at generation 5, not the 4/);
    expect((await generationOf(east.id)).karpenter.generation).toBe(5);
  });

  it('kfleet plan prints per cluster the actions and diffs; kfleet plan apply applies it', async () => {
    const env = { KFLEET_API_URL: api.url, KFLEET_TOKEN: api.adminToken };
    const planned = await runKfleetInProcess(
      ['plan', '-l', 'env=plan', '-f', '-'],
      env,
      generalNodePoolYaml(300),
    );
    expect(planned).toMatchObject({ code: 0, stderr: '' });
    const out = planned.stdout;
    expect(out).toMatch(
      /^plan [0-9a-f-]{36}: 2 cluster\(s\): 1 planned, 1 not planned, 0 failed, 0 pending/,
    );
    expect(out).toContain('cluster/plan-east PLANNED (generation 5)\n  ~ NodePool/general\n');
    expect(out).toContain('      .spec.limits.cpu: "200" -> "300"\n');
    expect(out).toMatch(/ {2}= \d+ unchanged\n/);
    expect(out).toContain(
      'cluster/plan-paused NOT_PLANNED (generation 2) Paused: the cluster is paused',
    );
    const id = /kfleet plan apply ([0-9a-f-]{36})/.exec(out)?.[1];
    expect(id).toBeDefined();
    const applied = await runKfleetInProcess(['plan', 'apply', id!], env);
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    expect(applied.stdout).toMatch(
      new RegExp(`^cluster/plan-east plan ${id} applied \\(generation 6,`),
    );
    const shown = await runKfleetInProcess(['plan', 'show', id!, '-o', 'json'], env);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id, appliedAt: expect.any(String) });
    // Applied once: again is a CONFLICT (exit 1, the API's message).
    const again = await runKfleetInProcess(['plan', 'apply', id!], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/was applied at/);
  });

  it('Stale and HOSTED clusters are NOT_PLANNED with their reason, never skipped', async () => {
    const stale = await registerCluster(gql, { name: 'plan-stale', labels: { env: 'np' } });
    await registerCluster(gql, {
      name: 'plan-hosted',
      labels: { env: 'np', tier: 'hosted' },
      topology: 'HOSTED',
      managementCluster: 'mgmt-1',
      hcpNamespace: 'clusters-plan-hosted',
    });
    // The worker's staleness sweep raises this when a cluster stops reporting.
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      await pool.query(`UPDATE "ClusterStatus" SET conditions = $2::jsonb WHERE "clusterId" = $1`, [
        stale.uid,
        JSON.stringify([
          {
            type: 'Stale',
            status: 'True',
            reason: 'NoRecentReports',
            message: 'no report',
            lastTransitionTime: new Date().toISOString(),
          },
        ]),
      ]);
    } finally {
      await pool.end();
    }
    const created = await plan({ labelSelector: 'env=np', change: { logLevel: 'debug' } });
    // Nothing to wait for: neither is sent to a sidecar.
    expect(created.counts).toMatchObject({ total: 2, notPlanned: 2, pending: 0 });
    const read = await gql<{ changePlan: PlanView }>(CHANGE_PLAN, { id: created.id });
    expect(
      read.data?.changePlan.clusters.nodes.map((c) => [c.clusterName, c.state, c.reason]),
    ).toEqual([
      ['plan-hosted', 'NOT_PLANNED', 'UnsupportedForTopology'],
      ['plan-stale', 'NOT_PLANNED', 'Stale'],
    ]);
    const res = await gql(APPLY_PLAN, { id: created.id });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
    // Applying uses the whole plan up: a token that sees only part of it may not.
    const scoped = api.as(await api.createToken('OPERATOR', { labelSelector: 'tier=hosted' }));
    const partial = await scoped(APPLY_PLAN, { id: created.id });
    expect(partial.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    expect(partial.errors?.[0]?.message).toMatch(/covers clusters outside this token's scope/);
  });

  it("a plan's answer is taken only from that cluster's sidecar, for an entry awaiting it", async () => {
    const created = await plan({ labelSelector: 'env=plan', change: { logLevel: 'debug' } });
    const answered = await planned(created.id);
    // The generation a real answer for east's entry carries (the plan's, one past the entry's).
    const eastGeneration =
      answered.clusters.nodes.find((c) => c.clusterName === 'plan-east')!.generation + 1;
    const answer = (clusterUid: string, token: string, body: Record<string, unknown> = {}) =>
      fetch(`${api.url}/v1/clusters/${clusterUid}/plans/${created.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          clusterId: clusterUid,
          planId: created.id,
          generation: 3,
          outcome: 'PLANNED',
          objects: [],
          reportedAt: new Date().toISOString(),
          ...body,
        }),
      }).then((r) => r.status);
    // Another cluster's token: refused before anything is read.
    expect(await answer(pausedCluster.uid, east.reportToken)).toBe(401);
    // Its own token, but an answer for another cluster's entry.
    expect(await answer(east.uid, east.reportToken, { clusterId: pausedCluster.uid })).toBe(403);
    // The paused cluster's own sidecar: its entry is NOT_PLANNED, nothing awaits an answer.
    expect(await answer(pausedCluster.uid, pausedCluster.reportToken)).toBe(409);
    // east answered already: a second answer changes nothing.
    expect(await answer(east.uid, east.reportToken, { generation: eastGeneration })).toBe(409);
    // Invalid bodies are refused naming the field.
    expect(await answer(east.uid, east.reportToken, { outcome: 'MAYBE' })).toBe(400);
    const read = await gql<{ changePlan: PlanView }>(CHANGE_PLAN, { id: created.id });
    expect(read.data?.changePlan.clusters.nodes.map((c) => [c.clusterName, c.state])).toEqual([
      ['plan-east', 'PLANNED'],
      ['plan-paused', 'NOT_PLANNED'],
    ]);
  });

  it('an expired plan is read, not applied', async () => {
    const created = await plan({ clusterId: east.id, change: { logLevel: 'info' } });
    await planned(created.id);
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      await pool.query(
        `UPDATE "ChangePlan" SET "expiresAt" = now() - interval '1 second' WHERE id = $1`,
        [created.id],
      );
    } finally {
      await pool.end();
    }
    const res = await gql(APPLY_PLAN, { id: created.id });
    expect(res.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(res.errors?.[0]?.message).toMatch(/expired/);
    const read = await gql<{ changePlan: PlanView }>(CHANGE_PLAN, { id: created.id });
    expect(read.data?.changePlan.expired).toBe(true);
  });
});
