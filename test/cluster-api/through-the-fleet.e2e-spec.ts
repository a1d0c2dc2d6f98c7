import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  eventually,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { parseAllDocuments } from 'yaml';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import {
  CAPI_CLUSTER,
  startEmulatedCapiCluster,
  type EmulatedCapiCluster,
} from '../support/capi-aws-workload.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { GENERAL_NODEPOOL } from './harness.js';

const REGISTER = `mutation($input: RegisterClusterInput!) {
  registerCluster(input: $input) { bootstrapManifest cluster { id uid clusterApiName clusterApiNamespace infrastructureProvider } } }`;
const SET = `mutation($id: ID!, $input: SetKarpenterInput!) {
  setKarpenter(clusterId: $id, input: $input) { karpenter { generation allowedInstanceTypes } } }`;
const OVERRIDES = `mutation($id: ID!, $input: NodeClassOverridesInput!) {
  setNodeClassOverrides(clusterId: $id, input: $input) { karpenter { generation } } }`;
const UPSERT = `mutation($id: ID!, $input: UpsertNodePoolInput!) {
  upsertNodePool(clusterId: $id, input: $input) { karpenter { generation } } }`;
const STATUS = `query($id: ID!) { cluster(id: $id) { karpenter { generation } status { observedGeneration conditions { type status reason message } clusterAutoscaler { mode observed observedKinds } } } }`;

const CAPI_INPUT = {
  platform: 'CAPI',
  topology: 'STANDALONE',
  region: 'us-east-1',
  clusterApiName: CAPI_CLUSTER.name,
  clusterApiNamespace: CAPI_CLUSTER.namespace,
  infrastructureProvider: 'aws',
  managementCluster: 'mgmt-east',
};

/**
 * A Cluster API cluster through the whole fleet: registered through the API (its bootstrap
 * manifest tells the sidecar where the Cluster is and mounts the management kubeconfig), desired
 * state validated at the API naming the field, and the built sidecar process on the workload
 * cluster writing the MachineDeployments on the management cluster.
 */
