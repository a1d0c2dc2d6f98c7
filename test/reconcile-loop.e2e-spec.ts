import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { clone, loadCrdSchema } from '@fleet/crd-schema';
import { join } from 'node:path';
import {
  CRDS_DIR,
  createTestDatabase,
  eventually,
  freePort,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { startEmulatedCluster, type EmulatedCluster } from './support/emulated-cluster.js';
import { registerCluster, startSidecarProcess } from './support/fleet-sidecar.js';
import { startApi, type Gql, type RunningApi } from './api/start-api.js';
import { startWorker } from '../apps/worker/src/main.js';

/**
 * The whole loop, once, through real interfaces: GraphQL over HTTP → PostgreSQL → BullMQ worker →
 * the cluster's queue → a real sidecar process → the emulated API server (real client-node, real
 * EC2 SDK) → report → ingest → GraphQL.
 */
describe('a reconcile travels end to end', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedCluster;
  let sidecar: RunningProcess;
  let gql: Gql;
  let clusterId: string;
  let opsPort: number;
  const nodePoolSchema = loadCrdSchema(
    join(CRDS_DIR, 'karpenter', 'karpenter.sh_nodepools.yaml'),
    'v1',
  );

  const STATUS = `query($id: ID!) { cluster(id: $id) {
    karpenter { generation } status { observedGeneration conditions { type status reason message } } inSync } }`;

  async function waitInSync(generation: number) {
    return eventually(
      async () => {
        const res = await gql<{
          cluster: {
            inSync: boolean;
            karpenter: { generation: number };
            status: {
              observedGeneration: number;
              conditions: { type: string; status: string; reason: string }[];
            };
          };
        }>(STATUS, { id: clusterId });
        const c = res.data?.cluster;
        return c && c.karpenter.generation === generation && c.inSync ? c : undefined;
      },
      { timeoutMs: 30_000, what: `observedGeneration ${generation}` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output()}`);
    });
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedCluster();
    gql = api.admin;
    const registered = await registerCluster(gql, { name: 'prod-east' });
    clusterId = registered.id;
    opsPort = await freePort();
    sidecar = startSidecarProcess(
      cluster,
      registered,
      { apiUrl: api.url, queuePrefix: prefix },
      { OPS_PORT: String(opsPort) },
    );
  });

  afterAll(async () => {
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('reports the registration order back with observedGeneration 1', async () => {
    const c = await waitInSync(1);
    expect(c.status.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'True', reason: 'KarpenterDisabled' }),
      ]),
    );
  });

  it('enables Karpenter with one NodePool and the cluster gets the operand and the NodePool', async () => {
    const enable = await gql(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { id } }`,
      { id: clusterId },
    );
    expect(enable.errors).toBeUndefined();
    const upsert = await gql<{ upsertNodePool: { karpenter: { generation: number } } }>(
      `mutation($id: ID!, $spec: JSON!) { upsertNodePool(clusterId: $id, input: { name: "general", spec: $spec }) { karpenter { generation } } }`,
      {
        id: clusterId,
        spec: {
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              requirements: [
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
            },
          },
          limits: { cpu: '64' },
        },
      },
    );
    expect(upsert.errors).toBeUndefined();
    const generation = upsert.data!.upsertNodePool.karpenter.generation;
    const c = await waitInSync(generation);
    expect(c.status.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'True', reason: 'AsExpected' }),
      ]),
    );

    const nodePool = cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general');
    expect(nodePool?.spec).toMatchObject({ limits: { cpu: '64' } });
    // What the API server stored still validates against the real CRD (defaults included).
    expect(nodePoolSchema.validate(clone(nodePool!))).toEqual([]);

    const deployment = cluster.kube.get(
      'apps/v1',
      'Deployment',
      'karpenter',
      'openshift-karpenter',
    );
    const env = (
      deployment as {
        spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
      }
    ).spec.template.spec.containers[0]!.env;
    expect(
      Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value])),
    ).toMatchObject({
      CLUSTER_NAME: 'prod-east-7xk2p',
      CLUSTER_ENDPOINT: 'https://api-int.prod-east.example.com:6443',
      AWS_REGION: 'us-east-1',
      DISABLE_WEBHOOK: 'true',
    });
    expect(cluster.kube.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'default')).toBeDefined();
    expect(
      cluster.kube.get('v1', 'ServiceAccount', 'karpenter', 'openshift-karpenter'),
    ).toBeDefined();
  });

  it('deleting the NodePool removes it from the cluster', async () => {
    const res = await gql<{ deleteNodePool: { karpenter: { generation: number } } }>(
      `mutation($id: ID!) { deleteNodePool(clusterId: $id, name: "general") { karpenter { generation } } }`,
      { id: clusterId },
    );
    expect(res.errors).toBeUndefined();
    await waitInSync(res.data!.deleteNodePool.karpenter.generation);
    expect(cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general')).toBeUndefined();
    expect(
      cluster.kube.get('apps/v1', 'Deployment', 'karpenter', 'openshift-karpenter'),
    ).toBeDefined();
  });

  it('serves readiness and Prometheus metrics from the sidecar', async () => {
    const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
    expect(await ready.json()).toEqual({ status: 'ok' });
    const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
    expect(metrics).toMatch(
      /fleet_reconcile_duration_seconds_count\{[^}]*outcome="applied"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(/process_resident_memory_bytes\{[^}]*app="sidecar"/);
  });
});
