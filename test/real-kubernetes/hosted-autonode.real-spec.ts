import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import {
  RealHyperShiftStandIn,
  startRealHostedCluster,
  type RealHostedCluster,
} from '../support/control-plane/hosted-clusters.js';
import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import { refusedRequests, type Condition } from '../support/control-plane/scenario.js';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '../support/database.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { HOSTED } from '../support/hcp-aws-hosted.js';
import { eventually, type RunningProcess } from '../support/processes.js';

// The hosted headline scenario (test/hosted/autonode) on real servers, the management cluster's
// and the guest's, through the fleet: the sidecar process, with only deploy/sidecar/hosted's Roles
// on the management cluster, sets spec.autoNode; HyperShift (a stand-in: it cannot be built here)
// runs Karpenter, whose Deployments the real controllers run; the fleet's NodePool and
// OpenshiftEC2NodeClass land in the guest; the management server's audit log shows nothing refused.

const HC_API = 'hypershift.openshift.io/v1beta1';
const ROLE = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';
const STATUS = `query($id: ID!) { cluster(id: $id) { status { observedGeneration
  conditions { type status reason message } } } }`;
const SET = `mutation($id: ID!, $input: SetKarpenterInput!) {
  setKarpenter(clusterId: $id, input: $input) { karpenter { generation } } }`;
const UPSERT = `mutation($id: ID!, $input: UpsertNodePoolInput!) {
  upsertNodePool(clusterId: $id, input: $input) { karpenter { generation } } }`;

describe('hosted control plane in AutoNode mode, on real management and guest servers', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: RealHostedCluster;
  let hypershift: RealHyperShiftStandIn;
  let kubelets: SimulatedKubelets;
  let sidecar: RunningProcess | undefined;
  let id: string;
  const prefix = testQueuePrefix();

  const status = (generation: number, ready: (c: Condition[]) => boolean, what: string) =>
    eventually(
      async () => {
        const res = await api.admin<{
          cluster: { status: { observedGeneration: number; conditions: Condition[] } | null };
        }>(STATUS, { id });
        const s = res.data?.cluster.status;
        return s && s.observedGeneration >= generation && ready(s.conditions)
          ? s.conditions
          : undefined;
      },
      { timeoutMs: 60_000, what },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`, { cause: err });
    });
  const has = (cs: Condition[], type: string, status: string, reason?: string) =>
    cs.some((c) => c.type === type && c.status === status && (!reason || c.reason === reason));

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startRealHostedCluster('AutoNode');
    kubelets = new SimulatedKubelets(cluster.management);
    await kubelets.register('management-worker-0', 'worker');
    kubelets.start();
    hypershift = new RealHyperShiftStandIn(cluster).start();
    const registered = await registerCluster(api.admin, {
      name: 'alpha',
      topology: 'HOSTED',
      platform: 'AWS',
      region: HOSTED.region,
      infraID: HOSTED.infraID,
      managementCluster: 'mgmt-1',
      hcpNamespace: HOSTED.hcpNamespace,
    });
    id = registered.id;
    sidecar = startSidecarProcess(cluster, registered, { apiUrl: api.url, queuePrefix: prefix });
  }, 180_000);
  afterAll(async () => {
    await sidecar?.stop();
    hypershift?.stop();
    kubelets?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('enabling sets spec.autoNode; the NodePool and OpenshiftEC2NodeClass land in the guest; status is HyperShift’s; nothing refused', async () => {
    const keep = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
      id,
      input: { clusterAutoscalerMode: 'KEEP' },
    });
    await status(
      keep.data!.setKarpenter.karpenter.generation,
      (cs) => has(cs, 'AutoNodeEnabled', 'False', 'AutoNodeNotConfigured'),
      'AutoNodeNotConfigured while Karpenter is disabled',
    );
    const upsert = await api.admin(UPSERT, {
      id,
      input: {
        name: 'general',
        spec: {
          template: {
            spec: {
              requirements: [],
              expireAfter: '720h',
              nodeClassRef: {
                group: 'karpenter.hypershift.openshift.io',
                kind: 'OpenshiftEC2NodeClass',
                name: 'karpenter-fleet',
              },
            },
          },
        },
      },
    });
    expect(upsert.errors).toBeUndefined();
    const enabled = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
      id,
      input: { enabled: true, webIdentityRoleArn: ROLE },
    });
    const ready = await status(
      enabled.data!.setKarpenter.karpenter.generation,
      (cs) => has(cs, 'Available', 'True', 'AsExpected'),
      'Available from HyperShift’s AutoNodeEnabled',
    );
    expect(ready).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'AutoNodeEnabled', status: 'True', reason: 'AsExpected' }),
        expect.objectContaining({ type: 'HostedMode', status: 'True', reason: 'AutoNode' }),
        expect.objectContaining({ type: 'Degraded', status: 'False' }),
      ]),
    );
    expect(
      (await cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters'))?.spec,
    ).toEqual(
      expect.objectContaining({
        autoNode: {
          provisionerConfig: {
            name: 'Karpenter',
            karpenter: { platform: 'AWS', aws: { roleARN: ROLE } },
          },
        },
      }),
    );
    expect(
      await cluster.guest.get(
        'karpenter.hypershift.openshift.io/v1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      ),
    ).toBeDefined();
    const pool = await cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general');
    expect(
      (pool?.spec as { template: { spec: { nodeClassRef: unknown } } }).template.spec.nodeClassRef,
    ).toEqual({
      group: 'karpenter.hypershift.openshift.io',
      kind: 'OpenshiftEC2NodeClass',
      name: 'karpenter-fleet',
    });
    expect(refusedRequests(cluster.management, cluster.sidecarUser)).toEqual([]);
  }, 120_000);
});
