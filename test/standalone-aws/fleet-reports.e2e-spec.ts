import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
});
