import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { composeEffectiveState, ProfileSpec } from '@fleet/desired-state';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
// Tests boot the real worker in process; the apps-never-import-apps rule is about app code.

import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { runKfleetInProcess } from '../cli/kfleet-process.js';
import { FakeSidecar } from '../rollouts/fake-sidecar.js';

const ROLLOUT = `id state reason counts { total healthy skipped }
  waves { index state startedAt finishedAt clusters { clusterName state generation appliedAt } }`;
const PAYLOAD = `profile { name revision selector priority deleting boundClusters currentClusters } rollout { ${ROLLOUT} }`;
const CREATE = `mutation($input: CreateProfileInput!, $strategy: RolloutStrategyInput) {
  createProfile(input: $input, strategy: $strategy) { ${PAYLOAD} } }`;
const UPDATE = `mutation($name: String!, $input: UpdateProfileInput!, $strategy: RolloutStrategyInput) {
  updateProfile(name: $name, input: $input, strategy: $strategy) { ${PAYLOAD} } }`;
const DELETE = `mutation($name: String!, $strategy: RolloutStrategyInput) {
  deleteProfile(name: $name, strategy: $strategy) { ${PAYLOAD} } }`;
const EFFECTIVE = `query($id: ID!) { cluster(id: $id) { karpenter { generation logLevel enabled }
  effectiveState { fields { field value source profile profileRevision } profiles { name revision } overrides ignored { field profile reason } } } }`;

interface RolloutView {
  id: string;
  state: string;
  reason: string | null;
  counts: { total: number; healthy: number; skipped: number };
  waves: {
    index: number;
    state: string;
    startedAt: string | null;
    finishedAt: string | null;
    clusters: {
      clusterName: string;
      state: string;
      generation: number | null;
      appliedAt: string | null;
    }[];
  }[];
}
interface Payload {
  profile: { name: string; revision: number; boundClusters: number; deleting: boolean } | null;
  rollout: RolloutView | null;
}
interface Effective {
  karpenter: { generation: number; logLevel: string; enabled: boolean };
  effectiveState: {
    fields: {
      field: string;
      value: unknown;
      source: string;
      profile: string | null;
      profileRevision: number | null;
    }[];
    profiles: { name: string; revision: number }[];
    overrides: string[];
    ignored: { field: string; profile: string; reason: string }[];
  };
}

const GENERAL = {
  template: {
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    },
  },
  limits: { cpu: '100' },
};
const STRATEGY = {
  waves: [{ count: 1 }, { percent: 100 }],
  minHealthySeconds: 1,
  waveTimeoutSeconds: 120,
};

