import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { KFLEET, generalNodePoolYaml, type KfleetRun } from './kfleet-process.js';
import { startApi, type RunningApi } from '../api/start-api.js';

const NODEPOOL = generalNodePoolYaml(100);

describe('kfleet, the built CLI as a real process against the real API', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let dir: string;

  /** Runs `node dist/.../main.js args`; the token defaults to the bootstrap admin's. */
  const kfleet = (args: string[], token: string | null = api.adminToken): Promise<KfleetRun> => {
    const env: NodeJS.ProcessEnv = { ...process.env, KFLEET_API_URL: api.url };
    delete env.KFLEET_TOKEN;
    if (token) env.KFLEET_TOKEN = token;
    return new Promise((resolve) => {
      execFile(process.execPath, [KFLEET, ...args], { env }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  };
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  beforeAll(async () => {
    // `npm test` builds first; a bare jest run on a fresh clone still gets a CLI to run.
    if (!existsSync(KFLEET))
      execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
    dir = mkdtempSync(join(tmpdir(), 'kfleet-'));
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
  });

  afterAll(async () => {
    await api?.app.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers clusters, warns that the credentials are shown once, writes the manifest', async () => {
    const manifest = join(dir, 'ocp-east.yaml');
    const [east, west] = await Promise.all([
      kfleet([
        'clusters',
        'register',
        'ocp-east',
        '--platform',
        'AWS',
        '--region',
        'us-east-1',
        '--label',
        'env=prod',
        '--label',
        'team=core',
        '--manifest-out',
        manifest,
      ]),
      kfleet([
        'clusters',
        'register',
        'ocp-west',
        '--platform',
        'aws',
        '--region',
        'us-west-2',
        '--label',
        'env=staging',
      ]),
    ]);
    expect(east).toMatchObject({ code: 0, stdout: `bootstrap manifest written to ${manifest}\n` });
    expect(east.stderr).toMatch(/cluster\/ocp-east registered/);
    expect(east.stderr).toMatch(/WARNING: .*shown this once/);
    const written = readFileSync(manifest, 'utf8');
    expect(written).toMatch(/kind: Deployment/);
    expect(written).toMatch(/REPORT_TOKEN: /);

    expect(west.code).toBe(0);
    expect(west.stdout).toMatch(/kind: Secret/);
  });

  it('lists every cluster as an aligned table, and filters', async () => {
    const [all, prod] = await Promise.all([
      kfleet(['clusters', 'list']),
      kfleet(['clusters', 'list', '-l', 'env=prod', '-o', 'json']),
    ]);
    expect(all.code).toBe(0);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines[0]!.split(/\s+/)).toEqual([
      'NAME',
      'PLATFORM',
      'REGION',
      'KARPENTER',
      'HEALTH',
      'GEN',
      'OBSERVED',
      'AGE',
    ]);
    // One health state per cluster (issue 47): never reported is Stale, not also out of sync.
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 7))).toEqual([
      ['ocp-east', 'AWS', 'us-east-1', 'Disabled', 'Stale', '1', '0'],
      ['ocp-west', 'AWS', 'us-west-2', 'Disabled', 'Stale', '1', '0'],
    ]);
    // Columns line up: every row's REGION starts where the header's does.
    const at = lines[0]!.indexOf('REGION');
    expect(lines.slice(1).every((l) => /^us-/.test(l.slice(at)))).toBe(true);

    expect((JSON.parse(prod.stdout) as { name: string }[]).map((c) => c.name)).toEqual([
      'ocp-east',
    ]);
  });

  it('enables Karpenter with the Cluster Autoscaler disabled, applies a NodePool, get shows the generation', async () => {
    const enable = await kfleet([
      'karpenter',
      'enable',
      'ocp-east',
      '--cas',
      'disable',
      '--feature-gate',
      'Drift=true',
      '--web-identity-role',
      'arn:aws:iam::123456789012:role/ocp-east-karpenter',
    ]);
    expect(enable).toMatchObject({ code: 0, stderr: '' });
    expect(enable.stdout).toMatch(/karpenter enabled, cluster autoscaler DISABLE \(generation 2/);

    const apply = await kfleet(['nodepools', 'apply', 'ocp-east', '-f', file('np.yaml', NODEPOOL)]);
    expect(apply).toMatchObject({ code: 0, stderr: '' });
    expect(apply.stdout).toMatch(/nodepool\/general applied \(generation 3/);

    const get = await kfleet(['clusters', 'get', 'ocp-east', '-o', 'json']);
    expect(get.code).toBe(0);
    const cluster = JSON.parse(get.stdout) as {
      id: string;
      karpenter: Record<string, unknown>;
      nodePools: { name: string; spec: { limits: unknown } }[];
    };
    expect(cluster.karpenter).toMatchObject({
      enabled: true,
      generation: 3,
      clusterAutoscalerMode: 'DISABLE',
      featureGates: { Drift: true },
      webIdentityRoleArn: 'arn:aws:iam::123456789012:role/ocp-east-karpenter',
    });
    expect(cluster.nodePools.map((p) => [p.name, p.spec.limits])).toEqual([
      ['general', { cpu: '100' }],
    ]);
    // One health state, generation sync apart, and the NodeClaims (none reported: no sidecar).
    expect(cluster).toMatchObject({
      healthState: 'STALE',
      generationSync: 'applied generation 0 of 3',
      status: { nodeClaims: null },
    });

    // By ID too, and as YAML by default.
    const [byId, listed] = await Promise.all([
      kfleet(['clusters', 'get', cluster.id]),
      kfleet(['clusters', 'list', '--enabled', '--out-of-sync']),
    ]);
    expect(byId.stdout).toMatch(/^ {2}generation: 3$/m);
    expect(listed.stdout).toMatch(/\nocp-east +AWS +us-east-1 +Enabled +Stale +3 +0 /);
  });

  it('relabels with key=value and key-', async () => {
    const res = await kfleet(['clusters', 'label', 'ocp-east', 'tier=gold', 'team-']);
    expect(res).toMatchObject({
      code: 0,
      stdout: 'cluster/ocp-east labeled: env=prod,tier=gold\n',
    });
  });

  it('exits 2 naming the field for bad input, never with a stack trace', async () => {
    const invalid = NODEPOOL.replace('limits:', 'weight: 101\n  limits:');
    // Independent invocations run side by side: process start-up dominates this suite's time.
    const [selector, pool, bare, cas] = await Promise.all([
      kfleet(['clusters', 'list', '-l', 'env in (prod']),
      kfleet(['nodepools', 'apply', 'ocp-east', '-f', file('bad.yaml', invalid)]),
      kfleet(['nodepools', 'apply', 'ocp-east', '-f', file('spec.yaml', 'limits: {cpu: "1"}\n')]),
      kfleet(['karpenter', 'enable', 'ocp-east', '--cas', 'off']),
    ]);
    const role = await kfleet([
      'karpenter',
      'enable',
      'ocp-east',
      '--web-identity-role',
      'arn:aws:iam::123456789012:user/karpenter',
    ]);
    expect(role.code).toBe(2);
    expect(role.stderr).toMatch(
      /must be an IAM role ARN.*\(code: BAD_USER_INPUT, field: input\.webIdentityRoleArn\)\n$/,
    );
    expect(selector.code).toBe(2);
    expect(selector.stderr).toMatch(
      /^error: .*\(code: BAD_USER_INPUT, field: filter\.labelSelector\)\n$/,
    );
    expect(pool.code).toBe(2);
    expect(pool.stderr).toMatch(/code: BAD_USER_INPUT, field: input\.spec\.weight\)/);
    expect(bare).toMatchObject({
      code: 2,
      stderr: 'error: a bare NodePool spec needs --name (field: --name)\n',
    });
    expect(cas.code).toBe(2);
    for (const run of [selector, pool, bare, cas]) expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 3 for a cluster that does not exist', async () => {
    const res = await kfleet(['karpenter', 'disable', 'no-such-cluster']);
    expect(res).toMatchObject({
      code: 3,
      stderr: 'error: cluster no-such-cluster not found (code: NOT_FOUND)\n',
    });
  });

  it('exits 4 when a viewer token tries a mutation, or no token is given', async () => {
    const viewer = await api.createToken('VIEWER');
    const [read, denied, anonymous] = await Promise.all([
      kfleet(['clusters', 'list'], viewer),
      kfleet(['karpenter', 'disable', 'ocp-east'], viewer),
      kfleet(['summary'], null),
    ]);
    expect(read.code).toBe(0);
    expect(denied.code).toBe(4);
    expect(denied.stderr).toMatch(/requires role OPERATOR.*\(code: FORBIDDEN\)/);
    expect(anonymous.code).toBe(4);
    expect(anonymous.stderr).toMatch(/set KFLEET_TOKEN or pass --token \(code: UNAUTHENTICATED\)/);
  });

  it('creates, lists and revokes tokens; the summary counts the fleet', async () => {
    const created = await kfleet([
      'tokens',
      'create',
      'ci',
      '--role',
      'operator',
      '--selector',
      'env=prod',
      '--expires-in',
      '30d',
    ]);
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(created.stderr).toMatch(/WARNING: the secret below is shown this once/);
    const [asCi, list] = await Promise.all([
      kfleet(['karpenter', 'enable', 'ocp-east', '--log-level', 'debug'], secret),
      kfleet(['tokens', 'list', '-o', 'json']),
    ]);
    expect(asCi.code).toBe(0);
    const ci = (JSON.parse(list.stdout) as { id: string; name: string; role: string }[]).find(
      (t) => t.name === 'ci',
    );
    expect(ci?.role).toBe('OPERATOR');
    expect((await kfleet(['tokens', 'revoke', ci!.id])).stdout).toBe('token/ci revoked\n');

    const [revoked, summary] = await Promise.all([
      kfleet(['summary'], secret),
      kfleet(['summary', '-o', 'json']),
    ]);
    expect(revoked.code).toBe(4);
    expect(JSON.parse(summary.stdout)).toMatchObject({
      clusters: 2,
      karpenterEnabled: 1,
      clusterAutoscalerDisabled: 1,
      byHealth: { healthy: 0, progressing: 0, degraded: 0, stale: 2, paused: 0 },
    });
  });

  it('lists the clusters of one management cluster or the drifted ones, and refuses a name that cannot be a cluster', async () => {
    const registered = await kfleet([
      'clusters',
      'register',
      'hcp-alpha',
      '--platform',
      'aws',
      '--region',
      'us-east-1',
      '--topology',
      'hosted',
      '--management-cluster',
      'mgmt-east',
      '--hcp-namespace',
      'clusters-alpha',
    ]);
    expect(registered.code).toBe(0);
    const [ofMgmt, ofOther, bad, drifted] = await Promise.all([
      kfleet(['clusters', 'list', '--management-cluster', 'mgmt-east', '-o', 'json']),
      kfleet(['clusters', 'list', '--management-cluster', 'mgmt-west', '-o', 'json']),
      kfleet(['clusters', 'list', '--management-cluster', 'Mgmt_East']),
      // None of these clusters reports drift (none has a sidecar).
      kfleet(['clusters', 'list', '--drifted', '-o', 'json']),
    ]);
    expect(JSON.parse(drifted.stdout)).toEqual([]);
    expect((JSON.parse(ofMgmt.stdout) as { name: string }[]).map((c) => c.name)).toEqual([
      'hcp-alpha',
    ]);
    expect(JSON.parse(ofOther.stdout)).toEqual([]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /must consist of lower case alphanumeric characters.*\(code: BAD_USER_INPUT, field: filter\.managementCluster\)\n$/,
    );
  });
});
