import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CLUSTER_CLEANUP_FINALIZER } from '@fleet/cloud-provider';
import {
  CAPI_CLUSTER,
  KubeApiServerEmulator,
  startEmulatedCapiCluster,
  type EmulatedCapiCluster,
} from '@fleet/testing';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { ClusterClient } from '../kube/cluster-client.js';
import { ClusterFinalizer } from './cluster-finalizer.js';

const V1B1 = 'cluster.x-k8s.io/v1beta1';
const { name, namespace } = CAPI_CLUSTER;
const OTHER = 'cluster.cluster.x-k8s.io';

describe('ClusterFinalizer on the emulated management API server (Cluster API CRDs)', () => {
  let pair: EmulatedCapiCluster;
  let management: KubeApiServerEmulator;
  let finalizer: ClusterFinalizer;
  const cluster = () => management.get(V1B1, 'Cluster', name, namespace);

  beforeAll(async () => {
    pair = await startEmulatedCapiCluster();
    management = pair.management;
    const kc = new KubeConfig();
    kc.loadFromString(management.kubeconfigYaml(namespace));
    finalizer = new ClusterFinalizer(
      new ClusterClient(kc, 10_000),
      { namespace, clusterName: name },
      // The cache is the API server itself here: what a synced watch would hold.
      () => management.get(V1B1, 'Cluster', name, namespace),
      pino({ level: 'silent' }),
    );
  });
  afterAll(() => pair?.stop());

  it("adds its finalizer beside another controller's, touching nothing but metadata.finalizers", async () => {
    management.patch(V1B1, 'Cluster', name, namespace, { metadata: { finalizers: [OTHER] } });
    const before = cluster()!;
    await expect(finalizer.hold()).resolves.toBe('held');
    const after = cluster()!;
    expect(after.metadata?.finalizers).toEqual([OTHER, CLUSTER_CLEANUP_FINALIZER]);
    expect(after.spec).toEqual(before.spec);
    expect(after.metadata?.generation).toBe(before.metadata?.generation);
    // Held already: nothing written.
    const rv = after.metadata?.resourceVersion;
    await expect(finalizer.hold()).resolves.toBe('held');
    expect(cluster()?.metadata?.resourceVersion).toBe(rv);
    expect(finalizer.deleting()).toBe(false);
  });

  it('on a deleting Cluster it adds nothing and says so; releasing removes only its own', async () => {
    management.delete(V1B1, 'Cluster', name, namespace);
    expect(finalizer.deleting()).toBe(true);
    await expect(finalizer.hold()).resolves.toBe('deleting');
    await finalizer.release();
    expect(cluster()?.metadata?.finalizers).toEqual([OTHER]);
    // The other controller finishes: the Cluster goes.
    management.patch(V1B1, 'Cluster', name, namespace, { metadata: { finalizers: null } });
    expect(cluster()).toBeUndefined();
    await expect(finalizer.hold()).resolves.toBe('missing');
    await expect(finalizer.release()).resolves.toBeUndefined();
  });

  it('a write by someone else between its read and its patch is not lost (409, read again)', async () => {
    management.create({
      apiVersion: V1B1,
      kind: 'Cluster',
      metadata: { name, namespace },
      spec: {},
    });
    // Someone else writes the Cluster right after the finalizer's read, once.
    let raced = false;
    const off = management.onRequest((e) => {
      if (raced || e.method !== 'GET' || !e.path.includes(`/clusters/${name}`)) return;
      raced = true;
      management.patch(V1B1, 'Cluster', name, namespace, {
        metadata: { finalizers: [OTHER] },
      });
    });
    try {
      await expect(finalizer.hold()).resolves.toBe('held');
    } finally {
      off();
    }
    expect(raced).toBe(true);
    expect(cluster()?.metadata?.finalizers).toEqual([OTHER, CLUSTER_CLEANUP_FINALIZER]);
  });
});
