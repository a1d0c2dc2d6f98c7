import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
// Tests boot the real worker in process; the apps-never-import-apps rule is about app code.
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { FakeSidecar } from '../rollouts/fake-sidecar.js';
import { runKfleet, runKfleetInProcess } from './kfleet-process.js';

const HEADER = 'apiVersion: fleet.karpenter.sh/v1alpha1';
const GENERAL = `
      template:
        spec:
          nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
          requirements:
            - { key: karpenter.sh/capacity-type, operator: In, values: [on-demand] }
      limits: { cpu: "100" }`;
const PROD = `${HEADER}
kind: Profile
metadata: { name: prod }
spec:
  selector: env=prod
  priority: 10
  enabled: true
  nodePools:
    general:${GENERAL}
`;
const DEV = `${HEADER}
kind: Profile
metadata: { name: dev }
spec:
  selector: env=dev
  priority: 10
  logLevel: error
`;
/** Every cluster: its rollout holds the clusters the next profiles of the same apply touch. */
const BASE = `${HEADER}
kind: Profile
metadata: { name: base }
spec:
  selector: ""
  priority: 1
  driftPolicy: REPORT
`;
const PROD_0 = `${HEADER}
kind: ClusterOverrides
metadata: { name: prod-0 }
spec:
  logLevel: debug
  featureGates: { Drift: true, SpotToSpotConsolidation: true }
`;
const STRATEGY = ['--waves', '100%', '--min-healthy-seconds', '1'];
/** Two stages: the env=dev clusters, then the rest; short gates so the rollout ends in seconds. */
const CANARY = `${HEADER}
kind: RolloutStrategy
metadata: { name: dev-first }
spec:
  stages:
    - { selector: env=dev, minHealthySeconds: 1 }
    - { percent: 100, minHealthySeconds: 2 }
  maxFailures: 1
  waveTimeoutSeconds: 60
`;
const SPARE = `${HEADER}
kind: RolloutStrategy
metadata: { name: spare }
spec:
  stages: [{ count: 1 }, { percent: 100 }]
`;
/** Every cluster, through the strategy its annotation names (it wins over the apply's flags). */
const STAGED = `${HEADER}
kind: Profile
metadata:
  name: staged
  annotations: { fleet.karpenter.sh/rollout-strategy: dev-first }
spec:
  selector: ""
  priority: 30
  driftPolicy: CORRECT
`;

/** Every file below `dir`, by relative path, with its text. */
async function tree(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile())
      files[relative(dir, join(e.parentPath, e.name))] = await readFile(
        join(e.parentPath, e.name),
        'utf8',
      );
  return files;
}

