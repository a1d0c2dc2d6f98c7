import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { upstreamBinary } from '../support/upstream-binaries.js';

const run = promisify(execFile);
const DEMO = join(process.cwd(), 'dist', 'test', 'demo', 'main.js');

/**
 * `npm run demo` as a new user runs it (issue 47, point 5): the built demo as a process, one
 * emulated OpenShift-on-AWS cluster; it prints a kubectl command with an administrator
 * kubeconfig, and the real kubectl (built by the set-up) run as printed lists the NodePool, the
 * EC2NodeClass and the joined nodes, Ready as a kubelet reports them, their NodeClaims
 * Initialized only because their nodes are Ready.
 */
describe('npm run demo', () => {
  let demo: ChildProcess;
  let output = '';
  let kubeconfigDir: string;
  const database = `fleet_demo_e2e_${randomBytes(4).toString('hex')}`;
  const baseUrl = new URL(
    process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet',
  );

  beforeAll(async () => {
    if (!existsSync(DEMO)) throw new Error(`no built demo at ${DEMO}: run node scripts/build.mjs`);
    kubeconfigDir = mkdtempSync(join(tmpdir(), 'fleet-demo-kubeconfigs-'));
    const url = new URL(baseUrl);
    url.pathname = `/${database}`;
    // The demo makes its own admin token; one from this environment would be reused.
    const { FLEET_BOOTSTRAP_TOKEN: _unused, ...env } = process.env;
    demo = spawn(process.execPath, [DEMO], {
      env: {
        ...env,
        DATABASE_URL: url.toString(),
        API_PORT: '0',
        DEMO_CLUSTERS: '1',
        DEMO_KUBECONFIG_DIR: kubeconfigDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    demo.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    demo.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the demo did not come up in 300 s:\n${output}`)),
        300_000,
      );
      const check = setInterval(() => {
        if (output.includes('Ctrl-C stops everything.')) {
          clearInterval(check);
          clearTimeout(timer);
          resolve();
        }
      }, 200);
      demo.once('exit', (code) => {
        clearInterval(check);
        clearTimeout(timer);
        reject(new Error(`the demo exited with ${code}:\n${output}`));
      });
    });
  }, 320_000);

  afterAll(async () => {
    if (demo && demo.exitCode === null) {
      const exited = new Promise((r) => demo.once('exit', r));
      demo.kill('SIGINT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
      if (demo.exitCode === null) demo.kill('SIGKILL');
    }
    rmSync(kubeconfigDir, { recursive: true, force: true });
    const admin = new URL(baseUrl);
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${database}_demo" WITH (FORCE)`);
    await client.end();
  }, 60_000);

  it('prints a kubectl command whose administrator kubeconfig shows the NodePool, the EC2NodeClass and Ready nodes', async () => {
    const line = output
      .split('\n')
      .map((l) => l.trim())
      .find((l) => / --kubeconfig \S+ get nodepools\.karpenter\.sh,ec2nodeclasses,nodes$/.test(l));
    expect(line).toBeDefined();
    const [command, ...args] = line!.split(/\s+/);
    // The pinned kubectl the set-up built, not whatever the machine carries.
    expect(command).toBe(upstreamBinary('kubectl'));
    const kubeconfig = args[1]!;
    expect(kubeconfig.startsWith(kubeconfigDir)).toBe(true);
    // One kubeconfig per emulated API server, each listed.
    for (const name of ['ocp-east-1', 'capi-east', 'azure-east', 'mgmt-west', 'hcp-west-1']) {
      expect(output).toContain(join(kubeconfigDir, `${name}.kubeconfig`));
    }
    expect(readFileSync(kubeconfig, 'utf8')).toMatch(/certificate-authority-data/);

    const { stdout } = await run(command!, args, { timeout: 60_000 });
    expect(stdout).toMatch(/^nodepool\.karpenter\.sh\/general\b/m);
    expect(stdout).toMatch(/^ec2nodeclass\.karpenter\.k8s\.aws\/default\b/m);
    const nodeRows = stdout.split('\n').filter((l) => l.startsWith('node/'));
    expect(nodeRows).toHaveLength(3);
    for (const row of nodeRows) expect(row.split(/\s+/)[1]).toBe('Ready');

    // Ready as a kubelet makes it: conditions with heartbeats, allocatable, a renewed Lease.
    const nodes = JSON.parse(
      (await run(command!, ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'json'])).stdout,
    ) as {
      items: {
        metadata: { name: string };
        status: {
          allocatable?: Record<string, string>;
          conditions?: { type: string; status: string; lastHeartbeatTime?: string }[];
        };
      }[];
    };
    for (const node of nodes.items) {
      expect(node.status.allocatable).toMatchObject({ pods: '110' });
      const ready = node.status.conditions?.find((c) => c.type === 'Ready');
      expect(ready).toMatchObject({ status: 'True' });
      expect(ready?.lastHeartbeatTime).toBeDefined();
      const lease = await run(command!, [
        '--kubeconfig',
        kubeconfig,
        'get',
        'lease',
        '-n',
        'kube-node-lease',
        node.metadata.name,
        '-o',
        'jsonpath={.spec.holderIdentity}',
      ]);
      expect(lease.stdout).toBe(node.metadata.name);
    }
    // And Karpenter counts them initialized: every NodeClaim Initialized (its node is Ready).
    const claims = JSON.parse(
      (await run(command!, ['--kubeconfig', kubeconfig, 'get', 'nodeclaims', '-o', 'json'])).stdout,
    ) as { items: { status: { conditions: { type: string; status: string }[] } }[] };
    expect(claims.items).toHaveLength(3);
    for (const claim of claims.items) {
      expect(claim.status.conditions).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: 'Initialized', status: 'True' }),
          expect.objectContaining({ type: 'Ready', status: 'True' }),
        ]),
      );
    }
  }, 120_000);
});
