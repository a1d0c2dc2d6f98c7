import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  HOSTED,
  HyperShiftStandIn,
  createTestDatabase,
  eventually,
  grantedPermissions,
  startEmulatedHostedCluster,
  testQueuePrefix,
  type EmulatedHostedCluster,
  type RequestLogEntry,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterClient } from '../../apps/sidecar/src/kube/cluster-client.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startWorker } from '../../apps/worker/src/main.js';

const HC_API = 'hypershift.openshift.io/v1beta1';
const ROLE = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';
const STATUS = `query($id: ID!) { cluster(id: $id) { status { observedGeneration
  conditions { type status reason message } } } }`;
const DRIFT = `query($id: ID!) { cluster(id: $id) { status { drift { kind name change correctedAt
  fields { path manager } } } } }`;
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
 * A HyperShift hosted cluster in AutoNode mode, through the fleet: the API registers it and
 * refuses a Cluster Autoscaler switch it cannot do, the sidecar (with only deploy/'s Roles on the
 * management cluster) sets spec.autoNode, HyperShift (a stand-in) runs Karpenter, the fleet's
 * NodePool and OpenshiftEC2NodeClass land in the guest and the status is HyperShift's. Asked to
 * run converged mode, which no HyperShift build can support, a sidecar refuses and writes nothing.
 */
