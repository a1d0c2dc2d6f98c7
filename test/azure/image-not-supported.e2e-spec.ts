import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  eventually,
  testQueuePrefix,
  type RequestLogEntry,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startWorker } from '../../apps/worker/src/main.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import {
  startEmulatedAzureCluster,
  type EmulatedAzureCluster,
} from '../support/emulated-azure-cluster.js';

const GALLERY_IMAGE =
  '/resourceGroups/prod-west-q8m4d-rg/providers/Microsoft.Compute/galleries/gallery_prod_west_q8m4d/images/prod-west-q8m4d-gen2/versions/latest';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/**
 * The fixture cluster as the installer leaves it: its workers boot the cluster's gallery image,
 * which the OpenShift fork of karpenter-provider-azure cannot express. Through the whole fleet
 * (API, worker, a real sidecar process against the API-server and ARM emulators, with exactly
 * deploy/sidecar/azure's RBAC) enabling Karpenter ends in Degraded ImageNotSupported naming the
 * image and what would work, and the sidecar writes nothing to the cluster but the `karpenter`
 * ClusterOperator saying the same.
 */
describe('Azure: a cluster whose workers boot a gallery image is refused, untouched but for its ClusterOperator', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedAzureCluster;
  let sidecar: RunningProcess | undefined;
  const prefix = testQueuePrefix();

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedAzureCluster();
  });

  afterAll(async () => {
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('reports Degraded ImageNotSupported and writes nothing but the ClusterOperator', async () => {
    const registered = await registerCluster(api.admin, {
      name: 'azure-gallery',
      platform: 'AZURE',
      topology: 'STANDALONE',
      region: 'eastus',
      infraID: 'prod-west-q8m4d',
    });
    const enabled = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { karpenter { generation } } }`,
      { id: registered.id },
    );
    const generation = enabled.data?.setKarpenter.karpenter.generation;
    expect(generation).toBe(2);

    // Every object of every kind the API server serves, with its resourceVersion.
    const versions = () =>
      new Map(
        cluster.kube
          .allDefs()
          .flatMap((d) =>
            cluster.kube
              .list(d.group ? `${d.group}/${d.version}` : d.version, d.kind)
              .map((o) => [
                `${o.apiVersion} ${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`,
                o.metadata?.resourceVersion,
              ]),
          ),
      );
    const before = versions();
    const writes: RequestLogEntry[] = [];
    cluster.kube.onRequest((e) => {
      if (e.method !== 'GET') writes.push(e);
    });
    sidecar = startSidecarProcess(cluster, registered, { apiUrl: api.url, queuePrefix: prefix });

    const STATUS = `query($id: ID!) { cluster(id: $id) { status { observedGeneration conditions { type status reason message } } } }`;
    const status = await eventually(
      async () => {
        const res = await api.admin<{
          cluster: { status: { observedGeneration: number; conditions: Condition[] } | null };
        }>(STATUS, { id: registered.id });
        const s = res.data?.cluster.status;
        return s && s.observedGeneration === generation ? s : undefined;
      },
      { timeoutMs: 30_000, what: `the sidecar reporting generation ${generation}` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`);
    });

    const degraded = status.conditions.find((c) => c.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'ImageNotSupported' });
    // Names the MachineSet, the image and its field, and what would make the cluster work.
    expect(degraded?.message).toContain('prod-west-q8m4d-worker-eastus1');
    expect(degraded?.message).toContain(GALLERY_IMAGE);
    expect(degraded?.message).toContain('resourceID');
    expect(degraded?.message).toContain('azureopenshift');
    expect(status.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'Available',
          status: 'False',
          reason: 'ImageNotSupported',
        }),
      ]),
    );

    // Nothing written but the karpenter ClusterOperator (as on AWS), which says why in
    // `oc get co`: every other object as it was.
    expect([...new Set(writes.map((w) => `${w.method} ${w.path}`))]).toEqual([
      'PATCH /apis/config.openshift.io/v1/clusteroperators/karpenter',
      'PATCH /apis/config.openshift.io/v1/clusteroperators/karpenter/status',
    ]);
    const operator = cluster.kube.get('config.openshift.io/v1', 'ClusterOperator', 'karpenter');
    expect(
      (operator?.status as { conditions?: Condition[] } | undefined)?.conditions?.find(
        (c) => c.type === 'Degraded',
      ),
    ).toMatchObject({ status: 'True', reason: 'ImageNotSupported' });
    const after = versions();
    for (const key of [...after.keys()].filter((k) => k.includes(' ClusterOperator ')))
      after.delete(key);
    expect(after).toEqual(before);
    // ARM was asked nothing either: the image is refused from the MachineSet alone.
    expect(cluster.arm.requests).toEqual([]);
  });
});