describe('Cluster API through the fleet: registerCluster, setKarpenter, the sidecar process', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let pair: EmulatedCapiCluster;
  let sidecar: RunningProcess | undefined;
  const prefix = testQueuePrefix();

  beforeAll(async () => {
    db = await createTestDatabase();
    [api, worker, pair] = await Promise.all([
      startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix }),
      startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' }),
      startEmulatedCapiCluster(),
    ]);
  });
  afterAll(async () => {
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await pair?.stop();
    await db?.drop();
  });

  it('registerCluster refuses a CAPI cluster without its Cluster, and CAPI fields on another platform, naming the field', async () => {
    const missing = await api.admin(REGISTER, {
      input: { ...CAPI_INPUT, name: 'no-cluster', clusterApiName: undefined },
    });
    expect(missing.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.clusterApiName',
    });
    const elsewhere = await api.admin(REGISTER, {
      input: {
        name: 'aws-with-capi',
        platform: 'AWS',
        topology: 'STANDALONE',
        region: 'us-east-1',
        clusterApiName: 'x',
      },
    });
    expect(elsewhere.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.clusterApiName',
      reason: 'is only for CAPI clusters',
    });
    const provider = await api.admin(REGISTER, {
      input: { ...CAPI_INPUT, name: 'gcp', infrastructureProvider: 'gcp' },
    });
    expect(provider.errors?.[0]?.extensions).toMatchObject({
      field: 'input.infrastructureProvider',
    });
  });

  it('a registered CAPI cluster gets a bootstrap manifest naming its Cluster and mounting the management kubeconfig', async () => {
    const res = await api.admin<{
      registerCluster: {
        bootstrapManifest: string;
        cluster: {
          clusterApiName: string;
          clusterApiNamespace: string;
          infrastructureProvider: string;
        };
      };
    }>(REGISTER, { input: { ...CAPI_INPUT, name: 'manifest-only' } });
    expect(res.data?.registerCluster.cluster).toMatchObject({
      clusterApiName: CAPI_CLUSTER.name,
      clusterApiNamespace: CAPI_CLUSTER.namespace,
      infrastructureProvider: 'aws',
    });
    const docs = parseAllDocuments(res.data!.registerCluster.bootstrapManifest).map(
      (d) => d.toJS() as { kind: string; stringData?: Record<string, string>; spec?: unknown },
    );
    const secret = docs.find((d) => d.kind === 'Secret')!;
    expect(secret.stringData).toMatchObject({
      CLUSTER_API_CLUSTER_NAME: CAPI_CLUSTER.name,
      CLUSTER_API_NAMESPACE: CAPI_CLUSTER.namespace,
      MANAGEMENT_KUBECONFIG: '/var/run/secrets/karpenter-fleet/management/kubeconfig',
    });
    const deployment = docs.find((d) => d.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { volumes: { secret: { secretName: string } }[] } } };
    };
    expect(deployment.spec.template.spec.volumes).toEqual([
      {
        name: 'management-kubeconfig',
        secret: { secretName: 'karpenter-fleet-management-kubeconfig' },
      },
    ]);
  });

  it('enable with DISABLE through the API: the sidecar on the workload cluster writes the MachineDeployments on the management cluster and reports', async () => {
    const registered = await registerCluster(api.admin, { ...CAPI_INPUT, name: 'capi-east' });

    // Desired state the Cluster API driver cannot take is refused at the API.
    const badType = await api.admin(SET, {
      id: registered.id,
      input: { allowedInstanceTypes: ['m6i xlarge'] },
    });
    expect(badType.errors?.[0]?.extensions).toMatchObject({
      field: 'input.allowedInstanceTypes[0]',
    });
    const overrides = await api.admin(OVERRIDES, {
      id: registered.id,
      input: { tags: { team: 'a' } },
    });
    expect(overrides.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: expect.stringMatching(/^input\.tags/),
    });

    expect((await api.admin(UPSERT, { id: registered.id, input: GENERAL_NODEPOOL })).errors).toBe(
      undefined,
    );
    const set = await api.admin<{
      setKarpenter: { karpenter: { generation: number; allowedInstanceTypes: string[] } };
    }>(SET, {
      id: registered.id,
      input: {
        enabled: true,
        clusterAutoscalerMode: 'DISABLE',
        allowedInstanceTypes: ['m6i.xlarge'],
      },
    });
    expect(set.data?.setKarpenter.karpenter.allowedInstanceTypes).toEqual(['m6i.xlarge']);
    const generation = set.data!.setKarpenter.karpenter.generation;

    sidecar = startSidecarProcess(
      {
        sidecarEnv: {
          ...pair.env,
          KUBECONFIG: pair.workloadKubeconfigPath,
          WORKLOAD_KUBECONFIG: '',
          MANAGEMENT_KUBECONFIG: pair.managementKubeconfigPath,
          CLUSTER_API_CLUSTER_NAME: CAPI_CLUSTER.name,
          CLUSTER_API_NAMESPACE: CAPI_CLUSTER.namespace,
        },
      },
      registered,
      { apiUrl: api.url, queuePrefix: prefix },
    );
    const status = await eventually(
      async () => {
        const res = await api.admin<{
          cluster: {
            status: {
              observedGeneration: number;
              conditions: { type: string; status: string; reason: string; message: string }[];
              clusterAutoscaler: { mode: string; observed: string; observedKinds: string[] | null };
            };
          };
        }>(STATUS, { id: registered.id });
        const s = res.data?.cluster.status;
        return s && s.observedGeneration >= generation ? s : undefined;
      },
      { timeoutMs: 30_000, what: `the sidecar reporting generation ${generation}` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`);
    });
    expect(status.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Degraded', status: 'False' })]),
    );
    // The kinds through which the Cluster Autoscaler is still in play: the worker
    // MachineDeployments' size annotations until DISABLE has removed them, none after.
    expect(status.clusterAutoscaler).toMatchObject({ mode: 'DISABLE' });
    expect(status.clusterAutoscaler.observedKinds).toEqual(
      status.clusterAutoscaler.observed === 'Removed' ? [] : ['MachineDeployment'],
    );
    const mds = pair.management
      .list('cluster.x-k8s.io/v1beta1', 'MachineDeployment', CAPI_CLUSTER.namespace)
      .filter((md) => md.metadata?.labels?.['fleet.karpenter.sh/managed-by'])
      .map((md) => md.metadata?.name)
      .sort();
    expect(mds).toEqual([
      'capi-east-karpenter-m6i-xlarge-us-east-1a',
      'capi-east-karpenter-m6i-xlarge-us-east-1b',
      'capi-east-karpenter-m6i-xlarge-us-east-1c',
    ]);
    expect(pair.workload.get('karpenter.sh/v1', 'NodePool', 'general')?.spec).toMatchObject({
      template: { spec: { nodeClassRef: { kind: 'ClusterAPINodeClass', name: 'default' } } },
    });
  });

  it("MIGRATE: the size annotations come back, the sidecar reports a migration plan for the worker groups (not the fleet's own), and applying it allows their instance types", async () => {
    const clusters = await api.admin<{ clusters: { nodes: { id: string; name: string }[] } }>(
      `query { clusters { nodes { id name } } }`,
    );
    const id = clusters.data!.clusters.nodes.find((c) => c.name === 'capi-east')!.id;
    const set = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(SET, {
      id,
      input: { clusterAutoscalerMode: 'MIGRATE' },
    });
    expect(set.errors).toBeUndefined();
    const plan = await eventually(
      async () => {
        const res = await api.admin<{
          migrationPlan: {
            plan: {
              nodePools: { name: string; replaces: string[]; spec: Record<string, unknown> }[];
            } | null;
          };
        }>(
          `query($id: ID!) { migrationPlan(clusterId: $id) { plan { nodePools { name replaces spec } } } }`,
          { id },
        );
        return res.data?.migrationPlan.plan ?? undefined;
      },
      { timeoutMs: 30_000, what: 'a migration plan for the CAPI cluster' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`);
    });
    expect(plan.nodePools.map((p) => p.replaces)).toEqual([
      [
        'MachineDeployment/capi-east-c6i-us-east-1a',
        'MachineDeployment/capi-east-m6i-us-east-1a',
        'MachineDeployment/capi-east-m6i-us-east-1b',
      ],
    ]);
    expect(plan.nodePools[0]!.spec).toMatchObject({
      template: { spec: { nodeClassRef: { kind: 'ClusterAPINodeClass', name: 'default' } } },
    });

    // Applied: the plan's instance types become allowedInstanceTypes, so the fleet renders a
    // MachineDeployment for each (Karpenter launches only those on Cluster API).
    const applied = await api.admin<{
      applyMigrationPlan: {
        karpenter: {
          generation: number;
          allowedInstanceTypes: string[];
          clusterAutoscalerMode: string;
        };
        nodePools: { name: string }[];
      };
    }>(
      `mutation($id: ID!, $g: Int!) { applyMigrationPlan(clusterId: $id, expectedGeneration: $g) {
        karpenter { generation allowedInstanceTypes clusterAutoscalerMode } nodePools { name } } }`,
      { id, g: set.data!.setKarpenter.karpenter.generation },
    );
    expect(applied.errors).toBeUndefined();
    expect(applied.data!.applyMigrationPlan.karpenter).toMatchObject({
      allowedInstanceTypes: ['c6i.2xlarge', 'm6i.xlarge'],
      clusterAutoscalerMode: 'MIGRATE',
    });
    expect(applied.data!.applyMigrationPlan.nodePools.map((p) => p.name)).toEqual([
      'c6i',
      'general',
    ]);
    await eventually(
      () =>
        pair.management.get(
          'cluster.x-k8s.io/v1beta1',
          'MachineDeployment',
          'capi-east-karpenter-c6i-2xlarge-us-east-1a',
          CAPI_CLUSTER.namespace,
        ),
      { timeoutMs: 30_000, what: 'the fleet MachineDeployment for c6i.2xlarge' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`);
    });
  });
});