describe('hosted control plane, AutoNode mode', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedHostedCluster;
  let hypershift: HyperShiftStandIn;
  let sidecar: RunningProcess | undefined;
  let id: string;
  let registered: Awaited<ReturnType<typeof registerCluster>>;
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
  const has = (cs: Cond[], type: string, status: string, reason?: string) =>
    cs.some((c) => c.type === type && c.status === status && (!reason || c.reason === reason));

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedHostedCluster();
    hypershift = new HyperShiftStandIn(cluster);
    registered = await registerCluster(api.admin, {
      name: 'alpha',
      topology: 'HOSTED',
      platform: 'AWS',
      region: HOSTED.region,
      infraID: HOSTED.infraID,
      managementCluster: 'mgmt-1',
      hcpNamespace: HOSTED.hcpNamespace,
    });
    id = registered.id;
    // Started now, so its start-up overlaps the API-only test below.
    sidecar = startSidecarProcess(cluster, registered, { apiUrl: api.url, queuePrefix: prefix });
  }, 60_000);

  afterAll(async () => {
    await sidecar?.stop();
    hypershift?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('refuses DISABLE and MIGRATE of the Cluster Autoscaler, naming the HyperShift NodePools', async () => {
    for (const mode of ['DISABLE', 'MIGRATE']) {
      const res = await api.admin(SET, { id, input: { clusterAutoscalerMode: mode } });
      expect(res.data).toBeNull();
      expect(res.errors?.[0]?.extensions).toEqual(
        expect.objectContaining({
          code: 'BAD_USER_INPUT',
          field: 'input.clusterAutoscalerMode',
          reason: expect.stringContaining(
            `${mode} is not supported for HOSTED clusters: their Cluster Autoscaler is HyperShift NodePool autoscaling (hypershift.openshift.io/v1beta1 NodePool spec.autoScaling`,
          ) as unknown,
        }),
      );
    }
    const keep = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
      id,
      input: { clusterAutoscalerMode: 'KEEP' },
    });
    expect(keep.data?.setKarpenter.karpenter.generation).toBe(2);
  });

  it('enabling sets spec.autoNode; the NodePool and OpenshiftEC2NodeClass land in the guest; status is HyperShift’s', async () => {
    const off = await status(
      2,
      (cs) => has(cs, 'AutoNodeEnabled', 'False', 'AutoNodeNotConfigured'),
      'AutoNodeNotConfigured reported while Karpenter is disabled',
    );
    expect(has(off, 'HostedControlPlaneDiscovered', 'True', 'AsExpected')).toBe(true);
    expect(
      cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.spec,
    ).not.toHaveProperty('autoNode');

    hypershift.counts = { nodeCount: 2, nodeClaimCount: 3, vcpus: 8 };
    // Karpenter ignores a NodePool naming the OpenshiftEC2NodeClass itself (IsManaged): refused.
    const ignored = await api.admin(UPSERT, {
      id,
      input: {
        name: 'general',
        spec: {
          template: {
            spec: {
              requirements: [],
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
    expect(ignored.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.spec.template.spec.nodeClassRef',
    });
    expect(ignored.errors?.[0]?.message).toMatch(
      /must reference group karpenter\.k8s\.aws, kind EC2NodeClass .*EC2NodeClass HyperShift derives from the OpenshiftEC2NodeClass of the same name/,
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
                group: 'karpenter.k8s.aws',
                kind: 'EC2NodeClass',
                name: 'karpenter-fleet',
              },
            },
          },
        },
      },
    });
    expect(upsert.errors).toBeUndefined();
    const overrides = await api.admin(
      `mutation($id: ID!, $input: NodeClassOverridesInput!) {
         setNodeClassOverrides(clusterId: $id, input: $input) { id } }`,
      { id, input: { tags: { team: 'payments' } } },
    );
    expect(overrides.errors).toBeUndefined();
    const enabled = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
      id,
      input: { enabled: true, webIdentityRoleArn: ROLE },
    });
    const generation = enabled.data!.setKarpenter.karpenter.generation;

    const ready = await status(
      generation,
      (cs) => has(cs, 'Available', 'True', 'AsExpected'),
      'Available from HyperShift’s AutoNodeEnabled',
    );
    expect(cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.spec).toEqual(
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
      cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.metadata?.annotations,
    ).toEqual(expect.objectContaining({ 'fleet.karpenter.sh/auto-node': 'true' }));
    expect(ready).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'AutoNodeEnabled',
          status: 'True',
          reason: 'AsExpected',
          message: 'AutoNode is ready',
        }),
        expect.objectContaining({ type: 'OperandReady', status: 'True' }),
        expect.objectContaining({ type: 'HostedMode', status: 'True', reason: 'AutoNode' }),
        expect.objectContaining({ type: 'Degraded', status: 'False' }),
      ]),
    );
    const nodeClass = cluster.guest.get(
      'karpenter.hypershift.openshift.io/v1',
      'OpenshiftEC2NodeClass',
      'karpenter-fleet',
    );
    // HyperShift's selectors for the cluster, and the SRE's override.
    expect(nodeClass?.spec).toEqual({
      subnetSelectorTerms: [
        {
          tags: {
            'kubernetes.io/role/internal-elb': '1',
            [`kubernetes.io/cluster/${HOSTED.infraID}`]: '*',
          },
        },
      ],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': HOSTED.infraID } }],
      tags: { team: 'payments' },
    });
    expect(nodeClass?.metadata?.labels).toEqual(
      expect.objectContaining({ 'fleet.karpenter.sh/managed-by': expect.any(String) as unknown }),
    );
    const pool = cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general');
    expect(
      (pool?.spec as { template: { spec: { nodeClassRef: unknown } } }).template.spec.nodeClassRef,
    ).toEqual({
      group: 'karpenter.k8s.aws',
      kind: 'EC2NodeClass',
      name: 'karpenter-fleet',
    });
    // The fleet runs nothing of its own beside HyperShift's operator and operand.
    expect(
      cluster.management
        .list('apps/v1', 'Deployment', HOSTED.hcpNamespace)
        .map((d) => d.metadata?.name)
        .sort(),
    ).toEqual(['karpenter', 'karpenter-operator']);

    // Only deploy/'s Roles, and every request allowed.
    expect(cluster.sidecarAccess.refused()).toEqual([]);
    const granted = grantedPermissions(cluster.rbac, cluster.sidecarUser);
    expect(granted.every((p) => p.namespace !== undefined)).toBe(true);
    expect(cluster.sidecarAccess.used()).toEqual(
      expect.arrayContaining([
        `patch hypershift.openshift.io/hostedclusters in clusters named alpha`,
      ]),
    );
  }, 60_000);

  it('asked to run converged mode, reports ConvergedModeUnsupported with what HyperShift would have to delegate, and writes nothing', async () => {
    await sidecar?.stop();
    const writes: RequestLogEntry[] = [];
    const record = (e: RequestLogEntry) => {
      if (e.method !== 'GET') writes.push(e);
    };
    const offs = [cluster.management.onRequest(record), cluster.guest.onRequest(record)];
    try {
      sidecar = startSidecarProcess(
        cluster,
        registered,
        { apiUrl: api.url, queuePrefix: prefix },
        { HOSTED_MODE: 'Converged' },
        'sidecar-converged',
      );
      const res = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
        id,
        input: { logLevel: 'debug' },
      });
      const generation = res.data!.setKarpenter.karpenter.generation;
      const refused = await status(
        generation,
        (cs) => has(cs, 'Degraded', 'True', 'ConvergedModeUnsupported'),
        'ConvergedModeUnsupported',
      );
      const message = refused.find((c) => c.type === 'Degraded')?.message ?? '';
      for (const missing of [
        'karpenterignition',
        'nodepool/token.go',
        'karpenter.sh/discovery',
        'set-karpenter-taint',
        'HOSTED_MODE=AutoNode',
      ])
        expect(message).toContain(missing);
      expect(refused).toContainEqual(
        expect.objectContaining({ type: 'HostedMode', status: 'False', reason: 'Converged' }),
      );
      expect(writes).toEqual([]);
      expect(cluster.sidecarAccess.refused()).toEqual([]);
    } finally {
      for (const off of offs) off();
    }
  }, 60_000);

  it('in AutoNode mode again: a hand edit in the guest is put back and reported; disabling removes the guest objects first and clears spec.autoNode once no NodeClaim is left', async () => {
    await sidecar?.stop();
    sidecar = startSidecarProcess(cluster, registered, { apiUrl: api.url, queuePrefix: prefix });
    const back = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
      id,
      input: { logLevel: 'info' },
    });
    await status(
      back.data!.setKarpenter.karpenter.generation,
      (cs) => has(cs, 'HostedMode', 'True', 'AutoNode') && has(cs, 'Available', 'True'),
      'AutoNode mode again',
    );

    // An SRE edits the fleet's NodePool in the guest.
    const kubeconfig = new KubeConfig();
    kubeconfig.loadFromString(cluster.guest.kubeconfigYaml());
    const sre = new ClusterClient(kubeconfig, 10_000);
    await sre.mergePatch(
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'general' },
        spec: { template: { spec: { expireAfter: '24h' } } },
      },
      'sre-hand-edit',
    );
    const corrected = await eventually(
      async () => {
        const res = await api.admin<{
          cluster: {
            status: {
              drift:
                | { kind: string; name: string; correctedAt: string | null; fields: unknown[] }[]
                | null;
            };
          };
        }>(DRIFT, { id });
        return res.data?.cluster.status.drift?.find((e) => e.name === 'general' && e.correctedAt);
      },
      { timeoutMs: 30_000, what: 'the guest NodePool edit reported as put back' },
    );
    expect(corrected).toMatchObject({
      kind: 'NodePool',
      fields: [{ path: '.spec.template.spec.expireAfter', manager: 'sre-hand-edit' }],
    });
    const pool = cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general');
    expect(
      (pool?.spec as { template: { spec: { expireAfter: string } } }).template.spec.expireAfter,
    ).toBe('720h');

    // Karpenter still has a NodeClaim of the fleet's NodePool when the SRE disables it, and one
    // of a NodePool a guest admin made, which does not hold the fleet's disable back.
    const nodeClaim = (name: string, nodePool: string) => ({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name, labels: { 'karpenter.sh/nodepool': nodePool } },
      spec: {
        requirements: [],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'karpenter-fleet' },
      },
    });
    cluster.guest.create({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'batch' },
      spec: {
        template: {
          spec: {
            requirements: [],
            nodeClassRef: {
              group: 'karpenter.k8s.aws',
              kind: 'EC2NodeClass',
              name: 'karpenter-fleet',
            },
          },
        },
      },
    });
    cluster.guest.create(nodeClaim('batch-q2w8r', 'batch'));
    cluster.guest.create(nodeClaim('general-x7k2p', 'general'));
    const off = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
      id,
      input: { enabled: false },
    });
    const generation = off.data!.setKarpenter.karpenter.generation;
    const waiting = await status(
      generation,
      (cs) => has(cs, 'Progressing', 'True', 'WaitingForNodeClaims'),
      'waiting for the NodeClaim',
    );
    expect(waiting.find((c) => c.type === 'Progressing')?.message).toMatch(
      /^waiting for Karpenter to remove 1 NodeClaim\(s\)/,
    );
    expect(cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')).toBeUndefined();
    expect(
      cluster.guest.get(
        'karpenter.hypershift.openshift.io/v1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      ),
    ).toBeUndefined();
    expect(
      cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.spec,
    ).toHaveProperty('autoNode');

    // Karpenter terminates its node: the fleet clears spec.autoNode, HyperShift winds down.
    cluster.guest.delete('karpenter.sh/v1', 'NodeClaim', 'general-x7k2p');
    await status(
      generation,
      (cs) => has(cs, 'AutoNodeEnabled', 'False', 'AutoNodeNotConfigured'),
      'AutoNode cleared',
    );
    expect(
      cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.spec,
    ).not.toHaveProperty('autoNode');
    // The guest admin's NodePool and its NodeClaim were never the fleet's to wait for or touch.
    expect(cluster.guest.get('karpenter.sh/v1', 'NodeClaim', 'batch-q2w8r')).toBeDefined();
    expect(cluster.guest.get('karpenter.sh/v1', 'NodePool', 'batch')).toBeDefined();
    expect(cluster.sidecarAccess.refused()).toEqual([]);
  }, 90_000);
});
