import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  HOSTED,
  NodeLaunchSimulator,
  createTestDatabase,
  eventually,
  convergedHyperShiftObjects,
  startEmulatedHostedCluster,
  testQueuePrefix,
  type EmulatedHostedCluster,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '@fleet/cloud-provider';
import { parse } from 'yaml';
import { ClusterClient, describeKubeError } from '../../apps/sidecar/src/kube/cluster-client.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startWorker } from '../../apps/worker/src/main.js';

const HC_API = 'hypershift.openshift.io/v1beta1';
const ROLE = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';
const OPERAND = 'karpenter-fleet-operand';
const FINALIZER = 'fleet.karpenter.sh/hosted-karpenter-cleanup';
const STATUS = `query($id: ID!) { cluster(id: $id) { status { observedGeneration
  conditions { type status reason message } } } }`;
const SET = `mutation($id: ID!, $input: SetKarpenterInput!) {
  setKarpenter(clusterId: $id, input: $input) { karpenter { generation } } }`;
const UPSERT = `mutation($id: ID!, $input: UpsertNodePoolInput!) {
  upsertNodePool(clusterId: $id, input: $input) { karpenter { generation } } }`;

interface Cond {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/**
 * A HyperShift hosted cluster in converged mode, through the fleet: the sidecar process (with only
 * deploy/sidecar/hosted-converged's Roles on the management cluster) runs the operand in the HCP
 * namespace and everything else in the guest; an SRE's NodeClass override reaches the derived
 * EC2NodeClass while a guest admin cannot edit it; a node Karpenter launches (the simulator plays
 * Karpenter and the kubelet, against the EC2 emulator) gets its CSRs approved and joins;
 * status.autoNode follows; deleting the HostedControlPlane cleans up in order and releases the
 * finalizer.
 */
describe('hosted control plane, converged mode', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedHostedCluster;
  let sidecar: RunningProcess | undefined;
  let sim: NodeLaunchSimulator | undefined;
  let id: string;
  const prefix = testQueuePrefix();

  const status = async (generation: number, ready: (c: Cond[]) => boolean, what: string) =>
    eventually(
      async () => {
        const res = await api.admin<{
          cluster: { status: { observedGeneration: number; conditions: Cond[] } | null };
        }>(STATUS, { id });
        const s = res.data?.cluster.status;
        return s && s.observedGeneration >= generation && ready(s.conditions)
          ? s.conditions
          : undefined;
      },
      { timeoutMs: 30_000, what },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`);
    });
  const has = (cs: Cond[], type: string, s: string, reason?: string) =>
    cs.some((c) => c.type === type && c.status === s && (!reason || c.reason === reason));
  const hcp = () =>
    cluster.management.get(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace);
  const until = <T>(probe: () => T | undefined, what: string) =>
    eventually(() => Promise.resolve(probe()), { timeoutMs: 30_000, what }).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`);
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedHostedCluster('Converged');
    // HyperShift's control-plane-operator (the token-minter's image) and its user-data Secret.
    cluster.management.seed(convergedHyperShiftObjects(HOSTED));
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
  }, 60_000);

  afterAll(async () => {
    sim?.stop();
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('runs the operand in the HCP namespace and the rest in the guest; an SRE override reaches the EC2NodeClass, a guest admin’s edit is denied', async () => {
    expect(
      (
        await api.admin(UPSERT, {
          id,
          input: {
            name: 'general',
            spec: {
              template: {
                spec: {
                  requirements: [],
                  expireAfter: '720h',
                  nodeClassRef: {
                    group: 'karpenter.k8s.aws',
                    kind: 'EC2NodeClass',
                    name: 'karpenter-fleet',
                  },
                },
              },
            },
          },
        })
      ).errors,
    ).toBeUndefined();
    expect(
      (
        await api.admin(
          `mutation($id: ID!, $input: NodeClassOverridesInput!) {
             setNodeClassOverrides(clusterId: $id, input: $input) { id } }`,
          { id, input: { tags: { team: 'payments' } } },
        )
      ).errors,
    ).toBeUndefined();
    const enabled = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
      id,
      input: { enabled: true, webIdentityRoleArn: ROLE },
    });
    const generation = enabled.data!.setKarpenter.karpenter.generation;

    await until(
      () => cluster.management.get('apps/v1', 'Deployment', OPERAND, HOSTED.hcpNamespace),
      'the operand Deployment in the HCP namespace',
    );
    // The kubelet of the management cluster: the operand's pod runs.
    cluster.management.setDeploymentAvailable(HOSTED.hcpNamespace, OPERAND);
    const ready = await status(
      generation,
      (cs) => has(cs, 'Available', 'True', 'AsExpected'),
      'Available once the operand runs and the NodeClass is derived',
    );
    expect(ready).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'HostedMode', status: 'True', reason: 'Converged' }),
        expect.objectContaining({ type: 'NodeClassesReady', status: 'True' }),
        expect.objectContaining({ type: 'Degraded', status: 'False' }),
      ]),
    );
    // HyperShift runs no Karpenter of its own; the HCP namespace holds the fleet's operand only.
    expect(
      cluster.management
        .list('apps/v1', 'Deployment', HOSTED.hcpNamespace)
        .map((d) => d.metadata?.name)
        .sort(),
    ).toEqual(['control-plane-operator', OPERAND]);
    expect(hcp()?.metadata?.finalizers).toContain(FINALIZER);
    // Everything else is in the guest: CRDs, the operand's identity, the fleet's objects.
    for (const crd of [
      'nodepools.karpenter.sh',
      'nodeclaims.karpenter.sh',
      'ec2nodeclasses.karpenter.k8s.aws',
      'openshiftec2nodeclasses.karpenter.hypershift.openshift.io',
    ])
      expect(
        cluster.guest.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd),
      ).toBeDefined();
    expect(cluster.guest.get('v1', 'ServiceAccount', 'karpenter', 'kube-system')).toBeDefined();
    expect(cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')).toBeDefined();
    const ec2 = cluster.guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet');
    expect(ec2?.spec).toEqual(
      expect.objectContaining({
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-0rhcos4213west2001' }],
        tags: { 'cost-center': '5120', team: 'payments' },
      }),
    );

    const adminToken = cluster.guest.addUser('guest-admin', ['system:masters']);
    const kc = new KubeConfig();
    kc.loadFromString(cluster.guest.kubeconfigYaml('default', adminToken));
    const denied = await new ClusterClient(kc)
      .mergePatch({
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: 'karpenter-fleet' },
        spec: { tags: { team: 'someone-else' } },
      })
      .then(
        () => 'allowed',
        (err: unknown) => describeKubeError(err),
      );
    expect(denied).toMatch(/karpenter-fleet-ec2nodeclass-derived/);
  }, 60_000);

  it('HyperShift’s KubeletConfig ConfigMaps: the startup taint, and a NodeClass’s kubelet settings follow its edits', async () => {
    const config = (name: string) =>
      (
        cluster.management.get('v1', 'ConfigMap', name, HOSTED.hcpNamespace) as
          (KubeObject & { data?: Record<string, string> }) | undefined
      )?.data?.config;
    expect(parse(config('set-karpenter-taint') ?? '')).toEqual({
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'KubeletConfig',
      metadata: { name: 'set-karpenter-taint' },
      spec: {
        kubeletConfig: {
          registerWithTaints: [
            { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' },
          ],
        },
      },
    });
    // The fleet's NodeClass has no kubelet settings: no ConfigMap of its own.
    expect(config('karpenter-kubelet-karpenter-fleet')).toBeUndefined();

    const kc = new KubeConfig();
    kc.loadFromString(
      cluster.guest.kubeconfigYaml(
        'default',
        cluster.guest.addUser('guest-admin-kubelet', ['system:masters']),
      ),
    );
    const admin = new ClusterClient(kc);
    const gpu = {
      apiVersion: 'karpenter.hypershift.openshift.io/v1',
      kind: 'OpenshiftEC2NodeClass',
      metadata: { name: 'gpu' },
      spec: { kubelet: { maxPods: 50 } },
    } as unknown as KubeObject;
    await admin.apply(gpu);
    const maxPods = (text: string | undefined) =>
      (
        parse(text ?? '{}') as {
          spec?: { kubeletConfig?: { maxPods?: number; registerWithTaints?: unknown[] } };
        }
      ).spec?.kubeletConfig;
    const first = await until(
      () => maxPods(config('karpenter-kubelet-gpu')),
      'karpenter-kubelet-gpu',
    );
    expect(first).toEqual({
      maxPods: 50,
      registerWithTaints: [
        { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' },
      ],
    });
    expect(
      cluster.management.get('v1', 'ConfigMap', 'karpenter-kubelet-gpu', HOSTED.hcpNamespace)
        ?.metadata?.labels?.['hypershift.openshift.io/karpenter-nodeclass-kubelet-config'],
    ).toBe('true');
    // No user-data Secret for `gpu`: it stays not ready, so the sidecar re-checks and sees the edit.
    await admin.mergePatch({ ...gpu, spec: { kubelet: { maxPods: 60 } } });
    await until(
      () => (maxPods(config('karpenter-kubelet-gpu'))?.maxPods === 60 ? true : undefined),
      'karpenter-kubelet-gpu follows maxPods 60',
    );
    await admin.delete({ apiVersion: gpu.apiVersion, kind: gpu.kind, name: 'gpu' });
    await until(
      () => (config('karpenter-kubelet-gpu') === undefined ? true : undefined),
      'karpenter-kubelet-gpu pruned with its NodeClass',
    );
    expect(config('set-karpenter-taint')).toBeDefined();
  }, 60_000);

  it('a pending pod leads to a NodeClaim, an instance, approved CSRs and a Node; status.autoNode follows', async () => {
    cluster.guest.seed([
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-0', namespace: 'default' },
        spec: { containers: [{ name: 'web', image: 'registry.example.com/web:1' }] },
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
        },
      },
    ]);
    // Karpenter (the simulator, as the operand's guest identity) answers the pending pod.
    sim = new NodeLaunchSimulator({
      kube: cluster.guest,
      ec2: cluster.ec2,
      zone: `${HOSTED.region}a`,
      karpenterUser: {
        username: 'system:serviceaccount:kube-system:karpenter',
        groups: [
          'system:serviceaccounts',
          'system:serviceaccounts:kube-system',
          'system:authenticated',
        ],
      },
      approvalTimeoutMs: 30_000,
    }).start();
    const node = await sim.launch('general');
    expect(cluster.ec2.getInstance(node.instanceId)).toBeDefined();
    expect(cluster.guest.get('v1', 'Node', node.nodeName)).toBeDefined();
    for (const csr of [node.clientCsr, node.servingCsr])
      expect(
        (
          cluster.guest.get('certificates.k8s.io/v1', 'CertificateSigningRequest', csr)?.status as {
            conditions: { type: string; reason: string }[];
          }
        ).conditions,
      ).toEqual([expect.objectContaining({ type: 'Approved', reason: 'KarpenterCSRApprove' })]);
    await until(() => {
      const autoNode = (hcp()?.status as { autoNode?: { nodeCount?: number } }).autoNode;
      return autoNode?.nodeCount === 1 ? autoNode : undefined;
    }, 'status.autoNode counting the new node');
    expect((hcp()?.status as { autoNode: unknown }).autoNode).toEqual({
      nodeCount: 1,
      nodeClaimCount: 1,
      vcpus: 4,
    });
  }, 60_000);

  it('deleting the HostedControlPlane: NodePools, then NodeClaims, then the finalizer; no Forbidden with deploy/’s Roles', async () => {
    cluster.management.delete(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace);
    await until(() => (hcp() === undefined ? true : undefined), 'the HostedControlPlane gone');
    expect(cluster.guest.list('karpenter.sh/v1', 'NodePool')).toEqual([]);
    expect(cluster.guest.list('karpenter.sh/v1', 'NodeClaim')).toEqual([]);
    expect(sim?.terminated.length).toBe(1);
    expect(
      cluster.management.get('apps/v1', 'Deployment', OPERAND, HOSTED.hcpNamespace),
    ).toBeUndefined();
    expect(
      cluster.management.get('v1', 'ConfigMap', 'set-karpenter-taint', HOSTED.hcpNamespace),
    ).toBeUndefined();
    expect(cluster.sidecarAccess.refused()).toEqual([]);
  }, 60_000);
});
