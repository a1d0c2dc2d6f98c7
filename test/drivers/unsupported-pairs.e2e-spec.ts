import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DRIVER_REGISTRY } from '@fleet/cloud-provider';
import pg from 'pg';
import {
  createTestDatabase,
  eventually,
  testQueuePrefix,
  type RequestLogEntry,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import {
  OCP_AWS_STANDALONE_INPUT,
  registerCluster,
  startSidecarProcess,
} from '../support/fleet-sidecar.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startWorker } from '../../apps/worker/src/main.js';

const REGISTER = `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } } }`;
const COUNT = `query { clusters(first: 1) { totalCount } }`;
const SUPPORTED = DRIVER_REGISTRY.map((d) => `${d.platform}/${d.topology}`).join(', ');

/**
 * A platform/topology pair without a driver is refused where it enters (registerCluster), and a
 * sidecar handed an order for one anyway (a cluster registered before the check, a row edited by
 * hand) says so and writes nothing to its cluster.
 */
describe('platform/topology pairs without a driver', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedCluster;
  let sidecar: RunningProcess | undefined;
  const prefix = testQueuePrefix();

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedCluster();
  });

  afterAll(async () => {
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it.each([
    ['CAPI', 'HOSTED', 'input.topology'],
    ['AZURE', 'HOSTED', 'input.topology'],
  ])('registerCluster refuses %s/%s naming %s', async (platform, topology, field) => {
    const before = await api.admin<{ clusters: { totalCount: number } }>(COUNT);
    const res = await api.admin(REGISTER, {
      input: {
        ...OCP_AWS_STANDALONE_INPUT,
        name: `c-${platform.toLowerCase()}-${topology.toLowerCase()}`,
        platform,
        topology,
        ...(topology === 'HOSTED' ? { managementCluster: 'mgmt-1', hcpNamespace: 'hcp-1' } : {}),
        ...(platform === 'CAPI' ? { clusterApiName: 'capi-1' } : {}),
      },
    });
    expect(res.data).toBeNull();
    expect(res.errors?.[0]?.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      field,
      reason: `no driver for platform ${platform} with topology ${topology} yet; supported platform/topology pairs: ${SUPPORTED}`,
    });
    expect(await api.admin(COUNT)).toEqual(before);
  });

  it('a sidecar handed an order for such a pair reports Degraded UnsupportedPlatform and writes nothing', async () => {
    const registered = await registerCluster(api.admin, { name: 'edited-by-hand' });
    // As if the row predates the check: the platform changes under the registered cluster, then
    // a new generation supersedes the registration order before any sidecar has taken it.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(
        `UPDATE "Cluster" SET platform = 'AZURE', topology = 'HOSTED' WHERE id = $1`,
        [registered.uid],
      );
    } finally {
      await client.end();
    }
    const bump = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { karpenter { generation } } }`,
      { id: registered.id },
    );
    expect(bump.data?.setKarpenter.karpenter.generation).toBe(2);
    await eventually(
      async () => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        try {
          const { rows } = await c.query<{ state: string }>(
            `SELECT state FROM "ReconcileRun" WHERE "clusterId" = $1 AND generation = 2`,
            [registered.uid],
          );
          return rows[0]?.state === 'DISPATCHED' ? true : undefined;
        } finally {
          await c.end();
        }
      },
      { timeoutMs: 15_000, what: 'generation 2 dispatched' },
    );

    const writes: RequestLogEntry[] = [];
    cluster.kube.onRequest((e) => {
      if (e.method !== 'GET') writes.push(e);
    });
    sidecar = startSidecarProcess(cluster, registered, { apiUrl: api.url, queuePrefix: prefix });

    const STATUS = `query($id: ID!) { cluster(id: $id) { platform status { observedGeneration conditions { type status reason message } } } }`;
    const status = await eventually(
      async () => {
        const res = await api.admin<{
          cluster: {
            platform: string;
            status: {
              observedGeneration: number;
              conditions: { type: string; status: string; reason: string; message: string }[];
            };
          };
        }>(STATUS, { id: registered.id });
        const s = res.data?.cluster.status;
        return s && s.observedGeneration === 2 ? res.data?.cluster : undefined;
      },
      { timeoutMs: 30_000, what: 'the sidecar reporting generation 2' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`);
    });
    expect(status.platform).toBe('AZURE');
    expect(status.status.conditions).toEqual(
      expect.arrayContaining([
        {
          type: 'Degraded',
          status: 'True',
          reason: 'UnsupportedPlatform',
          message: `no driver for platform AZURE with topology HOSTED; this sidecar supports ${SUPPORTED}`,
        },
        expect.objectContaining({
          type: 'Available',
          status: 'False',
          reason: 'UnsupportedPlatform',
        }),
      ]),
    );
    expect(writes).toEqual([]);
    expect(
      cluster.kube.get('config.openshift.io/v1', 'ClusterOperator', 'karpenter'),
    ).toBeUndefined();
  });
});
