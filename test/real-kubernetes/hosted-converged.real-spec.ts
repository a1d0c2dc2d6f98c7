import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import {
  startRealHostedCluster,
  type RealHostedCluster,
} from '../support/control-plane/hosted-clusters.js';
import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import {
  deploymentAvailable,
  refusedRequests,
  type Condition,
} from '../support/control-plane/scenario.js';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '../support/database.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { HOSTED } from '../support/hcp-aws-hosted.js';
import { eventually, type RunningProcess } from '../support/processes.js';

// The converged hosted scenario (test/hosted/converged) on real servers, the management cluster's
// and the guest's, through the fleet: the sidecar process, with only deploy/sidecar/hosted's and
// hosted-converged's Roles on the management cluster, runs the operand in the HCP namespace (the
// real Deployment controller runs it) and everything else in the guest; the management server's
// audit log shows nothing refused.

const HC_API = 'hypershift.openshift.io/v1beta1';
const OPERAND = 'karpenter-fleet-operand';
const FINALIZER = 'fleet.karpenter.sh/hosted-karpenter-cleanup';
const ROLE = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';
const STATUS = `query($id: ID!) { cluster(id: $id) { status { observedGeneration
  conditions { type status reason message } } } }`;
const SET = `mutation($id: ID!, $input: SetKarpenterInput!) {
  setKarpenter(clusterId: $id, input: $input) { karpenter { generation } } }`;
const UPSERT = `mutation($id: ID!, $input: UpsertNodePoolInput!) {
  upsertNodePool(clusterId: $id, input: $input) { karpenter { generation } } }`;

describe('hosted control plane in converged mode, on real management and guest servers', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: RealHostedCluster;
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
    cluster = await startRealHostedCluster('Converged');
    kubelets = new SimulatedKubelets(cluster.management);
    await kubelets.register('management-worker-0', 'worker');
    kubelets.start();
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
    kubelets?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('runs the operand in the HCP namespace and the rest in the guest, with the Roles of deploy/ alone', async () => {
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
    await eventually(
      () => cluster.management.get('apps/v1', 'Deployment', OPERAND, HOSTED.hcpNamespace),
      { timeoutMs: 60_000, what: 'the operand Deployment in the HCP namespace' },
    );
    await deploymentAvailable(cluster.management, HOSTED.hcpNamespace, OPERAND);
    const ready = await status(
      enabled.data!.setKarpenter.karpenter.generation,
      (cs) => has(cs, 'Available', 'True', 'AsExpected'),
      'Available once the operand runs and the NodeClass is derived',
    );
    expect(ready).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'HostedMode', status: 'True', reason: 'Converged' }),
        expect.objectContaining({ type: 'Degraded', status: 'False' }),
      ]),
    );
    expect(
      (await cluster.management.get(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace))
        ?.metadata?.finalizers,
    ).toContain(FINALIZER);
    for (const crd of [
      'nodepools.karpenter.sh',
      'nodeclaims.karpenter.sh',
      'ec2nodeclasses.karpenter.k8s.aws',
      'openshiftec2nodeclasses.karpenter.hypershift.openshift.io',
    ]) {
      expect(
        await cluster.guest.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd),
      ).toBeDefined();
    }
    expect(await cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')).toBeDefined();
    expect(
      (await cluster.guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet'))?.spec,
    ).toEqual(
      expect.objectContaining({
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-0rhcos4213west2001' }],
      }),
    );
    expect(refusedRequests(cluster.management, cluster.sidecarUser)).toEqual([]);
  }, 120_000);
});
