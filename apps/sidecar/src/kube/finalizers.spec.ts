import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeApiServerEmulator } from '@fleet/testing';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterClient } from './cluster-client.js';
import { changeFinalizers } from './finalizers.js';

const OURS = 'fleet.karpenter.sh/test-cleanup';
const THEIRS = 'hypershift.openshift.io/karpenter-finalizer';
const target = { apiVersion: 'v1', kind: 'ConfigMap', name: 'held', namespace: 'default' };

describe('changeFinalizers on the emulated API server', () => {
  const server = new KubeApiServerEmulator();
  let client: ClusterClient;
  const finalizers = () => server.get('v1', 'ConfigMap', 'held', 'default')?.metadata?.finalizers;

  beforeAll(async () => {
    await server.start();
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfigYaml());
    client = new ClusterClient(kc, 10_000);
    server.seed([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'held', namespace: 'default', finalizers: [THEIRS, OURS] },
        data: { key: 'value' },
      },
    ]);
  });
  afterAll(() => server.stop());

  it('another controller’s change between our read and our write is not undone: 409, read again, decide again', async () => {
    const seen: string[][] = [];
    const result = await changeFinalizers(client, target, (current) => {
      seen.push(current);
      // The other controller removes its finalizer right after our first read.
      if (seen.length === 1)
        server.patch('v1', 'ConfigMap', 'held', 'default', { metadata: { finalizers: [OURS] } });
      return { result: 'released', finalizers: current.filter((f) => f !== OURS) };
    });
    expect(result).toBe('released');
    expect(seen).toEqual([[THEIRS, OURS], [OURS]]);
    // Without the resourceVersion the first write would have put THEIRS back.
    expect(finalizers() ?? []).toEqual([]);
    expect(server.get('v1', 'ConfigMap', 'held', 'default')?.data).toEqual({ key: 'value' });
  });

  it('an object that is gone is reported missing', async () => {
    expect(
      await changeFinalizers(client, { ...target, name: 'absent' }, () => ({ result: 'held' })),
    ).toBe('missing');
  });
});
