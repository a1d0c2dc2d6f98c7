import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeApiServerEmulator } from '@fleet/testing';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterClient } from './cluster-client.js';

describe('ClusterClient: every API-server request has a deadline', () => {
  const em = new KubeApiServerEmulator();
  let client: ClusterClient;

  beforeAll(async () => {
    await em.start();
    const kc = new KubeConfig();
    kc.loadFromString(em.kubeconfigYaml());
    // Short enough to wait out, long enough for the request to reach the emulator on a loaded
    // machine (at 2 s, a CI run once gave up before the emulator had seen it).
    client = new ClusterClient(kc, 4_000);
  });
  afterAll(() => em.stop());

  it('gives up on a request the API server never answers, and the next one works', async () => {
    const held = em.stallRequests('GET', '/api/v1/namespaces', 1);
    const started = Date.now();
    await expect(client.list('v1', 'Namespace')).rejects.toThrow(/timeout|abort/i);
    expect(held()).toBe(1);
    // Bounded by the deadline, not by the (never) answer; generous for a loaded machine.
    expect(Date.now() - started).toBeLessThan(12_000);
    const names = (await client.list('v1', 'Namespace')).map((n) => n.metadata?.name);
    expect(names).toContain('kube-system');
  });

  it('approves through /approval within the deadline too', async () => {
    const held = em.stallRequests(
      'GET',
      '/apis/certificates.k8s.io/v1/certificatesigningrequests/',
      1,
    );
    await expect(
      client.addCsrCondition('csr-nowhere', {
        type: 'Approved',
        status: 'True',
        reason: 'KarpenterCSRApprove',
        message: 'Auto approved by karpenter_machine_approver',
      }),
    ).rejects.toThrow(/timeout|abort/i);
    expect(held()).toBe(1);
  });
});
