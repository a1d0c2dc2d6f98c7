import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestDatabase,
  eventually,
  NodeLaunchSimulator,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
// Tests boot the real worker in process; the apps-never-import-apps rule is about app code.
import { startWorker } from '../../apps/worker/src/main.js';
import { KFLEET, generalNodePoolYaml, runKfleet } from './kfleet-process.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { FakeSidecar } from '../rollouts/fake-sidecar.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';

/**
 * The live half of kfleet: `--wait`, `watch` and `--watch` over the API's subscriptions, and the
 * history and CSR decisions of a cluster run the way `npm run demo` runs ocp-east-1 (an emulated
 * OpenShift-on-AWS cluster, the real sidecar process, nodes launched and their CSRs approved by
 * the sidecar's approver). Rollouts use report-level sidecars (test/rollouts/fake-sidecar.ts) so
 * a cluster can be made Degraded on cue.
 */
describe('kfleet live: --wait, watch, history and CSRs (built CLI, real API, worker, sidecar)', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let prefix: string;
  let dir: string;
  let east: EmulatedCluster;
  let sidecar: RunningProcess;
  let simulator: NodeLaunchSimulator;
  const fakes = new Map<string, FakeSidecar>();
  const children: ChildProcessWithoutNullStreams[] = [];

  const env = () => ({
    PATH: process.env.PATH ?? '',
    HOME: dir,
    KFLEET_API_URL: api.url,
    KFLEET_TOKEN: api.adminToken,
  });
  const kfleet = (args: string[]) => runKfleet(args, env());
  /** A long-running kfleet (a watch): its output so far, and a way to wait for a line. */
  const background = (args: string[]) => {
    const child = spawn(process.execPath, [KFLEET, ...args], { env: env() });
    children.push(child);
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
    const exited = new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
    return {
      out,
      exited,
      until: (re: RegExp, what: string) =>
        eventually(() => (re.test(out.stdout) ? true : undefined), {
          timeoutMs: 45_000,
          intervalMs: 100,
          what: `${what}; stdout so far: ${out.stdout} stderr: ${out.stderr}`,
        }),
      stop: () => child.kill('SIGINT'),
    };
  };
  const register = async (name: string, labels: Record<string, string>) => {
    const res = await api.admin<{
      registerCluster: { reportToken: string; cluster: { uid: string } };
    }>(
      `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { reportToken cluster { uid } } }`,
      { input: { name, topology: 'STANDALONE', platform: 'AWS', region: 'us-east-1', labels } },
    );
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    const { reportToken, cluster } = res.data.registerCluster;
    fakes.set(name, new FakeSidecar(cluster.uid, reportToken, api.url, prefix));
  };

  beforeAll(async () => {
    if (!existsSync(KFLEET)) throw new Error(`${KFLEET} is missing: run node scripts/build.mjs`);
    dir = mkdtempSync(join(tmpdir(), 'kfleet-live-'));
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, STALE_AFTER_SECONDS: '60' });
    worker = await startWorker({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      ROLLOUT_TICK_MS: '200',
    });
    // ocp-east-1, as the demo runs it.
    east = await startEmulatedCluster();
    const registered = await registerCluster(api.admin, {
      name: 'ocp-east-1',
      labels: { env: 'staging' },
    });
    sidecar = startSidecarProcess(
      east,
      registered,
      { apiUrl: api.url, queuePrefix: prefix },
      { LOG_LEVEL: 'warn', HEARTBEAT_SECONDS: '2' },
      'sidecar ocp-east-1',
    );
    for (const name of ['r-0', 'r-1', 'r-2']) await register(name, { wave: 'r' });
    await register('stuck-0', { wave: 'stuck' });
    await eventually(
      async () => {
        const res = await api.admin<{
          clusters: { nodes: { status: { observedGeneration: number } }[] };
        }>(`{ clusters(first: 10) { nodes { status { observedGeneration } } } }`);
        return res.data?.clusters.nodes.every((c) => c.status.observedGeneration >= 1)
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, what: 'every cluster to report generation 1' },
    );
    // stuck-0's sidecar goes away: its cluster never reports a newer generation.
    await fakes.get('stuck-0')!.stop();
    fakes.delete('stuck-0');
  }, 180_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    simulator?.stop();
    await Promise.all([...fakes.values()].map((f) => f.stop()));
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await east?.stop();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('karpenter enable --wait returns once the cluster reports the new generation', async () => {
    const enable = await kfleet([
      'karpenter',
      'enable',
      'ocp-east-1',
      '--cas',
      'disable',
      '--wait',
      '--timeout',
      '2m',
    ]);
    expect(enable.stderr).toBe('');
    expect(enable.code).toBe(0);
    expect(enable.stdout).toMatch(/karpenter enabled, cluster autoscaler DISABLE \(generation 2,/);
    expect(enable.stdout).toMatch(/\ncluster\/ocp-east-1 reports generation ([2-9]|\d\d+)\n$/);
  }, 150_000);

  it('karpenter enable --wait times out (exit 6) with the cluster conditions when it never gets there', async () => {
    const res = await kfleet(['karpenter', 'enable', 'stuck-0', '--wait', '--timeout', '4s']);
    expect(res.code).toBe(6);
    expect(res.stdout).toMatch(/karpenter enabled/);
    expect(res.stderr).toMatch(
      /^error: cluster\/stuck-0 still reports generation 1, not 2, after 4s; its conditions:\nTYPE +STATUS +REASON +MESSAGE\nAvailable +True/,
    );
  });

  it('shows the CSR decisions of nodes that joined, and the health history with a chart', async () => {
    const pool = join(dir, 'nodepool.yaml');
    writeFileSync(pool, generalNodePoolYaml(64));
    const apply = await kfleet(['nodepools', 'apply', 'ocp-east-1', '-f', pool]);
    expect(apply.code).toBe(0);
    await eventually(
      () => (east.kube.get('karpenter.sh/v1', 'NodePool', 'general') ? true : undefined),
      { timeoutMs: 60_000, what: 'the sidecar to apply NodePool general' },
    );
    east.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    simulator = new NodeLaunchSimulator({ kube: east.kube, ec2: east.ec2 }).start();
    const node = await simulator.launch('general');

    // The sidecar reports its approver's decisions with its next report. On a loaded machine a
    // CSR may first be Ignored for a passing reason (its NodeClaim not matched yet) and approved
    // on a later look; what must hold is that each of the node's two CSRs is approved once.
    let decisions: { csrName: string; decision: string; nodeName: string | null }[] = [];
    const approvals = () =>
      decisions
        .filter((d) => d.decision === 'Approved')
        .map((d) => d.csrName)
        .sort();
    await eventually(
      async () => {
        const res = await kfleet(['clusters', 'csr', 'ocp-east-1', '-o', 'json']);
        decisions = JSON.parse(res.stdout || '[]') as typeof decisions;
        return approvals().length >= 2 ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000, what: 'both CSRs of the node approved' },
    );
    expect(approvals()).toEqual([node.clientCsr, node.servingCsr].sort());
    expect(decisions.every((d) => [node.clientCsr, node.servingCsr].includes(d.csrName))).toBe(
      true,
    );
    const table = await kfleet(['clusters', 'csr', 'ocp-east-1']);
    expect(table.stdout.split('\n')[0]!.split(/\s+/)).toEqual([
      'CSR',
      'DECISION',
      'REASON',
      'NODE',
      'DECIDED',
    ]);
    expect(table.stdout).toContain(`${node.servingCsr}`);
    expect(table.stdout).toMatch(
      new RegExp(`${node.servingCsr} +Approved +\\S+ +${node.nodeName} `),
    );

    const history = await kfleet([
      'clusters',
      'history',
      'ocp-east-1',
      '--since',
      '1h',
      '--step',
      '1m',
    ]);
    expect(history.code).toBe(0);
    const lines = history.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^cluster\/ocp-east-1 health, last 1h, step 1m: 60 steps, [1-9]\d* with reports$/,
    );
    // One sparkline per series (only block characters and gaps), then the numbers.
    expect(lines[1]).toMatch(/^available +[▁-█ ]+ {2}min \d+% {2}avg \d+% {2}max \d+%$/);
    expect(lines.find((l) => l.startsWith('nodes'))).toMatch(/^nodes +[▁-█ ]+ {2}min /);
    expect(history.stdout).toMatch(
      /\nAT +SAMPLES +AVAILABLE +PROGRESSING +DEGRADED +NODES +VCPUS\n\d{4}-/,
    );
    const points = JSON.parse(
      (
        await kfleet([
          'clusters',
          'history',
          'ocp-east-1',
          '--since',
          '1h',
          '--step',
          '1m',
          '-o',
          'json',
        ])
      ).stdout,
    ) as { samples: number }[];
    // The API's own points: the steps that had reports.
    expect(points.length).toBeGreaterThan(0);
    expect(points.every((p) => p.samples > 0)).toBe(true);
  }, 180_000);

  it('rollouts start --wait follows a rollout to success, printing cluster progress', async () => {
    const res = await kfleet([
      'rollouts',
      'start',
      '-l',
      'wave=r',
      '--log-level',
      'debug',
      '--waves',
      '1,100%',
      '--min-healthy-seconds',
      '1',
      '--wave-timeout-seconds',
      '60',
      '--wait',
      '--timeout',
      '2m',
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    // Not a terminal: plain lines, each cluster's transitions and the rollout's state.
    expect(res.stdout).toMatch(/^rollout\/\S+ started: RUNNING, 3 clusters\n/);
    for (const name of ['r-0', 'r-1', 'r-2'])
      expect(res.stdout).toMatch(new RegExp(`\\ncluster/${name} HEALTHY \\(wave [12]\\)\\n`));
    expect(res.stdout).toMatch(
      /\nrollout\/\S+ COMPLETED wave 2\/2: 3\/3 healthy, 0 applying, 0 failed, 0 pending/,
    );
    // No terminal escapes when stdout is not a terminal.
    expect(res.stdout).not.toContain('\u001b[');
  }, 150_000);

  it('rollouts start --wait exits 5 when the rollout fails; rollouts watch says the same', async () => {
    for (const f of fakes.values()) f.failFrom = f.observed + 1;
    const res = await kfleet([
      'rollouts',
      'start',
      '-l',
      'wave=r',
      '--log-level',
      'info',
      '--min-healthy-seconds',
      '1',
      '--wave-timeout-seconds',
      '60',
      '--wait',
      '--timeout',
      '2m',
    ]);
    for (const f of fakes.values()) f.failFrom = undefined;
    expect(res.code).toBe(5);
    expect(res.stdout).toMatch(/\ncluster\/r-0 FAILED \(wave 1\)/);
    expect(res.stderr).toMatch(/^error: rollout\/\S+ FAILED: /);
    const id = /rollout\/(\S+) started/.exec(res.stdout)![1]!;

    const watch = await kfleet(['rollouts', 'watch', id, '--timeout', '1m']);
    expect(watch.code).toBe(5);
    expect(watch.stdout).toMatch(new RegExp(`rollout/${id} FAILED`));
    const names = await kfleet(['rollouts', 'list', '--state', 'failed', '-o', 'name']);
    expect(names.stdout).toBe(`rollout/${id}\n`);
  }, 150_000);

  it('clusters get --watch and clusters list --watch see a change made by another client', async () => {
    const get = background(['clusters', 'get', 'r-1', '--watch', '-o', 'json']);
    const list = background(['clusters', 'list', '-l', 'wave=r', '--watch', '-o', 'json']);
    await get.until(/"name":"r-1"/, 'the first state of r-1');
    await list.until(/"name":"r-2"/, 'the first listing');
    // Another client changes r-1's labels.
    const res = await api.admin(
      `mutation($id: ID!) { updateClusterLabels(clusterId: $id, labels: { wave: "r", tier: "gold" }) { id } }`,
      { id: await idOf('r-1') },
    );
    expect(res.errors).toBeUndefined();
    await get.until(/"tier":"gold"/, 'get --watch to print the change');
    await list.until(/"tier":"gold"/, 'list --watch to print the change');
    // One JSON document a line, the change last; nothing printed for the clusters that stayed put.
    const getLines = get.out.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; labels: unknown });
    expect(getLines[0]!.labels).toEqual({ wave: 'r' });
    expect(getLines.at(-1)!.labels).toEqual({ wave: 'r', tier: 'gold' });
    expect(new Set(getLines.map((c) => c.name))).toEqual(new Set(['r-1']));
    const listLines = list.out.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string });
    expect(listLines.map((c) => c.name)).toEqual(['r-0', 'r-1', 'r-2', 'r-1']);
    get.stop();
    list.stop();
    await Promise.all([get.exited, list.exited]);
  }, 120_000);

  async function idOf(name: string): Promise<string> {
    const res = await api.admin<{ clusters: { nodes: { id: string; name: string }[] } }>(
      `query($name: String!) { clusters(first: 10, filter: { nameContains: $name }) { nodes { id name } } }`,
      { name },
    );
    return res.data!.clusters.nodes.find((c) => c.name === name)!.id;
  }
});