describe('fleet profiles (real API, worker, PostgreSQL, Redis; fake sidecars)', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let sql: pg.Client;
  let prefix: string;
  let dir: string;
  const sidecars = new Map<string, FakeSidecar>();
  const ids = new Map<string, string>();

  const gql = async <T>(query: string, variables?: Record<string, unknown>): Promise<T> => {
    const res = await api.admin<T>(query, variables);
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data;
  };
  const register = async (name: string, labels: Record<string, string>) => {
    const { registerCluster: r } = await gql<{
      registerCluster: { reportToken: string; cluster: { id: string; uid: string } };
    }>(
      `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { reportToken cluster { id uid } } }`,
      { input: { name, topology: 'STANDALONE', platform: 'AWS', region: 'us-east-1', labels } },
    );
    ids.set(name, r.cluster.id);
    sidecars.set(name, new FakeSidecar(r.cluster.uid, r.reportToken, api.url, prefix));
  };
  const lastOrder = (name: string) => sidecars.get(name)!.orders.at(-1);
  const effective = async (name: string) =>
    (await gql<{ cluster: Effective }>(EFFECTIVE, { id: ids.get(name) })).cluster;
  const field = (e: Effective, name: string) =>
    e.effectiveState.fields.find((f) => f.field === name);
  const waitRollout = (id: string, state: string) => {
    let last: RolloutView | undefined;
    return eventually(
      async () => {
        last = (
          await gql<{ rollout: RolloutView }>(
            `query($id: ID!) { rollout(id: $id) { ${ROLLOUT} } }`,
            { id },
          )
        ).rollout;
        return last.state === state ? last : undefined;
      },
      // Generous: two waves of reports and ticks on a loaded 2-core machine.
      { timeoutMs: 60_000, intervalMs: 100, what: `rollout ${state}` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; rollout was ${JSON.stringify(last)}`);
    });
  };
  const waitOrder = (
    name: string,
    ok: (spec: Record<string, unknown>, generation: number) => boolean,
    what: string,
  ) =>
    eventually(
      () => {
        const o = lastOrder(name);
        return o && ok(o.spec, o.generation) ? o : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, what },
    );
  const kfleet = (args: string[]) =>
    runKfleetInProcess(args, {
      KFLEET_API_URL: api.url,
      KFLEET_TOKEN: api.adminToken,
      KFLEET_CONFIG: join(dir, 'config'),
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    dir = await mkdtemp(join(tmpdir(), 'kfleet-profiles-'));
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
    for (const name of ['prod-0', 'prod-1', 'prod-2']) await register(name, { env: 'prod' });
    await register('dev-0', { env: 'dev' });
    await eventually(
      () => ([...sidecars.values()].every((s) => s.observed >= 1) ? true : undefined),
      { timeoutMs: 60_000, what: 'every cluster at generation 1' },
    );
  });

  afterAll(async () => {
    await Promise.all([...sidecars.values()].map((s) => s.stop()));
    await worker?.close();
    await api?.app.close();
    await sql?.end();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a profile bound to env=prod reaches every prod cluster through a rollout, wave after wave, and no other', async () => {
    // Through the CLI: the profile as an SRE writes it in YAML.
    await writeFile(
      join(dir, 'prod-base.yaml'),
      `enabled: true\nlogLevel: debug\nnodePools:\n  general: ${JSON.stringify(GENERAL)}\n`,
    );
    const created = await kfleet([
      'profiles',
      'create',
      'prod-base',
      '-l',
      'env=prod',
      '--priority',
      '10',
      '-f',
      join(dir, 'prod-base.yaml'),
      '--waves',
      '1,100%',
      '--min-healthy-seconds',
      '1',
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const rolloutId = /rollout\/(\S+) RUNNING, 3 clusters/.exec(created.stdout)?.[1];
    expect(rolloutId).toBeDefined();
    const done = await waitRollout(rolloutId!, 'COMPLETED');
    // Never the whole fleet at once: one cluster first, the other two only after it held healthy.
    expect(done.waves.map((w) => w.clusters.length)).toEqual([1, 2]);
    const firstDone = Date.parse(done.waves[0]!.finishedAt!);
    for (const c of done.waves[1]!.clusters)
      expect(Date.parse(c.appliedAt!)).toBeGreaterThanOrEqual(firstDone);
    for (const name of ['prod-0', 'prod-1', 'prod-2']) {
      const order = await waitOrder(name, (s) => s.enabled === true, `${name} enabled`);
      expect(order.spec).toMatchObject({
        enabled: true,
        logLevel: 'debug',
        clusterAutoscalerMode: 'KEEP',
      });
      expect(order.spec.nodePools).toEqual([{ name: 'general', spec: GENERAL }]);
    }
    expect(sidecars.get('dev-0')!.orders.map((o) => o.generation)).toEqual([1]);
    expect(lastOrder('dev-0')!.spec).toMatchObject({ enabled: false, nodePools: [] });

    const listed = await kfleet(['profiles', 'list']);
    expect(listed.stdout).toMatch(
      /prod-base\s+10\s+env=prod\s+1\s+3\s+enabled,logLevel,nodePools.general/,
    );
  });

  it('effective state shows its sources; an override wins, and reset gives the profile its field back', async () => {
    let e = await effective('prod-0');
    expect(field(e, 'enabled')).toMatchObject({
      value: true,
      source: 'profile',
      profile: 'prod-base',
      profileRevision: 1,
    });
    expect(field(e, 'nodePools.general')).toMatchObject({
      source: 'profile',
      profile: 'prod-base',
    });
    expect(field(e, 'clusterAutoscalerMode')).toMatchObject({ value: 'KEEP', source: 'default' });
    expect(e.effectiveState.profiles).toEqual([{ name: 'prod-base', revision: 1 }]);
    expect(e.effectiveState.overrides).toEqual([]);

    const { setKarpenter } = await gql<{ setKarpenter: { karpenter: { generation: number } } }>(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: error }) { karpenter { generation } } }`,
      { id: ids.get('prod-0') },
    );
    e = await effective('prod-0');
    expect(field(e, 'logLevel')).toMatchObject({
      value: 'error',
      source: 'override',
      profile: null,
    });
    expect(e.effectiveState.overrides).toEqual(['logLevel']);

    const shown = await kfleet(['clusters', 'get', 'prod-0', '--show-sources']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('profiles: prod-base@r1 (priority 10)');
    expect(shown.stdout).toMatch(/enabled\s+true\s+profile\/prod-base@r1/);
    expect(shown.stdout).toMatch(/logLevel\s+"error"\s+override/);
    expect(shown.stdout).toMatch(/clusterAutoscalerMode\s+"KEEP"\s+default/);

    const reset = await kfleet(['clusters', 'reset', 'prod-0', 'logLevel']);
    expect(reset.stderr).toBe('');
    expect(reset.code).toBe(0);
    e = await effective('prod-0');
    expect(e.karpenter.generation).toBe(setKarpenter.karpenter.generation + 1);
    expect(field(e, 'logLevel')).toMatchObject({
      value: 'debug',
      source: 'profile',
      profile: 'prod-base',
    });
    await waitOrder(
      'prod-0',
      (s, g) => g === e.karpenter.generation && s.logLevel === 'debug',
      'the reset in an order',
    );

    const again = await gql<{ resetClusterOverride: unknown } | null>(
      `mutation($id: ID!) { resetClusterOverride(clusterId: $id, field: "logLevel") { id } }`,
      { id: ids.get('prod-0') },
    ).catch((err: Error) => err.message);
    expect(again).toContain('the cluster does not override logLevel');
  });

  it('a cluster registered later with env=prod gets the profile in its first order', async () => {
    await register('prod-3', { env: 'prod' });
    const first = await eventually(() => sidecars.get('prod-3')!.orders[0], {
      timeoutMs: 30_000,
      what: 'the first order of prod-3',
    });
    expect(first.generation).toBe(1);
    expect(first.spec).toMatchObject({ enabled: true, logLevel: 'debug' });
    expect(first.spec.nodePools).toEqual([{ name: 'general', spec: GENERAL }]);
  });

  it('relabelling moves a cluster out: its next order drops what the profile set, the Cluster Autoscaler kept', async () => {
    const before = (await effective('prod-1')).karpenter.generation;
    const res = await kfleet(['clusters', 'label', 'prod-1', 'env=dev']);
    expect(res.code).toBe(0);
    const e = await effective('prod-1');
    expect(e.karpenter.generation).toBe(before + 1);
    expect(e.effectiveState.profiles).toEqual([]);
    const order = await waitOrder(
      'prod-1',
      (_s, g) => g === before + 1,
      'prod-1 out of the profile',
    );
    expect(order.spec).toMatchObject({
      enabled: false,
      clusterAutoscalerMode: 'KEEP',
      logLevel: 'info',
      nodePools: [],
    });
    // A label that moves no profile is metadata still: no generation.
    await kfleet(['clusters', 'label', 'prod-1', 'team=a']);
    expect((await effective('prod-1')).karpenter.generation).toBe(before + 1);
  });

  it('refuses a same-priority profile that could meet prod-base on a cluster and sets a field differently, naming both', async () => {
    const res = await api.admin(CREATE, {
      input: { name: 'web-logs', selector: 'tier=web', priority: 10, spec: { logLevel: 'error' } },
    });
    expect(res.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.spec.logLevel',
    });
    expect(res.errors?.[0]?.message).toContain(
      'profile web-logs and profile prod-base both have priority 10',
    );
    expect(await sql.query(`SELECT 1 FROM "Profile" WHERE name = 'web-logs'`)).toMatchObject({
      rowCount: 0,
    });
    // Disjoint selectors, or another priority, stand.
    const dev = await gql<{ createProfile: Payload }>(CREATE, {
      input: {
        name: 'dev-logs',
        selector: 'env=dev,tier=web',
        priority: 10,
        spec: { logLevel: 'error' },
      },
    });
    expect(dev.createProfile.rollout).toBeNull();
    expect(dev.createProfile.profile).toMatchObject({ name: 'dev-logs', boundClusters: 0 });
  });

  it('scoped tokens see and change only profiles whose selector is within their scope', async () => {
    const secret = await api.createToken('OPERATOR', { labelSelector: 'env=dev' });
    const as = api.as(secret);
    const seen = await as<{ profiles: { name: string }[] }>(`{ profiles { name } }`);
    expect(seen.data!.profiles.map((p) => p.name)).toEqual(['dev-logs']);
    const hidden = await as(`{ profile(name: "prod-base") { name } }`);
    expect(hidden.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const outside = await as(CREATE, {
      input: { name: 'sneaky', selector: 'env=prod', priority: 1, spec: { enabled: false } },
    });
    expect(outside.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const update = await as(UPDATE, { name: 'prod-base', input: { priority: 11 } });
    expect(update.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('an edit rolls out as a new revision; deleting takes it away from its clusters, then the profile is gone', async () => {
    const { updateProfile: u } = await gql<{ updateProfile: Payload }>(UPDATE, {
      name: 'prod-base',
      input: { spec: { enabled: true, logLevel: 'error', nodePools: { general: GENERAL } } },
      strategy: STRATEGY,
    });
    expect(u.profile!.revision).toBe(2);
    expect(u.rollout!.counts.total).toBe(3); // prod-0, prod-2, prod-3 (prod-1 left)
    await waitRollout(u.rollout!.id, 'COMPLETED');
    for (const name of ['prod-0', 'prod-2', 'prod-3'])
      await waitOrder(name, (s) => s.logLevel === 'error', `${name} at revision 2`);
    expect(field(await effective('prod-2'), 'logLevel')).toMatchObject({ profileRevision: 2 });
    // What the console's profile view reads: its revisions, the clusters on each, its rollout.
    const { profile: view } = await gql<{
      profile: {
        revisions: { revision: number; selector: string; priority: number }[];
        clusters: { clusterId: string; clusterName: string; revision: number }[];
        rollout: { id: string; state: string } | null;
      };
    }>(`{ profile(name: "prod-base") { revisions { revision selector priority }
        clusters { clusterId clusterName revision } rollout { id state } } }`);
    expect(view.revisions).toEqual([
      { revision: 2, selector: 'env=prod', priority: 10 },
      { revision: 1, selector: 'env=prod', priority: 10 },
    ]);
    expect(view.clusters).toEqual(
      ['prod-0', 'prod-2', 'prod-3'].map((name) => ({
        clusterId: ids.get(name),
        clusterName: name,
        revision: 2,
      })),
    );
    expect(view.rollout).toEqual({ id: u.rollout!.id, state: 'COMPLETED' });

    const { deleteProfile: d } = await gql<{ deleteProfile: Payload }>(DELETE, {
      name: 'prod-base',
      strategy: STRATEGY,
    });
    expect(d.profile!.deleting).toBe(true);
    await waitRollout(d.rollout!.id, 'COMPLETED');
    for (const name of ['prod-0', 'prod-2', 'prod-3'])
      await waitOrder(
        name,
        (s) => s.enabled === false && (s.nodePools as unknown[]).length === 0,
        `${name} without the profile`,
      );
    const gone = await api.admin(`{ profile(name: "prod-base") { name } }`);
    expect(gone.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const audit = await sql.query<{ action: string }>(
      `SELECT action FROM "AuditEvent" WHERE action LIKE '%Profile%' ORDER BY id`,
    );
    expect(audit.rows.map((r) => r.action)).toEqual(
      expect.arrayContaining([
        'createProfile',
        'updateProfile',
        'deleteProfile',
        'applyProfileRollout',
      ]),
    );
  });

  it("the migration's data step turns per-cluster state into overrides, every effective state unchanged", async () => {
    await register('legacy-0', { env: 'legacy' });
    await gql(
      `mutation($id: ID!, $pool: JSON!) {
        a: setKarpenter(clusterId: $id, input: { enabled: true, clusterAutoscalerMode: MIGRATE, logLevel: debug, driftPolicy: REPORT, featureGates: { Drift: false } }) { id }
        b: upsertNodePool(clusterId: $id, input: { name: "general", spec: $pool }) { id }
      }`,
      { id: ids.get('legacy-0'), pool: GENERAL },
    );
    // As the fleet was before profiles: the state in the columns, no overrides recorded.
    await sql.query(`UPDATE "DesiredState" SET overrides = '{}', sources = '{}'`);
    const state = `SELECT d."clusterId", d.enabled, d."clusterAutoscalerMode"::text AS mode, d."logLevel"::text AS "logLevel",
        d."featureGates", d."nodeClassOverrides", d."karpenterVersion", d."driftPolicy"::text AS "driftPolicy", d.generation,
        COALESCE((SELECT jsonb_agg(jsonb_build_object('name', p.name, 'spec', p.spec) ORDER BY p.name) FROM "NodePool" p
                   WHERE p."clusterId" = d."clusterId"), '[]'::jsonb) AS "nodePools"
      FROM "DesiredState" d ORDER BY d."clusterId"`;
    const before = (await sql.query(state)).rows;
    const migration = await readFile(
      join(process.cwd(), 'prisma/migrations/20261202064712_profiles/migration.sql'),
      'utf8',
    );
    await sql.query(migration.slice(migration.indexOf('-- Data:')));
    expect((await sql.query(state)).rows).toEqual(before);
    const rows = await sql.query<{ clusterId: string; overrides: unknown }>(
      `SELECT "clusterId", overrides FROM "DesiredState" ORDER BY "clusterId"`,
    );
    for (const [i, row] of rows.rows.entries()) {
      const b = before[i] as Record<string, unknown>;
      const composed = composeEffectiveState([], ProfileSpec.parse(row.overrides), {
        platform: 'AWS',
        topology: 'STANDALONE',
      });
      expect(composed.settings).toEqual({
        enabled: b.enabled,
        clusterAutoscalerMode: b.mode,
        logLevel: b.logLevel,
        featureGates: b.featureGates,
        nodeClassOverrides: b.nodeClassOverrides,
        karpenterVersion: b.karpenterVersion,
        driftPolicy: b.driftPolicy,
      });
      expect(composed.nodePools).toEqual(b.nodePools);
    }
    // And the API's effective state (bindings kept) names the override for every migrated field.
    const e = await effective('legacy-0');
    expect(e.effectiveState.fields.every((f) => f.source === 'override')).toBe(true);
    expect(field(e, 'clusterAutoscalerMode')!.value).toBe('MIGRATE');
  });
});