describe('kfleet apply -f / export (real API, worker, PostgreSQL, Redis; fake sidecars)', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let sql: pg.Client;
  let prefix: string;
  let dir: string;
  let fleet: string;
  const sidecars = new Map<string, FakeSidecar>();
  const ids = new Map<string, string>();

  const gql = async <T>(query: string, variables?: Record<string, unknown>): Promise<T> => {
    const res = await api.admin<T>(query, variables);
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data;
  };
  const env = () => ({
    KFLEET_API_URL: api.url,
    KFLEET_TOKEN: api.adminToken,
    KFLEET_CONFIG: join(dir, 'config'),
  });
  const kfleet = (args: string[]) => runKfleetInProcess(args, env());
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
  /** What apply may change, fleet-wide: profiles (with revisions) and every cluster's state. */
  const snapshot = async () =>
    (
      await sql.query(
        `SELECT (SELECT jsonb_agg(jsonb_build_object('n', name, 'r', revision, 'd', "deletedAt") ORDER BY name) FROM "Profile") AS profiles,
                (SELECT jsonb_agg(jsonb_build_object('c', "clusterId", 'g', generation, 'o', overrides) ORDER BY "clusterId") FROM "DesiredState") AS clusters,
                (SELECT count(*)::int FROM "AuditEvent") AS audit,
                (SELECT count(*)::int FROM "Rollout") AS rollouts`,
      )
    ).rows[0] as Record<string, unknown>;
  const rolloutsDone = () =>
    eventually(
      async () => {
        const { rows } = await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "Rollout" WHERE state::text NOT IN ('COMPLETED')`,
        );
        return rows[0]!.n === 0 ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'every rollout COMPLETED' },
    );
  const overridesOf = async (name: string) =>
    (
      await gql<{ cluster: { overrides: unknown; karpenter: { generation: number } } }>(
        `query($id: ID!) { cluster(id: $id) { overrides karpenter { generation } } }`,
        { id: ids.get(name) },
      )
    ).cluster;

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    dir = await mkdtemp(join(tmpdir(), 'kfleet-apply-'));
    fleet = join(dir, 'fleet');
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
    await register('prod-0', { env: 'prod' });
    await register('prod-1', { env: 'prod' });
    await register('dev-0', { env: 'dev' });
    await eventually(
      () => ([...sidecars.values()].every((s) => s.observed >= 1) ? true : undefined),
      { timeoutMs: 60_000, what: 'every cluster at generation 1' },
    );
    await mkdir(join(fleet, 'profiles'), { recursive: true });
    await mkdir(join(fleet, 'clusters'), { recursive: true });
    // One profile per file, and two documents in one file: both are read.
    await writeFile(join(fleet, 'profiles', 'prod.yml'), PROD);
    await writeFile(join(fleet, 'profiles', 'dev.yaml'), DEV);
    await writeFile(join(fleet, 'clusters', 'prod-0.yaml'), `---\n${PROD_0}---\n`);
    await writeFile(join(fleet, 'base.yaml'), BASE);
    await writeFile(join(fleet, 'README.md'), 'not a manifest\n');
  });

  afterAll(async () => {
    await Promise.all([...sidecars.values()].map((s) => s.stop()));
    await worker?.close();
    await api?.app.close();
    await sql?.end();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('an invalid document is named with its file, document and field, and nothing is applied (a real process: exit code)', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(
      bad,
      `${DEV}---\n${HEADER}\nkind: Profile\nmetadata: { name: broken }\nspec:\n  selector: env=prod\n  priority: 20\n  nodePools:\n    general:\n      template: { spec: { nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }, requirements: [] } }\n      limits: { cpu: [1] }\n`,
    );
    const before = await snapshot();
    const run = await runKfleet(['apply', '-f', fleet, '-f', bad], env());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${bad}: document 2 (Profile broken): spec.nodePools.general.limits`,
    );
    // Also the duplicate: dev is declared in the directory and in bad.yaml.
    expect(run.stderr).toContain(`${bad}: document 1 (Profile dev): metadata.name:`);
    expect(run.stderr).toMatch(/nothing applied/);
    expect(run.stdout).toBe('');
    expect(await snapshot()).toEqual(before);
  });

  it('--dry-run prints the plan and writes nothing', async () => {
    const before = await snapshot();
    const run = await kfleet(['apply', '-f', fleet, '--dry-run']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Plan: 3 to create, 1 to update, 0 to delete, 0 unchanged');
    expect(run.stdout).toContain('+ profile/prod (create, through its rollout)');
    expect(run.stdout).toContain('~ clusteroverrides/prod-0 (update)');
    expect(run.stdout).toContain('    + spec.logLevel: "debug"');
    expect(run.stdout).toContain('Dry run: nothing written.');
    expect(await snapshot()).toEqual(before);
  });

  it('apply of a directory creates the profiles (through their rollouts) and the overrides; a second apply changes nothing', async () => {
    const run = await kfleet(['apply', '-f', fleet, ...STRATEGY]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/profile\/base created; rollout\/\S+ RUNNING, 3 clusters/);
    // dev-0 is in base's rollout when dev is written: apply waits for it, then writes dev.
    expect(run.stdout).toMatch(/waiting for rollout\/\S+ to complete\nprofile\/dev created/);
    expect(run.stdout).toMatch(/profile\/prod created; rollout\/\S+ RUNNING, 2 clusters/);
    expect(run.stdout).toMatch(/profile\/dev created; rollout\/\S+ RUNNING, 1 clusters/);
    expect(run.stdout).toMatch(/clusteroverrides\/prod-0 updated \(generation \d+\)/);
    await rolloutsDone();
    expect((await overridesOf('prod-0')).overrides).toEqual({
      featureGates: { Drift: true, SpotToSpotConsolidation: true },
      logLevel: 'debug',
    });
    await eventually(
      () => {
        const o = sidecars.get('prod-1')!.orders.at(-1);
        return o?.spec.enabled === true ? o : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: 'prod-1 enabled by profile prod' },
    );
    const before = await snapshot();
    const again = await kfleet(['apply', '-f', fleet, ...STRATEGY]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      'Plan: 0 to create, 0 to update, 0 to delete, 4 unchanged\nNo changes.\n',
    );
    expect(await snapshot()).toEqual(before);
  });

  it('export -> apply -> export: identical files, and the apply changes nothing', async () => {
    const first = join(dir, 'export-1');
    const second = join(dir, 'export-2');
    expect((await kfleet(['export', '-o', first])).code).toBe(0);
    const files = await tree(first);
    expect(Object.keys(files).sort()).toEqual([
      'clusters/prod-0.yaml',
      'profiles/base.yaml',
      'profiles/dev.yaml',
      'profiles/prod.yaml',
    ]);
    expect(files['profiles/dev.yaml']).toBe(
      `${HEADER}\nkind: Profile\nmetadata:\n  name: dev\nspec:\n  selector: env=dev\n  priority: 10\n  logLevel: error\n`,
    );
    const before = await snapshot();
    const apply = await kfleet(['apply', '-f', first, '--prune']);
    expect(apply.stdout).toContain('No changes.');
    expect(await snapshot()).toEqual(before);
    expect((await kfleet(['export', '-o', second])).code).toBe(0);
    expect(await tree(second)).toEqual(files);
    // The stream holds the same documents, in the same order.
    const stream = await kfleet(['export']);
    expect(stream.stdout).toBe(
      ['profiles/base.yaml', 'profiles/dev.yaml', 'profiles/prod.yaml', 'clusters/prod-0.yaml']
        .map((f) => `---\n${files[f]}`)
        .join(''),
    );
  });

  it('an edited file updates its profile through a rollout, the plan naming the field that changes', async () => {
    await writeFile(join(fleet, 'profiles', 'prod.yml'), PROD.replace('cpu: "100"', 'cpu: "200"'));
    const run = await kfleet(['apply', '-f', fleet, ...STRATEGY]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(
      'Plan: 0 to create, 1 to update, 0 to delete, 3 unchanged\n~ profile/prod (update, through its rollout)\n    ~ spec.nodePools.general.limits.cpu: "100" -> "200"\n',
    );
    expect(run.stdout).toMatch(/profile\/prod updated; rollout\/\S+ RUNNING, 2 clusters/);
    await rolloutsDone();
    const { profile } = await gql<{ profile: { revision: number; currentClusters: number } }>(
      `{ profile(name: "prod") { revision currentClusters } }`,
    );
    expect(profile).toEqual({ revision: 2, currentClusters: 2 });
  });

  it('--prune deletes a profile the files no longer hold, through its rollout', async () => {
    await unlink(join(fleet, 'profiles', 'dev.yaml'));
    const plain = await kfleet(['apply', '-f', fleet, '--dry-run']);
    expect(plain.stdout).toContain('No changes.'); // without --prune nothing is deleted
    const run = await kfleet(['apply', '-f', fleet, '--prune', ...STRATEGY]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('- profile/dev (delete, through its rollout)');
    const rolloutId = /profile\/dev deleted; rollout\/(\S+) RUNNING, 1 clusters/.exec(
      run.stdout,
    )?.[1];
    expect(rolloutId).toBeDefined();
    await rolloutsDone();
    await eventually(
      async () =>
        (await api.admin(`{ profile(name: "dev") { name } }`)).errors ? true : undefined,
      { timeoutMs: 30_000, intervalMs: 100, what: 'profile dev gone' },
    );
    await eventually(
      () => (sidecars.get('dev-0')!.orders.at(-1)?.spec.logLevel === 'info' ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 50, what: 'dev-0 back to the default logLevel' },
    );
    const audit = await sql.query<{ action: string }>(
      `SELECT action FROM "AuditEvent" WHERE action IN ('deleteProfile', 'setClusterOverrides') ORDER BY id`,
    );
    expect(audit.rows.map((r) => r.action)).toEqual(['setClusterOverrides', 'deleteProfile']);
  });

  it('clusters reset --all clears every override in one generation, audited', async () => {
    const before = await overridesOf('prod-0');
    const run = await kfleet(['clusters', 'reset', 'prod-0', '--all']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('cluster/prod-0 every override cleared');
    const after = await overridesOf('prod-0');
    expect(after.overrides).toEqual({});
    expect(after.karpenter.generation).toBe(before.karpenter.generation + 1);
    // setClusterOverrides checks what it is given as the per-field mutations do; nothing written.
    const bad = await api.admin(
      `mutation($id: ID!, $o: JSON!) { setClusterOverrides(clusterId: $id, overrides: $o) { name } }`,
      { id: ids.get('prod-0'), o: { nodePools: { general: { limits: { cpu: [1] } } } } },
    );
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(String(bad.errors?.[0]?.extensions?.field)).toMatch(/^overrides\.nodePools\.general\./);
    expect((await overridesOf('prod-0')).karpenter.generation).toBe(after.karpenter.generation);
    const again = await kfleet(['clusters', 'reset', 'prod-0', '--all']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('overrides nothing');
    const audit = await sql.query(
      `SELECT 1 FROM "AuditEvent" WHERE action = 'resetClusterOverrides'
          AND "clusterId" = (SELECT id FROM "Cluster" WHERE name = 'prod-0')`,
    );
    expect(audit.rowCount).toBe(1);
  });

  it("a scoped token is not told an out-of-scope profile's name or selector by a refusal", async () => {
    const secret = await api.createToken('OPERATOR', { labelSelector: 'env=prod' });
    const as = api.as(secret);
    const CREATE = `mutation($input: CreateProfileInput!, $strategy: RolloutStrategyInput) {
      createProfile(input: $input, strategy: $strategy) { profile { name } } }`;
    await gql(CREATE, {
      input: { name: 'everywhere', selector: '', priority: 5, spec: { logLevel: 'error' } },
      strategy: { waves: [{ percent: 100 }], minHealthySeconds: 1 },
    });
    await rolloutsDone();
    // The name is taken (by a profile it cannot see): refused, and nothing about that profile said.
    const taken = await as(CREATE, {
      input: { name: 'everywhere', selector: 'env=prod', priority: 1, spec: {} },
    });
    expect(taken.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.name',
    });
    expect(taken.errors?.[0]?.message).not.toMatch(/already exists|selector|""/);
    // A same-priority conflict with it: refused, without its name or selector.
    const conflict = await as(CREATE, {
      input: { name: 'prod-logs', selector: 'env=prod', priority: 5, spec: { logLevel: 'debug' } },
    });
    expect(conflict.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.spec.logLevel',
    });
    expect(conflict.errors?.[0]?.message).toContain('outside the scope');
    expect(conflict.errors?.[0]?.message).not.toContain('everywhere');
    // The admin sees both named.
    const admin = await api.admin(CREATE, {
      input: { name: 'prod-logs', selector: 'env=prod', priority: 5, spec: { logLevel: 'debug' } },
    });
    expect(admin.errors?.[0]?.message).toContain('profile everywhere');
    // Export shows what the token sees: profiles within its scope, overrides of its clusters.
    await gql(
      `mutation($id: ID!, $o: JSON!) { setClusterOverrides(clusterId: $id, overrides: $o) { name } }`,
      { id: ids.get('dev-0'), o: { logLevel: 'debug' } },
    );
    const scoped = await runKfleetInProcess(['export'], { ...env(), KFLEET_TOKEN: secret });
    expect(scoped.code).toBe(0);
    expect(scoped.stdout.match(/^ {2}name: .*$/gm)).toEqual(['  name: prod']);
    const all = await kfleet(['export']);
    expect(all.stdout.match(/^ {2}name: .*$/gm)).toEqual([
      '  name: base',
      '  name: everywhere',
      '  name: prod',
      '  name: dev-0',
    ]);
  });

  it('membership sync waits for the profile writes’ lock (a relabel never races a createProfile)', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext('karpenter-fleet:profiles'))`);
      const relabel = api.admin(
        `mutation($id: ID!) { updateClusterLabels(clusterId: $id, labels: { env: "dev" }) { name } }`,
        { id: ids.get('prod-1') },
      );
      // The relabel's transaction is queued on the advisory lock, not past it.
      await eventually(
        async () => {
          const { rows } = await sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
          );
          return rows[0]!.n === 1 ? true : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 20, what: 'the relabel waiting for the profiles lock' },
      );
      await holder.query('COMMIT');
      const done = await relabel;
      expect(done.errors).toBeUndefined();
    } finally {
      await holder.end();
    }
  });

  it('stored overrides the schema no longer accepts are dropped when read, not fatal', async () => {
    await sql.query(
      `UPDATE "DesiredState" SET overrides = '{"logLevel":"debug","karpenterVersion":"0.37.0","retired":1}'
        WHERE "clusterId" = (SELECT id FROM "Cluster" WHERE name = 'dev-0')`,
    );
    expect((await overridesOf('dev-0')).overrides).toEqual({ logLevel: 'debug' });
    const e = await gql<{ cluster: { effectiveState: { overrides: string[] } } }>(
      `query($id: ID!) { cluster(id: $id) { effectiveState { overrides } } }`,
      { id: ids.get('dev-0') },
    );
    expect(e.cluster.effectiveState.overrides).toEqual(['logLevel']);
  });

  describe('kind: RolloutStrategy', () => {
    let sfleet: string;
    beforeAll(async () => {
      await rolloutsDone();
      sfleet = join(dir, 'sfleet');
      await mkdir(join(sfleet, 'strategies'), { recursive: true });
      await mkdir(join(sfleet, 'profiles'), { recursive: true });
      await writeFile(join(sfleet, 'strategies', 'dev-first.yaml'), CANARY);
      await writeFile(join(sfleet, 'strategies', 'spare.yaml'), SPARE);
      await writeFile(join(sfleet, 'profiles', 'staged.yaml'), STAGED);
    });

    it('an invalid strategy document is named with its file, document and field; nothing applied', async () => {
      const bad = join(dir, 'bad-strategy.yaml');
      await writeFile(
        bad,
        `${SPARE}---\n${HEADER}\nkind: RolloutStrategy\nmetadata: { name: broken }\nspec:\n  stages: [{ percent: 50 }, { percent: 20 }]\n`,
      );
      const before = await snapshot();
      const run = await kfleet(['apply', '-f', bad]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `${bad}: document 2 (RolloutStrategy broken): spec.stages.1.percent: percentages must increase from stage to stage`,
      );
      expect(run.stdout).toBe('');
      expect(await snapshot()).toEqual(before);
      expect(
        (await gql<{ rolloutStrategies: unknown[] }>(`{ rolloutStrategies { name } }`))
          .rolloutStrategies,
      ).toEqual([]);
    });

    it("a directory with a strategy and a profile naming it: the strategy is created first, the profile's rollout has its stages; a second apply changes nothing", async () => {
      const run = await kfleet(['apply', '-f', sfleet, ...STRATEGY]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Plan: 3 to create, 0 to update, 0 to delete, 0 unchanged\n');
      expect(run.stdout).toContain('+ rolloutstrategy/dev-first (create)\n');
      expect(run.stdout).toContain('    + spec.waveTimeoutSeconds: 60\n');
      expect(run.stdout).toMatch(
        /rolloutstrategy\/dev-first created\nrolloutstrategy\/spare created\nprofile\/staged created; rollout\/(\S+) RUNNING, 3 clusters/,
      );
      const id = /profile\/staged created; rollout\/(\S+)/.exec(run.stdout)![1]!;
      const { rollout } = await gql<{
        rollout: {
          strategy: { name: string | null; maxFailures: number };
          waves: {
            selector: string | null;
            minHealthySeconds: number;
            clusters: { clusterName: string }[];
          }[];
        };
      }>(
        `query($id: ID!) { rollout(id: $id) { strategy { name maxFailures }
           waves { selector minHealthySeconds clusters { clusterName } } } }`,
        { id },
      );
      expect(rollout.strategy).toEqual({ name: 'dev-first', maxFailures: 1 });
      // prod-1 was relabelled env=dev above: the selector stage takes both env=dev clusters.
      expect(
        rollout.waves.map((w) => ({
          selector: w.selector,
          minHealthySeconds: w.minHealthySeconds,
          clusters: w.clusters.map((c) => c.clusterName).sort(),
        })),
      ).toEqual([
        { selector: 'env=dev', minHealthySeconds: 1, clusters: ['dev-0', 'prod-1'] },
        { selector: null, minHealthySeconds: 2, clusters: ['prod-0'] },
      ]);
      await rolloutsDone();
      const before = await snapshot();
      const again = await kfleet(['apply', '-f', sfleet]);
      expect(again.stdout).toBe(
        'Plan: 0 to create, 0 to update, 0 to delete, 3 unchanged\nNo changes.\n',
      );
      expect(await snapshot()).toEqual(before);
    });

    it('export -> apply -> export: identical files including the strategies, and the apply changes nothing', async () => {
      const first = join(dir, 'sexport-1');
      const second = join(dir, 'sexport-2');
      expect((await kfleet(['export', '-o', first])).code).toBe(0);
      const files = await tree(first);
      expect(files['strategies/dev-first.yaml']).toBe(
        `${HEADER}\nkind: RolloutStrategy\nmetadata:\n  name: dev-first\nspec:\n  stages:\n    - selector: env=dev\n      minHealthySeconds: 1\n      pauseSeconds: 0\n      approval: false\n    - percent: 100\n      minHealthySeconds: 2\n      pauseSeconds: 0\n      approval: false\n  maxFailures: 1\n  waveTimeoutSeconds: 60\n`,
      );
      expect(Object.keys(files).filter((f) => f.startsWith('strategies/'))).toEqual([
        'strategies/dev-first.yaml',
        'strategies/spare.yaml',
      ]);
      const before = await snapshot();
      const apply = await kfleet(['apply', '-f', first, '--prune']);
      expect(apply.stdout).toContain('No changes.');
      expect(await snapshot()).toEqual(before);
      expect((await kfleet(['export', '-o', second])).code).toBe(0);
      expect(await tree(second)).toEqual(files);
      // The stream starts with the strategies: apply writes them before the profiles naming them.
      const stream = (await kfleet(['export'])).stdout;
      expect(
        stream.startsWith(
          `---\n${files['strategies/dev-first.yaml']}---\n${files['strategies/spare.yaml']}---\n`,
        ),
      ).toBe(true);
    });

    it('an edited strategy is updated with its field diff; --prune deletes a removed one (ADMIN), audited', async () => {
      await writeFile(
        join(sfleet, 'strategies', 'dev-first.yaml'),
        CANARY.replace('maxFailures: 1', 'maxFailures: 0'),
      );
      await unlink(join(sfleet, 'strategies', 'spare.yaml'));
      // Only the strategies directory: --prune then touches no profile.
      const run = await kfleet(['apply', '-f', join(sfleet, 'strategies'), '--prune']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        'Plan: 0 to create, 1 to update, 1 to delete, 0 unchanged\n' +
          '~ rolloutstrategy/dev-first (update)\n    ~ spec.maxFailures: 1 -> 0\n' +
          '- rolloutstrategy/spare (delete)\n    - spec.maxFailures: 0\n',
      );
      expect(run.stdout).toMatch(
        /\n {4}- spec\.waveTimeoutSeconds: 1800\nrolloutstrategy\/dev-first updated\nrolloutstrategy\/spare deleted\n$/,
      );
      const { rolloutStrategies } = await gql<{
        rolloutStrategies: { name: string; maxFailures: number }[];
      }>(`{ rolloutStrategies { name maxFailures } }`);
      expect(rolloutStrategies).toEqual([{ name: 'dev-first', maxFailures: 0 }]);
      const audit = await sql.query<{ action: string }>(
        `SELECT action FROM "AuditEvent" WHERE action LIKE '%RolloutStrategy' ORDER BY id`,
      );
      expect(audit.rows.map((r) => r.action)).toEqual([
        'createRolloutStrategy',
        'createRolloutStrategy',
        'updateRolloutStrategy',
        'deleteRolloutStrategy',
      ]);
      // A profile naming a strategy that does not exist is refused before anything is sent.
      await writeFile(
        join(sfleet, 'profiles', 'staged.yaml'),
        STAGED.replace('dev-first', 'spare'),
      );
      const refused = await kfleet(['apply', '-f', join(sfleet, 'profiles')]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        `${join(sfleet, 'profiles', 'staged.yaml')}: document 1 (Profile staged): metadata.annotations.fleet.karpenter.sh/rollout-strategy: no rollout strategy named spare in the fleet or the files`,
      );
    });

    it('--strategy <name> is the strategy of profile writes whose document names none; checked before anything is written', async () => {
      const plain = join(dir, 'plain.yaml');
      await writeFile(
        plain,
        `${HEADER}\nkind: Profile\nmetadata: { name: plain }\nspec: { selector: "", priority: 40, logLevel: info }\n`,
      );
      const before = await snapshot();
      const unknown = await kfleet(['apply', '-f', plain, '--strategy', 'nope']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(
        '--strategy nope: no rollout strategy of that name in the fleet or the files',
      );
      expect(await snapshot()).toEqual(before);
      const run = await kfleet(['apply', '-f', plain, '--strategy', 'dev-first']);
      expect(run.stderr).toBe('');
      const id = /profile\/plain created; rollout\/(\S+) RUNNING, 3 clusters/.exec(run.stdout)?.[1];
      expect(id).toBeDefined();
      const { rollout } = await gql<{
        rollout: { strategy: { name: string | null }; waves: { selector: string | null }[] };
      }>(`query($id: ID!) { rollout(id: $id) { strategy { name } waves { selector } } }`, { id });
      expect(rollout).toEqual({
        strategy: { name: 'dev-first' },
        waves: [{ selector: 'env=dev' }, { selector: null }],
      });
      await rolloutsDone();
    });

    it('a token that may not write strategies is refused before anything is written', async () => {
      const scoped = await api.createToken('OPERATOR', { labelSelector: 'env=prod' });
      await writeFile(
        join(sfleet, 'strategies', 'dev-first.yaml'),
        CANARY.replace('maxFailures: 1', 'maxFailures: 3'),
      );
      const before = await snapshot();
      const run = await runKfleetInProcess(['apply', '-f', join(sfleet, 'strategies')], {
        ...env(),
        KFLEET_TOKEN: scoped,
      });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(
        /may not write rollout strategies: that takes an unscoped OPERATOR or ADMIN token; nothing applied/,
      );
      expect(await snapshot()).toEqual(before);
      const { rolloutStrategy } = await gql<{ rolloutStrategy: { maxFailures: number } }>(
        `{ rolloutStrategy(name: "dev-first") { maxFailures } }`,
      );
      expect(rolloutStrategy.maxFailures).toBe(0);
    });
  });
});
