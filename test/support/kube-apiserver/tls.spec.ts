import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ClusterClient } from '../../../apps/sidecar/src/kube/cluster-client.js';
import { KubeApiServerEmulator } from './index.js';

// The sidecar's two ways to find its API server: a kubeconfig carrying the CA, and the
// in-cluster service-account files (token and ca.crt) plus KUBERNETES_SERVICE_HOST/PORT.
describe('the emulator serves HTTPS with its own CA', () => {
  const em = new KubeApiServerEmulator();
  const other = new KubeApiServerEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'emulator-tls-'));
  let saToken: string;

  beforeAll(async () => {
    await Promise.all([em.start(), other.start()]);
    saToken = em.addUser('system:serviceaccount:karpenter-fleet:karpenter-fleet-sidecar', [
      'system:serviceaccounts',
      'system:serviceaccounts:karpenter-fleet',
      'system:authenticated',
    ]);
    em.seed([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'sidecar-reads' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view-ns' },
        subjects: [
          { kind: 'ServiceAccount', name: 'karpenter-fleet-sidecar', namespace: 'karpenter-fleet' },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'view-ns' },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }],
      },
    ]);
  });
  afterAll(async () => {
    await Promise.all([em.stop(), other.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a kubeconfig with certificate-authority-data verifies the serving certificate', async () => {
    expect(em.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const kc = new KubeConfig();
    kc.loadFromString(em.kubeconfigYaml());
    expect(kc.getCurrentCluster()?.skipTLSVerify).toBeFalsy();
    const names = (await new ClusterClient(kc).list('v1', 'Namespace')).map(
      (n) => n.metadata?.name,
    );
    expect(names).toContain('kube-system');
  });

  it("another emulator's CA does not verify it", async () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      em
        .kubeconfigYaml()
        .replace(
          /certificate-authority-data: .*/,
          `certificate-authority-data: ${Buffer.from(other.caPem).toString('base64')}`,
        ),
    );
    const err = await new ClusterClient(kc).list('v1', 'Namespace').then(
      () => undefined,
      (e: unknown) => e,
    );
    const codes: string[] = [];
    for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as never)
      if (typeof e.code === 'string') codes.push(e.code);
    expect(codes).toContain('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('refuses plain HTTP on the TLS port', async () => {
    const status = await new Promise<number | string>((resolve) => {
      const req = httpGet(`${em.url.replace('https:', 'http:')}/version`, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message));
    });
    // Node's TLS server answers a plain-HTTP request with 400, like Go's "client sent an HTTP
    // request to an HTTPS server"; either way nothing is served.
    expect([400, 'ECONNRESET']).toContain(status);
  });

  it('in-cluster: the service-account token and ca.crt files authenticate and verify', async () => {
    const sa = join(dir, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), saToken);
    writeFileSync(join(sa, 'ca.crt'), em.caPem);
    writeFileSync(join(sa, 'namespace'), 'karpenter-fleet');
    const saved = { ...process.env };
    process.env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = new URL(em.url).port;
    try {
      const kc = new KubeConfig();
      kc.loadFromCluster(dir);
      expect(kc.getCurrentCluster()?.server).toBe(em.url);
      const client = new ClusterClient(kc);
      const ns = await client.read({ apiVersion: 'v1', kind: 'Namespace', name: 'default' });
      expect(ns?.metadata?.name).toBe('default');
      // The token names the service account, so what it may do is what RBAC grants it.
      await expect(client.list('v1', 'ConfigMap', { namespace: 'default' })).rejects.toMatchObject({
        code: 403,
      });
    } finally {
      process.env = saved;
    }
  });
});
