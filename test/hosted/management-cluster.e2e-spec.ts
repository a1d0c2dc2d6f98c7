import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  HyperShiftStandIn,
  createTestDatabase,
  eventually,
  startEmulatedManagementCluster,
  testQueuePrefix,
  type EmulatedHostedCluster,
  type EmulatedManagementCluster,
  type HostedSidecarMode,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startWorker } from '../../apps/worker/src/main.js';

const HC_API = 'hypershift.openshift.io/v1beta1';
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
}

interface Hosted {
  name: string;
  mode: HostedSidecarMode;
  hcp: EmulatedHostedCluster;
  id: string;
  sidecar: RunningProcess;
  hypershift?: HyperShiftStandIn;
}

/**
 * One management cluster hosting three control planes (two in AutoNode mode, one whose sidecar is
 * asked for converged mode), each served by its own sidecar process with only its own Roles: the
 * AutoNode clusters reach Available, the converged one is refused (ConvergedModeUnsupported) and
 * writes nothing, no sidecar is refused anything or touches another's HCP namespace or
 * HostedCluster, and the fleet lists the three under their management cluster.
 */
describe('one management cluster, three hosted control planes', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let mgmt: EmulatedManagementCluster;
  const hosted: Hosted[] = [];
  const prefix = testQueuePrefix();

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    mgmt = await startEmulatedManagementCluster();
    for (const [name, mode] of [
      ['alpha', 'AutoNode'],
      ['beta', 'AutoNode'],
      ['gamma', 'Converged'],
    ] as const) {
      const hcp = await mgmt.addHostedControlPlane({ name, mode });
      const hypershift = mode === 'AutoNode' ? new HyperShiftStandIn(hcp) : undefined;
      const registered = await registerCluster(api.admin, {
        name,
        topology: 'HOSTED',
        platform: 'AWS',
        region: 'us-west-2',
        infraID: hcp.infraID,
        managementCluster: 'mgmt-west',
        hcpNamespace: hcp.hcpNamespace,
      });
      const sidecar = startSidecarProcess(
        hcp,
        registered,
        { apiUrl: api.url, queuePrefix: prefix },
        {},
        `sidecar ${name}`,
      );
      hosted.push({ name, mode, hcp, id: registered.id, sidecar, hypershift });
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(hosted.map((h) => h.sidecar.stop()));
    for (const h of hosted) h.hypershift?.stop();
    await worker?.close();
    await api?.app.close();
    await mgmt?.stop();
    await db?.drop();
  });

  it('each cluster reaches Available in its mode; each sidecar keeps to its own HCP namespace and HostedCluster', async () => {
    const generations = await Promise.all(
      hosted.map(async (h) => {
        const upsert = await api.admin(UPSERT, {
          id: h.id,
          input: {
            name: 'general',
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
          },
        });
        expect(upsert.errors).toBeUndefined();
        const res = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
          id: h.id,
          input: {
            enabled: true,
            webIdentityRoleArn: `arn:aws:iam::111122223333:role/${h.hcp.infraID}-karpenter`,
          },
        });
        return res.data!.setKarpenter.karpenter.generation;
      }),
    );
    await Promise.all(
      hosted.map((h, i) =>
        eventually(
          async () => {
            const res = await api.admin<{
              cluster: { status: { observedGeneration: number; conditions: Cond[] } | null };
            }>(STATUS, { id: h.id });
            const s = res.data?.cluster.status;
            const has = (type: string, status: string, reason: string) =>
              s?.conditions.some(
                (c) => c.type === type && c.status === status && c.reason === reason,
              );
            const ok =
              s &&
              s.observedGeneration >= generations[i]! &&
              (h.mode === 'AutoNode'
                ? has('Available', 'True', 'AsExpected') && has('HostedMode', 'True', 'AutoNode')
                : has('Degraded', 'True', 'ConvergedModeUnsupported') &&
                  has('HostedMode', 'False', 'Converged'));
            return ok ? true : undefined;
          },
          { timeoutMs: 60_000, what: `${h.name} in ${h.mode} mode: Available, or refused` },
        ).catch((err: Error) => {
          throw new Error(`${err.message}\n${h.sidecar.output()}`);
        }),
      ),
    );

    const names = hosted.map((h) => h.name);
    for (const h of hosted) {
      // Only its own Roles, and nothing refused.
      expect(h.hcp.sidecarAccess.refused()).toEqual([]);
      const others = names.filter((n) => n !== h.name);
      for (const used of h.hcp.sidecarAccess.used())
        for (const other of others) {
          expect(used).not.toContain(`in clusters-${other}`);
          expect(used).not.toMatch(new RegExp(`named ${other}$`));
        }
      const hc = mgmt.management.get(HC_API, 'HostedCluster', h.name, 'clusters');
      // AutoNode sets spec.autoNode on its own HostedCluster only; converged leaves it unset.
      if (h.mode === 'AutoNode')
        expect((hc?.spec as { autoNode?: unknown }).autoNode).toEqual({
          provisionerConfig: {
            name: 'Karpenter',
            karpenter: {
              platform: 'AWS',
              aws: { roleARN: `arn:aws:iam::111122223333:role/${h.hcp.infraID}-karpenter` },
            },
          },
        });
      else expect(hc?.spec).not.toHaveProperty('autoNode');
      const deployments = mgmt.management
        .list('apps/v1', 'Deployment', h.hcp.hcpNamespace)
        .map((d) => d.metadata?.name)
        .sort();
      expect(deployments).toEqual(h.mode === 'AutoNode' ? ['karpenter', 'karpenter-operator'] : []);
      // The fleet's objects land in its own guest; the refused cluster's guest gets nothing.
      const pool = () => h.hcp.guest.get('karpenter.sh/v1', 'NodePool', 'general');
      if (h.mode === 'AutoNode') expect(pool()).toBeDefined();
      // Not even Karpenter's CRDs: nothing was installed there.
      else expect(pool).toThrow('no kind "NodePool" is registered');
    }
  }, 90_000);

  it('fleetSummary breaks the three down by topology, and by the hosted mode each runs in', async () => {
    const res = await api.admin<{
      fleetSummary: {
        byTopology: { value: string; count: number }[];
        byHostedMode: { value: string; count: number }[];
      };
    }>(`{ fleetSummary { byTopology { value count } byHostedMode { value count } } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data?.fleetSummary).toEqual({
      byTopology: [{ value: 'HOSTED', count: 3 }],
      byHostedMode: [{ value: 'AutoNode', count: 2 }],
    });
  });

  it('clusters(filter: { managementCluster }) lists the three', async () => {
    const res = await api.admin<{
      clusters: { totalCount: number; edges: { node: { name: string; topology: string } }[] };
    }>(
      `{ clusters(first: 10, filter: { managementCluster: "mgmt-west" }) {
           totalCount edges { node { name topology } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.clusters.totalCount).toBe(3);
    expect(
      res.data?.clusters.edges.map((e) => e.node).sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual([
      { name: 'alpha', topology: 'HOSTED' },
      { name: 'beta', topology: 'HOSTED' },
      { name: 'gamma', topology: 'HOSTED' },
    ]);
  });
});
