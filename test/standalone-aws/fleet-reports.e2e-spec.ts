import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { parse } from 'yaml';
import {
  createTestDatabase,
  eventually,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { startApi, type Gql, type RunningApi } from '../api/start-api.js';

import { startWorker } from '../../apps/worker/src/main.js';

interface Cond {
  type: string;
  status: string;
  reason: string;
}

/**
 * The same behaviours seen from the fleet: a real sidecar process, the API and worker on real
 * PostgreSQL and Redis. What the sidecar observes on the cluster (the operand becoming available,
 * the Cluster Autoscaler switched off and back) must arrive as reported conditions, including
 * changes that no order caused.
 */
describe('standalone AWS through the fleet: reports carry the operand and Cluster Autoscaler state', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedCluster;
  let sidecar: RunningProcess;
  let gql: Gql;
  let clusterId: string;
  let registeredUid: string;

  const STATUS = `query($id: ID!) { cluster(id: $id) { karpenter { generation } inSync
    status { observedGeneration conditions { type status reason } } } }`;
  const conditionsWhen = (
    what: string,
    check: (c: Cond[], inSync: boolean, generation: number) => boolean,
  ) =>
    eventually(
      async () => {
        const res = await gql<{
          cluster: {
            inSync: boolean;
            karpenter: { generation: number };
            status: { conditions: Cond[] };
          };
        }>(STATUS, { id: clusterId });
        const c = res.data?.cluster;
        return c && check(c.status.conditions, c.inSync, c.karpenter.generation)
          ? c.status.conditions
          : undefined;
      },
      { timeoutMs: 30_000, what },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output().slice(-4000)}`);
    });
  const has = (c: Cond[], type: string, reason: string) =>
    c.some((x) => x.type === type && x.reason === reason);

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedCluster();
    gql = api.admin;
    const registered = await registerCluster(gql, { name: 'cas-east' });
    clusterId = registered.id;
    registeredUid = registered.uid;
    sidecar = startSidecarProcess(
      cluster,
      registered,
      { apiUrl: api.url, queuePrefix: prefix },
      { HEARTBEAT_SECONDS: '3600' },
    );
    await conditionsWhen('the registration order', (_, inSync) => inSync);
  });

  afterAll(async () => {
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('enabling with DISABLE reports the Cluster Autoscaler kept while the operand is not ready yet', async () => {
    const res = await gql<{ setKarpenter: { karpenter: { generation: number } } }>(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true, clusterAutoscalerMode: DISABLE }) { karpenter { generation } } }`,
      { id: clusterId },
    );
    expect(res.errors).toBeUndefined();
    const generation = res.data!.setKarpenter.karpenter.generation;
    const c = await conditionsWhen(
      'generation applied with the CAS kept until Karpenter can take over',
      (c, inSync, g) =>
        inSync && g === generation && has(c, 'ClusterAutoscalerDisabled', 'WaitingForKarpenter'),
    );
    expect(
      has(c, 'OperandReady', 'OperandNotReady') || has(c, 'OperandReady', 'OperandNotYetCreated'),
    ).toBe(true);
    expect(
      cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default'),
    ).toBeDefined();
  });

  it('the operand becoming available, then its NodeClass Ready, arrive as reports without any order; the CAS goes then', async () => {
    await conditionsWhen('OperandNotReady', (c) => has(c, 'OperandReady', 'OperandNotReady'));
    cluster.kube.setDeploymentAvailable('openshift-karpenter', 'karpenter');
    const c = await conditionsWhen('OperandReady AsExpected', (c) =>
      has(c, 'OperandReady', 'AsExpected'),
    );
    expect(c).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'OperandReady', status: 'True' })]),
    );
    new NodeLaunchSimulator({ kube: cluster.kube, ec2: cluster.ec2 }).markNodeClassReady('default');
    await conditionsWhen('CAS removed', (c) =>
      has(c, 'ClusterAutoscalerDisabled', 'DisabledByFleet'),
    );
    expect(
      cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default'),
    ).toBeUndefined();
  });

  it('KEEP brings the Cluster Autoscaler back and the report says so', async () => {
    const res = await gql<{ setKarpenter: { karpenter: { generation: number } } }>(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { clusterAutoscalerMode: KEEP }) { karpenter { generation } } }`,
      { id: clusterId },
    );
    expect(res.errors).toBeUndefined();
    const generation = res.data!.setKarpenter.karpenter.generation;
    await conditionsWhen(
      'CAS restored',
      (c, inSync, g) =>
        inSync &&
        g === generation &&
        has(c, 'ClusterAutoscalerDisabled', 'ClusterAutoscalerActive'),
    );
    expect(
      cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default'),
    ).toBeDefined();
    expect(
      cluster.kube.list(
        'autoscaling.openshift.io/v1beta1',
        'MachineAutoscaler',
        'openshift-machine-api',
      ),
    ).toHaveLength(3);
  });

  it("each NodeClass's MachineConfigPool reaches the fleet's status, history and `kfleet clusters get`; a Degraded pool says so", async () => {
    const POOLS = `query($id: ID!) { cluster(id: $id) { status {
      conditions { type status reason message }
      machineConfigPools { nodeClass name machineCount updatedMachineCount updatingMachineCount
        degradedMachineCount renderedConfig conditions { type status } } } } }`;
    interface Pools {
      cluster: {
        status: {
          conditions: (Cond & { message: string })[];
          machineConfigPools:
            | {
                name: string;
                nodeClass: string;
                machineCount: number;
                degradedMachineCount: number;
                renderedConfig: string | null;
                conditions: { type: string; status: string }[];
              }[]
            | null;
        };
      };
    }
    const poolsWhen = (what: string, check: (p: Pools['cluster']['status']) => boolean) =>
      eventually(
        async () => {
          const s = (await gql<Pools>(POOLS, { id: clusterId })).data?.cluster.status;
          return s && check(s) ? s : undefined;
        },
        { timeoutMs: 30_000, what },
      );
    const ready = await poolsWhen('karpenter-default rendered', (s) =>
      Boolean(s.machineConfigPools?.find((p) => p.name === 'karpenter-default')?.renderedConfig),
    );
    expect(ready.machineConfigPools).toEqual([
      expect.objectContaining({ nodeClass: 'default', name: 'karpenter-default', machineCount: 0 }),
    ]);
    expect(has(ready.conditions, 'KarpenterPoolsDegraded', 'AsExpected')).toBe(true);

    // A node of the default NodeClass whose daemon failed: the pool turns Degraded.
    cluster.kube.create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'ip-10-0-1-99.ec2.internal',
        labels: {
          'karpenter.k8s.aws/ec2nodeclass': 'default',
          'node-role.kubernetes.io/worker': '',
        },
        annotations: {
          'machineconfiguration.openshift.io/state': 'Degraded',
          'machineconfiguration.openshift.io/reason': 'unexpected on-disk state',
        },
      },
    });
    const degraded = await poolsWhen('KarpenterPoolsDegraded True', (s) =>
      has(s.conditions, 'KarpenterPoolsDegraded', 'MachineConfigPoolDegraded'),
    );
    expect(degraded.machineConfigPools?.[0]).toMatchObject({
      machineCount: 1,
      degradedMachineCount: 1,
      conditions: expect.arrayContaining([{ type: 'Degraded', status: 'True' }]) as unknown,
    });
    expect(degraded.conditions.find((c) => c.type === 'KarpenterPoolsDegraded')?.message).toContain(
      'MachineConfigPool karpenter-default (NodeClass default) is Degraded',
    );

    // History, served by the API: each change of the pools as stored, oldest first.
    const HISTORY = `query($id: ID!, $from: DateTime!, $to: DateTime!) { cluster(id: $id) {
      machineConfigPoolHistory(from: $from, to: $to) { observedAt observedGeneration
        pools { nodeClass name machineCount degradedMachineCount renderedConfig
          conditions { type status } } } } }`;
    interface PoolSample {
      observedAt: string;
      observedGeneration: number;
      pools: {
        nodeClass: string;
        name: string;
        machineCount: number;
        degradedMachineCount: number;
        renderedConfig: string | null;
        conditions: { type: string; status: string }[];
      }[];
    }
    const history = await eventually(
      async () => {
        const res = await gql<{ cluster: { machineConfigPoolHistory: PoolSample[] } }>(HISTORY, {
          id: clusterId,
          from: new Date(Date.now() - 3_600_000).toISOString(),
          to: new Date(Date.now() + 60_000).toISOString(),
        });
        if (res.errors) throw new Error(JSON.stringify(res.errors));
        const samples = res.data?.cluster.machineConfigPoolHistory ?? [];
        return samples.some((s) => s.pools[0]?.degradedMachineCount === 1) ? samples : undefined;
      },
      { timeoutMs: 30_000, what: 'a Degraded pool in machineConfigPoolHistory' },
    );
    const times = history.map((s) => Date.parse(s.observedAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Only changes: no two neighbouring samples carry the same pools.
    for (let i = 1; i < history.length; i++)
      expect(history[i]!.pools).not.toEqual(history[i - 1]!.pools);
    const before = history.findIndex((s) => s.pools[0]?.renderedConfig);
    const after = history.findIndex((s) => s.pools[0]?.degradedMachineCount === 1);
    expect(before).toBeLessThan(after);
    expect(history[before]!.pools).toEqual([
      expect.objectContaining({ nodeClass: 'default', name: 'karpenter-default', machineCount: 0 }),
    ]);
    expect(history[after]!.pools[0]).toMatchObject({
      machineCount: 1,
      renderedConfig: ready.machineConfigPools?.[0]?.renderedConfig,
      conditions: expect.arrayContaining([{ type: 'Degraded', status: 'True' }]) as unknown,
    });
    const bad = await gql(HISTORY.replace('to: $to)', 'to: $to, last: 0)'), {
      id: clusterId,
      from: new Date().toISOString(),
      to: new Date(Date.now() + 1000).toISOString(),
    });
    expect(bad.errors?.[0]?.message).toMatch(/last.*between 1 and 100\b/);

    // The transition is recorded.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const transitions = await client.query<{ toReason: string }>(
        `SELECT "toReason" FROM "ConditionTransition" WHERE "clusterId" = $1 AND type = 'KarpenterPoolsDegraded' ORDER BY at`,
        [registeredUid],
      );
      expect(transitions.rows.map((r) => r.toReason)).toEqual(
        expect.arrayContaining(['AsExpected', 'MachineConfigPoolDegraded']),
      );
    } finally {
      await client.end();
    }

    // `kfleet clusters get` shows it.
    const cli = join(process.cwd(), 'dist', 'apps', 'cli', 'src', 'main.js');
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [cli, 'clusters', 'get', 'cas-east', '--api', api.url, '--token', api.adminToken],
        (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const shown = parse(out) as {
      status: { machineConfigPools: { name: string; degradedMachineCount: number }[] };
    };
    expect(shown.status.machineConfigPools).toEqual([
      expect.objectContaining({ name: 'karpenter-default', degradedMachineCount: 1 }),
    ]);
  });
});
