import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { KFLEET, runKfleet, runKfleetInProcess, type KfleetRun } from './kfleet-process.js';
import { startApi, type RunningApi } from '../api/start-api.js';

describe('kfleet: log in once, every read, the rest of the API (built CLI, real API)', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let dir: string;
  let config: string;

  const run = (args: string[], env: Record<string, string>, input?: string) =>
    runKfleet(args, { PATH: process.env.PATH ?? '', HOME: dir, ...env }, input);
  /** As the admin, through the environment (no config file involved). */
  const admin = (args: string[]) =>
    run(args, {
      KFLEET_API_URL: api.url,
      KFLEET_TOKEN: api.adminToken,
      KFLEET_CONFIG: join(dir, 'unused'),
    });
  /** Through the config file only: no token or URL in the environment. */
  const logged = (args: string[], env: Record<string, string> = {}, input?: string) =>
    run(args, { KFLEET_CONFIG: config, ...env }, input);
  /** As `logged`, in this process: for the output matrix (see runKfleetInProcess). */
  const loggedInProcess = (args: string[]) =>
    runKfleetInProcess(args, { PATH: process.env.PATH ?? '', HOME: dir, KFLEET_CONFIG: config });
  const mode = (path: string) => statSync(path).mode & 0o777;

  beforeAll(async () => {
    if (!existsSync(KFLEET))
      execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
    dir = mkdtempSync(join(tmpdir(), 'kfleet-login-'));
    config = join(dir, 'conf.d', 'kfleet', 'config');
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
    for (const [name, env] of [
      ['ocp-east', 'prod'],
      ['ocp-west', 'staging'],
    ] as const) {
      const res = await api.admin(
        `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } } }`,
        {
          input: {
            name,
            platform: 'AWS',
            region: 'us-east-1',
            topology: 'STANDALONE',
            labels: { env },
          },
        },
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
    }
  });

  afterAll(async () => {
    await api?.app.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs in once (token flag or stdin), keeps contexts in a 0600 file, whoami shows the token', async () => {
    const viewer = await api.createToken('VIEWER', {
      name: 'prod-reader',
      labelSelector: 'env=prod',
      expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    });
    const first = await logged(['login', api.url, '--token', api.adminToken, '--context', 'admin']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^Logged in to http:\/\/127\.0\.0\.1:\d+ as bootstrap/);
    expect(mode(config)).toBe(0o600);
    expect(mode(join(dir, 'conf.d', 'kfleet'))).toBe(0o700);

    // The token on stdin, as a secret manager pipes it.
    const second = await logged(['login', api.url, '--context', 'reader'], {}, `${viewer}\n`);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/as prod-reader \(VIEWER, clusters env=prod\)/);
    expect(second.stdout).toMatch(/Context "reader" is now current/);

    const who = await logged(['whoami', '-o', 'json']);
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({
      name: 'prod-reader',
      role: 'VIEWER',
      scoped: true,
      labelSelector: 'env=prod',
      expiresAt: expect.stringMatching(/^\d{4}-/),
    });
    const table = await logged(['whoami']);
    expect(table.stdout.split('\n')[1]).toMatch(
      /^prod-reader +VIEWER +env=prod +\d{4}-.* +http:\/\/127\.0\.0\.1:\d+ +reader$/,
    );

    // No token in the environment, yet every command is authenticated: the reader sees its
    // scope only, and may not change anything.
    const [list, denied] = await Promise.all([
      logged(['clusters', 'list', '-o', 'name']),
      logged(['karpenter', 'disable', 'ocp-east']),
    ]);
    expect(list).toMatchObject({ code: 0, stdout: 'cluster/ocp-east\n' });
    expect(denied.code).toBe(4);

    const contexts = await logged(['config', 'get-contexts']);
    expect(
      contexts.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split(/\s+/).slice(0, 3)),
    ).toEqual([
      ['CURRENT', 'NAME', 'SERVER'],
      ['', 'admin', api.url],
      ['*', 'reader', api.url],
    ]);
    const asJson = await logged(['config', 'get-contexts', '-o', 'json']);
    expect(asJson.stdout).not.toContain(viewer);
    expect(asJson.stdout).not.toContain(api.adminToken);
    expect(readFileSync(config, 'utf8')).toContain(viewer);
  });

  it('switches contexts; --context, KFLEET_TOKEN and --token still override the current one', async () => {
    const viewer = await api.createToken('VIEWER', { name: 'env-reader' });
    expect((await logged(['config', 'use-context', 'admin'])).stdout).toBe(
      'Switched to context "admin".\n',
    );
    const name = async (args: string[], env: Record<string, string> = {}) =>
      (
        JSON.parse((await logged([...args, 'whoami', '-o', 'json'], env)).stdout) as {
          name: string;
        }
      ).name;
    const [current, byFlag, byEnvContext, byEnvToken, byTokenFlag] = await Promise.all([
      name([]),
      name(['--context', 'reader']),
      name([], { KFLEET_CONTEXT: 'reader' }),
      name([], { KFLEET_TOKEN: viewer }),
      name(['--token', viewer]),
    ]);
    expect([current, byFlag, byEnvContext, byEnvToken, byTokenFlag]).toEqual([
      expect.stringMatching(/^bootstrap/),
      'prod-reader',
      'prod-reader',
      'env-reader',
      'env-reader',
    ]);
    expect((await logged(['config', 'current-context'])).stdout).toBe('admin\n');

    // A context's token never goes to another server: --api elsewhere sends none.
    const elsewhere = await logged(['--api', 'http://127.0.0.1:9', 'whoami']);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/cannot reach the fleet API at http:\/\/127\.0\.0\.1:9/);

    // A file made world-readable by hand is 0600 again after the next write.
    chmodSync(config, 0o644);
    await logged(['config', 'use-context', 'reader']);
    expect(mode(config)).toBe(0o600);

    const [unknown, badLogin] = await Promise.all([
      logged(['config', 'use-context', 'nope']),
      logged(['login', api.url, '--token', 'not-a-token', '--context', 'broken']),
    ]);
    expect(unknown).toMatchObject({ code: 3 });
    expect(unknown.stderr).toMatch(/context nope not found \(known: admin, reader\)/);
    expect(badLogin.code).toBe(4);
    // A rejected token is never stored.
    expect(readFileSync(config, 'utf8')).not.toContain('broken');

    expect((await logged(['config', 'delete-context', 'reader'])).code).toBe(0);
    // No current context now: the server comes from the environment, and without a token
    // the API refuses with the way to log in.
    const gone = await logged(['whoami'], { KFLEET_API_URL: api.url });
    expect(gone.code).toBe(4);
    expect(gone.stderr).toMatch(/run kfleet login, set KFLEET_TOKEN or pass --token/);
    await logged(['config', 'use-context', 'admin']);
  });

  it('prints every read as table, wide, json, yaml and name; json and yaml are the same API object', async () => {
    const reads = [
      ['clusters', 'list'],
      ['clusters', 'get', 'ocp-east'],
      ['clusters', 'activity', 'ocp-east'],
      ['clusters', 'runs', 'ocp-east'],
      ['clusters', 'csr', 'ocp-east'],
      ['clusters', 'history', 'ocp-east', '--since', '1h'],
      ['nodepools', 'list', 'ocp-east'],
      ['nodeclass', 'show', 'ocp-east'],
      ['rollouts', 'list'],
      ['tokens', 'list'],
      ['dead-letters', 'list'],
      ['summary'],
      ['whoami'],
      ['version'],
      ['config', 'get-contexts'],
    ];
    const changing = new Set(['clusters history', 'whoami', 'version', 'tokens list']);
    for (const read of reads) {
      const [table, wide, json, yaml, name] = (await Promise.all(
        ['table', 'wide', 'json', 'yaml', 'name'].map((o) => loggedInProcess([...read, '-o', o])),
      )) as [KfleetRun, KfleetRun, KfleetRun, KfleetRun, KfleetRun];
      const what = read.join(' ');
      for (const res of [table, wide, json, yaml, name])
        expect([what, res.code, res.stderr]).toEqual([what, 0, expect.not.stringMatching(/error/)]);
      const parsed: unknown = JSON.parse(json.stdout);
      if (!changing.has(what)) expect([what, parseYaml(yaml.stdout)]).toEqual([what, parsed]);
      expect([what, name.stdout]).toEqual([what, expect.stringMatching(/^([a-z]+\/\S+\n)*$/)]);
      const columns = (r: KfleetRun) => r.stdout.split('\n')[0]!.split(/\s+/).length;
      expect([what, columns(wide) >= columns(table)]).toEqual([what, true]);
    }
    const cluster = JSON.parse(
      (await logged(['clusters', 'get', 'ocp-east', '-o', 'json'])).stdout,
    ) as Record<string, unknown>;
    // The API's own field names, not a CLI rendering of them.
    expect(Object.keys(cluster)).toEqual(
      expect.arrayContaining(['id', 'uid', 'name', 'karpenter', 'status', 'nodePools', 'labels']),
    );
    const wide = await logged(['clusters', 'list', '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]!.split(/\s+/).slice(-4)).toEqual([
      'TOPOLOGY',
      'CAS',
      'LAST-REPORT',
      'LABELS',
    ]);
    expect(wide.stdout).toMatch(/\nocp-east .*STANDALONE +KEEP +<never> +env=prod\n/);
  });

  it('filters lists on the API: -l, --condition, --sort-by', async () => {
    const [prod, none, byCreated] = await Promise.all([
      logged(['clusters', 'list', '-l', 'env in (prod)', '-o', 'name']),
      logged(['clusters', 'list', '--condition', 'Degraded=True', '-o', 'json']),
      logged(['clusters', 'list', '--sort-by', 'created', '-o', 'name']),
    ]);
    expect(prod.stdout).toBe('cluster/ocp-east\n');
    expect(JSON.parse(none.stdout)).toEqual([]);
    expect(byCreated.stdout.split('\n').filter(Boolean).sort()).toEqual([
      'cluster/ocp-east',
      'cluster/ocp-west',
    ]);
  });

  it('sets and shows NodeClass overrides, the API naming a bad field', async () => {
    const set = await logged([
      'nodeclass',
      'set',
      'ocp-east',
      '--tag',
      'team=core',
      '--tag',
      'cost=42',
    ]);
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toMatch(/^cluster\/ocp-east nodeclass overrides set \(generation 2,/);
    const more = await logged(['nodeclass', 'set', 'ocp-east', '--tag', 'cost=43']);
    expect(more.code).toBe(0);
    const shown = await logged(['nodeclass', 'show', 'ocp-east', '-o', 'json']);
    expect(JSON.parse(shown.stdout)).toEqual({ tags: { team: 'core', cost: '43' } });
    const table = await logged(['nodeclass', 'show', 'ocp-east', '-o', 'table']);
    expect(table.stdout).toMatch(
      /^CLUSTER +OVERRIDE +VALUE\nocp-east +tags +\{"cost":"43","team":"core"\}\n$/,
    );

    const bad = join(dir, 'overrides.yaml');
    writeFileSync(bad, 'metadataOptions:\n  httpTokens: sometimes\n');
    const rejected = await logged(['nodeclass', 'set', 'ocp-east', '-f', bad]);
    expect(rejected.code).toBe(2);
    expect(rejected.stderr).toMatch(
      /\(code: BAD_USER_INPUT, field: input\.metadataOptions\.httpTokens\)/,
    );
    writeFileSync(bad, 'tags: {a: b}\nspec: {}\n');
    expect((await logged(['nodeclass', 'set', 'ocp-east', '-f', bad])).stderr).toBe(
      'error: spec: not a NodeClass override (expected blockDeviceMappings, tags, metadataOptions, kubelet) (field: spec)\n',
    );
    expect((await logged(['nodeclass', 'set', 'ocp-east', '--clear'])).code).toBe(0);
    expect(
      JSON.parse((await logged(['nodeclass', 'show', 'ocp-east', '-o', 'json'])).stdout),
    ).toEqual({});
  });

  it('rotates credentials (the new manifest once, 0600) and deregisters with --yes', async () => {
    await admin(['clusters', 'register', 'ocp-temp', '--platform', 'AWS', '--region', 'eu-west-1']);
    const manifest = join(dir, 'rotated.yaml');
    const rotated = await logged([
      'clusters',
      'rotate-credentials',
      'ocp-temp',
      '--manifest-out',
      manifest,
    ]);
    expect(rotated.code).toBe(0);
    expect(rotated.stderr).toMatch(/credentials rotated; the previous ones stop working at \d{4}-/);
    expect(rotated.stderr).toMatch(/WARNING: .*shown this\s+once/);
    expect(readFileSync(manifest, 'utf8')).toMatch(/REPORT_TOKEN: /);
    expect(mode(manifest)).toBe(0o600);

    // --grace: the API's gracePeriodSeconds; 0 ends the previous credentials at once.
    const validUntil = (stderr: string) =>
      Date.parse(/stop working at (\S+)/.exec(stderr)?.[1] ?? 'none');
    const before = Date.now();
    const [graced, ended] = [
      await logged([
        'clusters',
        'rotate-credentials',
        'ocp-temp',
        '--grace',
        '2h',
        '--manifest-out',
        manifest,
      ]),
      await logged([
        'clusters',
        'rotate-credentials',
        'ocp-temp',
        '--grace',
        '0',
        '--manifest-out',
        manifest,
      ]),
    ];
    const after = Date.now();
    expect([graced.code, ended.code]).toEqual([0, 0]);
    expect(validUntil(graced.stderr)).toBeGreaterThanOrEqual(before + 2 * 3600_000 - 1000);
    expect(validUntil(graced.stderr)).toBeLessThanOrEqual(after + 2 * 3600_000);
    expect(validUntil(ended.stderr)).toBeLessThanOrEqual(after);
    expect(
      await logged(['clusters', 'rotate-credentials', 'ocp-temp', '--grace', 'soon']),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--grace soon: expected a positive duration'),
    });
    const tooLong = await logged(['clusters', 'rotate-credentials', 'ocp-temp', '--grace', '8d']);
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.stderr).toMatch(/gracePeriodSeconds/);

    const unconfirmed = await logged(['clusters', 'deregister', 'ocp-temp']);
    expect(unconfirmed.code).toBe(2);
    const done = await logged(['clusters', 'deregister', 'ocp-temp', '--yes']);
    expect(done).toMatchObject({ code: 0, stdout: 'cluster/ocp-temp deregistered\n' });
    expect((await logged(['clusters', 'get', 'ocp-temp'])).code).toBe(3);
  });

  it('lists and redrives dead letters as an admin only', async () => {
    const viewer = await api.createToken('VIEWER');
    const [empty, all, denied, missing] = await Promise.all([
      logged(['dead-letters', 'list']),
      logged(['dead-letters', 'redrive', '--all']),
      logged(['dead-letters', 'list'], { KFLEET_TOKEN: viewer }),
      logged(['dead-letters', 'redrive', 'no-such-letter']),
    ]);
    expect(empty).toMatchObject({ code: 0, stdout: '', stderr: 'No dead letters.\n' });
    expect(all).toMatchObject({ code: 0, stdout: '0 dead letters redriven\n' });
    expect(denied.code).toBe(4);
    expect(denied.stderr).toMatch(/requires role ADMIN/);
    expect(missing.code).toBe(3);
  });

  it('prints the client and server versions', async () => {
    const [json, flag, client] = await Promise.all([
      logged(['version', '-o', 'json']),
      logged(['--version']),
      logged(['version', '--client', '--api', 'http://127.0.0.1:9']),
    ]);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(JSON.parse(json.stdout)).toEqual({
      client: { version: pkg.version },
      server: { version: pkg.version, contractVersion: expect.any(Number), url: api.url },
    });
    expect(flag.stdout).toBe(`${pkg.version}\n`);
    expect(client).toMatchObject({ code: 0 });
    const down = await logged(['version', '--api', 'http://127.0.0.1:9']);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/^COMPONENT +VERSION.*\nclient +0\.1\.0/);
    expect(down.stderr).toMatch(
      /cannot read the server version at http:\/\/127\.0\.0\.1:9\/version/,
    );
  });

  it('completes commands, flags and cluster names from the API in bash', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'kfleet'), `#!/bin/sh\nexec "${process.execPath}" "${KFLEET}" "$@"\n`, {
      mode: 0o755,
    });
    const script = (await logged(['completion', 'bash'])).stdout;
    writeFileSync(join(dir, 'kfleet.bash'), script);
    const complete = (words: string[]) =>
      new Promise<string[]>((resolve, reject) => {
        const line = words.map((w) => `'${w}'`).join(' ');
        execFile(
          'bash',
          [
            '-c',
            `source "${join(dir, 'kfleet.bash')}" && complete -p kfleet >/dev/null && COMP_WORDS=(${line}) && COMP_CWORD=${words.length - 1} && _kfleet && printf '%s\\n' "\${COMPREPLY[@]}"`,
          ],
          { env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir, KFLEET_CONFIG: config } },
          (err, stdout, stderr) =>
            err
              ? reject(new Error(`${err.message}\n${stderr}`))
              : resolve(stdout.split('\n').filter(Boolean)),
        );
      });
    expect(await complete(['kfleet', 'clu'])).toEqual(['clusters']);
    expect(await complete(['kfleet', 'rollouts', 'w'])).toEqual(['watch']);
    expect(await complete(['kfleet', 'clusters', 'list', '--out'])).toEqual([
      '--out-of-sync',
      '--output',
    ]);
    expect(await complete(['kfleet', 'clusters', 'get', 'ocp-'])).toEqual(['ocp-east', 'ocp-west']);
    expect(await complete(['kfleet', 'karpenter', 'enable', 'ocp-e'])).toEqual(['ocp-east']);
    expect(await complete(['kfleet', 'config', 'use-context', ''])).toEqual(['admin']);
  });
});
